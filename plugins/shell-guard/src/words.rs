//! Splitting a shell command line into simple commands and words, as far as a guard needs:
//! quotes, escapes, the chain operators, and `$(...)`/backtick substitutions (returned as
//! commands of their own so that they are checked too, and left in their word as `$(...)`, so
//! that a word made by one is seen to be unknown before it runs).

/// What a substitution (`$(...)`, backticks) leaves in its word: the rules read it as an
/// expansion whose text cannot be known before the command runs.
const SUBSTITUTION: &str = "$(...)";

/// One simple command: its words, and the targets of its output redirections.
#[derive(Debug, Default, PartialEq)]
pub struct Simple {
    pub words: Vec<String>,
    pub redirects: Vec<String>,
}

/// Split `line` into simple commands. Substitutions become commands of their own.
pub fn split(line: &str) -> Vec<Simple> {
    let line = shell_syntax::joined(line);
    let mut out = Vec::new();
    let mut nested = Vec::new();
    let mut cur = Simple::default();
    let mut word = String::new();
    let mut in_word = false;
    let mut redirect_next = false;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;

    // Ends the current word; a word after `>` is a redirection target, not an argument.
    let finish_word =
        |cur: &mut Simple, word: &mut String, in_word: &mut bool, redirect: &mut bool| {
            if *in_word {
                let w = std::mem::take(word);
                if *redirect {
                    cur.redirects.push(w);
                    *redirect = false;
                } else {
                    cur.words.push(w);
                }
                *in_word = false;
            }
        };

    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                word.push(chars[i + 1]);
                in_word = true;
                i += 2;
                continue;
            }
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    } else if chars[i] == '$' && chars.get(i + 1) == Some(&'(') {
                        let (inner, end) = balanced(&chars, i + 2);
                        nested.push(inner);
                        word.push_str(SUBSTITUTION);
                        i = end;
                        continue;
                    } else if chars[i] == '`' {
                        let (inner, end) = backtick(&chars, i + 1);
                        nested.push(inner);
                        word.push_str(SUBSTITUTION);
                        i = end;
                        continue;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                let (inner, end) = balanced(&chars, i + 2);
                nested.push(inner);
                word.push_str(SUBSTITUTION);
                in_word = true;
                i = end;
                continue;
            }
            '`' => {
                let (inner, end) = backtick(&chars, i + 1);
                nested.push(inner);
                word.push_str(SUBSTITUTION);
                in_word = true;
                i = end;
                continue;
            }
            // An extglob group, `!(x)`, `@(a|b)`: part of the word, not a subshell.
            '(' if in_word && word.ends_with(['?', '*', '+', '@', '!']) => {
                let (inner, end) = balanced(&chars, i + 1);
                word.push('(');
                word.push_str(&inner);
                word.push(')');
                i = end;
                continue;
            }
            ';' | '&' | '|' | '\n' | '(' | ')' if !(c == '&' && is_fd_dup(&chars, i)) => {
                finish_word(&mut cur, &mut word, &mut in_word, &mut redirect_next);
                if !cur.words.is_empty() || !cur.redirects.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                redirect_next = false;
            }
            '>' => {
                // `2>x`, `1>>x`: the digits before `>` are a descriptor, not a word.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                finish_word(&mut cur, &mut word, &mut in_word, &mut redirect_next);
                while chars.get(i + 1) == Some(&'>') || chars.get(i + 1) == Some(&'|') {
                    i += 1;
                }
                if chars.get(i + 1) == Some(&'&') {
                    // `>&2`: duplicate a descriptor, no file.
                    i += 2;
                    while chars
                        .get(i)
                        .is_some_and(|d| d.is_ascii_digit() || *d == '-')
                    {
                        i += 1;
                    }
                    continue;
                }
                redirect_next = true;
            }
            c if c.is_whitespace() => {
                finish_word(&mut cur, &mut word, &mut in_word, &mut redirect_next);
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
        i += 1;
    }
    finish_word(&mut cur, &mut word, &mut in_word, &mut redirect_next);
    if !cur.words.is_empty() || !cur.redirects.is_empty() {
        out.push(cur);
    }
    for inner in nested {
        out.extend(split(&inner));
    }
    out
}

fn is_fd_dup(chars: &[char], i: usize) -> bool {
    i > 0 && chars[i - 1] == '>'
}

/// The text of `$(` ... `)` starting after the `(`, and the index after the closing `)`.
fn balanced(chars: &[char], start: usize) -> (String, usize) {
    let mut depth = 1;
    let mut i = start;
    while i < chars.len() {
        match chars[i] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return (chars[start..i].iter().collect(), i + 1);
                }
            }
            _ => {}
        }
        i += 1;
    }
    (chars[start..].iter().collect(), chars.len())
}

/// The text between backticks starting at `start`, and the index after the closing one.
fn backtick(chars: &[char], start: usize) -> (String, usize) {
    let end = chars[start..]
        .iter()
        .position(|c| *c == '`')
        .map_or(chars.len(), |p| start + p);
    (
        chars[start..end].iter().collect(),
        (end + 1).min(chars.len()),
    )
}

/// Quote a word for a shell line, so an argv list can be checked like a command line.
pub fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=~:,+@%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
