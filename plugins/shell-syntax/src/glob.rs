//! Globs and braces as the shell reads them in a word: whether a word holds one, and whether a
//! glob may match a name, for gates that compare paths a command names with the places they
//! guard (`rm -rf /e*c` may be `/etc`; `tee .env{rc,}` writes `.envrc`).

/// Whether `word` holds a glob: `*`, `?` or `[` (which cover extglob's `*(...)` and `?(...)`),
/// or extglob's `@(...)`, `+(...)`, `!(...)`.
pub fn has_glob(word: &str) -> bool {
    word.contains(['*', '?', '[']) || extglob(word)
}

/// Whether `word` holds an extglob group other than `*(...)` and `?(...)`: `@(`, `+(`, `!(`.
pub fn extglob(word: &str) -> bool {
    ["@(", "+(", "!("].iter().any(|g| word.contains(g))
}

/// `{a,b}` or `{1..3}` somewhere in `word`.
pub fn braces(word: &str) -> bool {
    word.split('{').skip(1).any(|after| {
        after
            .split('}')
            .next()
            .is_some_and(|inner| inner.contains(',') || inner.contains(".."))
            && after.contains('}')
    })
}

/// One piece of a glob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// `*`: any run of characters.
    Star,
    /// `?` or a bracket expression: any one character (what the brackets hold is not read,
    /// which only matches more).
    One,
    /// This character.
    Char(char),
}

/// Whether the glob `pattern` may match the name `name` (one path component).
pub fn glob(pattern: &str, name: &str) -> bool {
    let tokens = tokens(pattern);
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    // The last `*` seen, and where in `name` it is tried to end: moved on when what follows
    // does not match, so that the match takes time linear in the two lengths' product.
    let mut star: Option<(usize, usize)> = None;
    while let Some(&c) = name.get(n) {
        match tokens.get(p) {
            Some(Token::Star) => {
                star = Some((p, n));
                p += 1;
            }
            Some(Token::One) => {
                p += 1;
                n += 1;
            }
            Some(Token::Char(t)) if *t == c => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((at, from)) => {
                    p = at + 1;
                    n = from + 1;
                    star = Some((at, from + 1));
                }
                None => return false,
            },
        }
    }
    tokens
        .get(p..)
        .unwrap_or_default()
        .iter()
        .all(|t| *t == Token::Star)
}

fn tokens(pattern: &str) -> Vec<Token> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        out.push(match c {
            '*' => Token::Star,
            '?' => Token::One,
            '[' => {
                // `[]x]` and `[!]x]`: a `]` first is one of the characters.
                let first = i + usize::from(matches!(chars.get(i).copied(), Some('!' | '^')));
                let close = chars
                    .get(first + 1..)
                    .and_then(|rest| rest.iter().position(|c| *c == ']'));
                match close {
                    Some(close) => {
                        i = first + 1 + close + 1;
                        Token::One
                    }
                    None => Token::Char('['),
                }
            }
            c => Token::Char(c),
        });
    }
    out
}

/// The words the braces of `word` expand to (`.env{rc,}` → `.envrc`, `.env`), as bash expands
/// them, a group at a time; a sequence (`{1..3}`) becomes `*`, which matches what it would
/// give. `None` past [`MAX_EXPANSIONS`] words, groups nested past a few levels, or a word
/// longer than [`MAX_BRACED`]: the caller cannot tell what it names.
pub fn expand_braces(word: &str) -> Option<Vec<String>> {
    if word.len() > MAX_BRACED && word.contains('{') {
        return None;
    }
    let mut out = Vec::new();
    expand_into(word, &mut out, 0)?;
    Some(out)
}

/// The longest word with braces [`expand_braces`] reads (finding groups takes time quadratic
/// in a run of unclosed braces).
pub const MAX_BRACED: usize = 1024;

/// Most words [`expand_braces`] gives.
pub const MAX_EXPANSIONS: usize = 64;

/// Expand the first group of `word` (and the rest, recursively) into `out`.
fn expand_into(word: &str, out: &mut Vec<String>, depth: u32) -> Option<()> {
    if depth > 8 {
        return None;
    }
    let Some((open, close)) = first_group(word) else {
        if out.len() >= MAX_EXPANSIONS {
            return None;
        }
        out.push(word.to_owned());
        return Some(());
    };
    let (before, inner, after) = (
        word.get(..open)?,
        word.get(open + 1..close)?,
        word.get(close + 1..)?,
    );
    if !inner.contains(',') {
        // A sequence, `{a..z}`.
        return expand_into(&format!("{before}*{after}"), out, depth + 1);
    }
    for alternative in split_top(inner) {
        expand_into(&format!("{before}{alternative}{after}"), out, depth + 1)?;
    }
    Some(())
}

/// Where the first brace group of `word` that expands (`{a,b}`, `{1..3}`) opens and closes.
fn first_group(word: &str) -> Option<(usize, usize)> {
    let bytes = word.as_bytes();
    let mut start = 0;
    while let Some(open) = word.get(start..)?.find('{').map(|at| at + start) {
        let mut depth = 0;
        for (at, &b) in bytes.iter().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = word.get(open + 1..at)?;
                        if split_top(inner).len() > 1 || inner.contains("..") {
                            return Some((open, at));
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        start = open + 1;
    }
    None
}

/// `inner` split at its commas outside nested braces.
fn split_top(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(inner.get(from..at).unwrap_or_default());
                from = at + 1;
            }
            _ => {}
        }
    }
    parts.push(inner.get(from..).unwrap_or_default());
    parts
}

#[cfg(test)]
mod tests {
    use super::{expand_braces, glob, has_glob};

    #[test]
    fn braces_expand_as_bash_expands_them() {
        let expand = |w: &str| expand_braces(w).unwrap_or_default();
        assert_eq!(expand(".env{rc,}"), [".envrc", ".env"]);
        assert_eq!(expand("{.git,x}/config"), [".git/config", "x/config"]);
        assert_eq!(expand("a{b,c{d,e}}"), ["ab", "acd", "ace"]);
        assert_eq!(expand("log{1..3}"), ["log*"]);
        assert_eq!(expand("{x}"), ["{x}"], "no comma: no expansion");
        assert_eq!(expand("plain"), ["plain"]);
        assert_eq!(expand_braces(&"{a,b}".repeat(10)), None, "past the limit");
        assert_eq!(expand_braces(&"{".repeat(5000)), None, "too long to read");
        assert!(has_glob(".@(git)") && !has_glob("a(b)"));
        assert!(glob(".gi?", ".git") && !glob("x*", ".git"));
    }
}
