//! Splitting a shell command line into simple commands and words, as far as a guard needs:
//! quotes, escapes, the chain operators, redirections, and `$(...)`/backtick substitutions and
//! `<(...)`/`>(...)` process substitutions (returned as commands of their own so that they are
//! checked too, and left in their word as `$(...)`, so that a word made by one is seen to be
//! unknown before it runs).

use shell_syntax::{Redirected, is_descriptor, redirection, until_close};

/// What a substitution (`$(...)`, backticks) leaves in its word: the rules read it as an
/// expansion whose text cannot be known before the command runs.
const SUBSTITUTION: &str = "$(...)";

/// One simple command: its words, the targets of its output redirections, and the here-string
/// it reads on standard input.
#[derive(Debug, Default, PartialEq)]
pub struct Simple {
    /// Its words, redirections left out.
    pub words: Vec<String>,
    /// The files it writes by redirection (`>`, `>>`, `>&FILE`, `<>`).
    pub redirects: Vec<String>,
    /// The text of its here-string (`<<< WORD`), when the last of its input redirections is
    /// one; else what it reads comes from a pipe or a file the gate cannot see.
    pub here: Option<String>,
}

impl Simple {
    /// Add the finished `word`, which follows the redirection operator `after`, if any.
    fn add(&mut self, word: String, after: Option<Redirected>) {
        match after {
            None => self.words.push(word),
            Some(Redirected::Duplicate) if is_descriptor(&word) => {}
            Some(Redirected::Output | Redirected::Duplicate) => self.redirects.push(word),
            Some(Redirected::ReadWrite) => {
                self.redirects.push(word);
                self.here = None;
            }
            Some(Redirected::Input) => self.here = None,
            Some(Redirected::HereString) => self.here = Some(word),
        }
    }
}

/// Split `line` into simple commands. Substitutions become commands of their own.
pub fn split(line: &str) -> Vec<Simple> {
    let line = shell_syntax::joined(line);
    let mut out = Vec::new();
    let mut nested = Vec::new();
    let mut cur = Simple::default();
    let mut word = String::new();
    let mut in_word = false;
    // The redirection operator the next word follows.
    let mut after: Option<Redirected> = None;
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;

    // Ends the current word; a word after `>` or `<` is a redirection's, not an argument.
    let finish_word = |cur: &mut Simple,
                       word: &mut String,
                       in_word: &mut bool,
                       after: &mut Option<Redirected>| {
        if std::mem::take(in_word) {
            cur.add(std::mem::take(word), after.take());
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
            // A command substitution, or a process substitution (`<(...)`, `>(...)`): its
            // command runs, and what it leaves in the word cannot be known.
            '$' | '<' | '>' if chars.get(i + 1) == Some(&'(') => {
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
                finish_word(&mut cur, &mut word, &mut in_word, &mut after);
                if !cur.words.is_empty() || !cur.redirects.is_empty() || cur.here.is_some() {
                    out.push(std::mem::take(&mut cur));
                }
                after = None;
            }
            '>' | '<' => {
                // `2>x`, `0<x`: the digits before the operator are a descriptor, not a word.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                finish_word(&mut cur, &mut word, &mut in_word, &mut after);
                let head: String = chars[i..].iter().take(3).collect();
                let (what, len) = redirection(&head);
                after = Some(what);
                i += len;
                continue;
            }
            c if c.is_whitespace() => {
                finish_word(&mut cur, &mut word, &mut in_word, &mut after);
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
        i += 1;
    }
    finish_word(&mut cur, &mut word, &mut in_word, &mut after);
    if !cur.words.is_empty() || !cur.redirects.is_empty() || cur.here.is_some() {
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

/// The text of `$(` ... `)` starting after the `(`, and the index after the closing `)`, read
/// as [`until_close`] reads it (a quoted `)` does not close it).
fn balanced(chars: &[char], start: usize) -> (String, usize) {
    let mut rest = chars.get(start..).unwrap_or_default().iter().copied();
    let inner = until_close(&mut rest);
    (inner, chars.len() - rest.len())
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
