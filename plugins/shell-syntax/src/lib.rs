//! How the standard gates read a command line's words: a program's options as getopt reads
//! them ([`options`]) and the wrappers that run another command with its own options
//! ([`wrappers`]: `sudo`, `env -S`, `timeout`, `xargs`, the shells; [`launchers`]: `unshare`,
//! `ssh`, `systemd-run`, `bwrap` and the other programs made to start one), and the options
//! that make an ordinary program run a command ([`smuggled`]: `tar --to-command`, `rsync -e`,
//! `git -c core.sshCommand`, `sed`'s `e`, `awk`'s `system()`). `shell-guard` and `approval`
//! read a command the same way through this one crate, so a fix lands in both; so is how a
//! line is cut into simple commands and words ([`split`]), where a substitution ends
//! ([`until_close`]), what a redirection does with its word ([`redirection`]), and where a
//! command's program is ([`program_start`]), and which environment variables it sets change what
//! runs ([`environment`]), and which files a program writes ([`writes`]).

pub mod environment;
pub mod glob;
pub mod launchers;
pub mod options;
mod parallel;
mod patches;
mod scripts;
pub mod smuggled;
pub mod split;
mod ssh;
#[cfg(test)]
mod testing;
pub mod wrappers;
pub mod writes;

/// `NAME=value` (also `NAME+=value`, `NAME[i]=value`), as in `FOO=1 cmd`: an assignment, not
/// a program.
pub fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = match name.split_once('[') {
        Some((name, index)) if index.ends_with(']') => name,
        Some(_) => return false,
        None => name,
    };
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Words of shell grammar that stand where a program would.
const GRAMMAR: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "coproc",
];

/// Words that open a compound command, which `coproc NAME` may run.
const COMPOUND: &[&str] = &[
    "{", "if", "while", "until", "for", "case", "select", "[[", "((",
];

/// Where the program of the simple command `words` is: after shell grammar (`{`, `if`, `!`...),
/// assignments (`FOO=1 cmd`), and the name that `function NAME` or `coproc NAME` gives a
/// compound command (`function f { rm -rf ~; }`, `coproc c { ...; }`), so that the commands of
/// its body are read as commands. `words.len()` when there is none.
pub fn program_start(words: &[String]) -> usize {
    let mut at = 0;
    while let Some(word) = words.get(at) {
        let names_compound = words
            .get(at + 2)
            .is_some_and(|w| COMPOUND.contains(&w.as_str()));
        at += match word.as_str() {
            "function" => 2,
            "coproc" if names_compound => 2,
            w if GRAMMAR.contains(&w) || is_assignment(w) => 1,
            _ => break,
        };
    }
    at.min(words.len())
}

/// What a redirection operator does with the word after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirected {
    /// A file written: `>`, `>>`, `>|`.
    Output,
    /// `>&`: a descriptor duplicated when the word is digits or `-` (`2>&1`); else a file
    /// written, as `&>` writes it (`>&/etc/x`).
    Duplicate,
    /// A file opened for reading and writing, `<>`: written too.
    ReadWrite,
    /// Standard input the gate cannot see: a file read (`<`), a descriptor duplicated (`<&`),
    /// or a here-document's delimiter (`<<`, `<<-`), whose lines the gate reads as commands.
    Input,
    /// A here-string, `<<<`: the word is the text on standard input.
    HereString,
}

/// The redirection operators, longest first, each with what it does with the word after it.
const REDIRECTIONS: &[(&str, Redirected)] = &[
    ("<<<", Redirected::HereString),
    ("<<-", Redirected::Input),
    ("<<", Redirected::Input),
    ("<>", Redirected::ReadWrite),
    ("<&", Redirected::Input),
    ("<", Redirected::Input),
    (">>", Redirected::Output),
    (">|", Redirected::Output),
    (">&", Redirected::Duplicate),
    (">", Redirected::Output),
];

/// The redirection operator `head` (a line from a `<` or `>` on) starts with: what it does
/// with the word after it, and its length in characters. A `head` starting with neither is
/// read as `>`.
pub fn redirection(head: &str) -> (Redirected, usize) {
    REDIRECTIONS
        .iter()
        .find(|(op, _)| head.starts_with(op))
        .map_or((Redirected::Output, 1), |(op, what)| (*what, op.len()))
}

/// Whether `word`, after `>&` or `<&`, names a descriptor (`2`, `-`, `3-`) rather than a file.
pub fn is_descriptor(word: &str) -> bool {
    let digits = word.strip_suffix('-').unwrap_or(word);
    word == "-" || (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
}

/// Where a substitution is open while its end is looked for: in its commands, with this many
/// `(` open, or in double quotes inside them.
#[derive(Clone, Copy)]
enum Nest {
    Code(usize),
    Double,
}

/// The text of a `$(`, `<(` or `>(` substitution, read from `chars` just after its `(`, up to
/// the `)` that closes it; `chars` is left after that `)` (at its end when none does). Quotes,
/// backslashes, backticks and nested parentheses are honoured as the shell honours them, so a
/// quoted `)` (`$(echo ")"; rm -rf ~)`) does not close it.
pub fn until_close(chars: &mut impl Iterator<Item = char>) -> String {
    let mut open = vec![Nest::Code(0)];
    let mut inner = String::new();
    let mut dollar = false;
    while let Some(c) = chars.next() {
        let Some(&top) = open.last() else {
            break;
        };
        match (top, c) {
            (_, '\\') => {
                inner.push(c);
                inner.extend(chars.next());
                dollar = false;
                continue;
            }
            (Nest::Code(_), '\'') => {
                inner.push(c);
                copy_through(chars, '\'', false, &mut inner);
                dollar = false;
                continue;
            }
            (_, '`') => {
                inner.push(c);
                copy_through(chars, '`', true, &mut inner);
                dollar = false;
                continue;
            }
            (Nest::Code(0), ')') => {
                open.pop();
                if open.is_empty() {
                    return inner;
                }
            }
            (Nest::Code(n), ')') => set_top(&mut open, Nest::Code(n - 1)),
            (Nest::Code(n), '(') => set_top(&mut open, Nest::Code(n + 1)),
            (Nest::Code(_), '"') => open.push(Nest::Double),
            (Nest::Double, '"') => {
                open.pop();
            }
            (Nest::Double, '(') if dollar => open.push(Nest::Code(0)),
            _ => {}
        }
        dollar = c == '$';
        inner.push(c);
    }
    inner
}

/// Replace the innermost of `open`.
fn set_top(open: &mut [Nest], nest: Nest) {
    if let Some(top) = open.last_mut() {
        *top = nest;
    }
}

/// Copy `chars` into `out` up to and with the next `end`; with `escapes`, a backslash keeps
/// the character after it from ending it.
fn copy_through(
    chars: &mut impl Iterator<Item = char>,
    end: char,
    escapes: bool,
    out: &mut String,
) {
    while let Some(c) = chars.next() {
        out.push(c);
        if c == end {
            return;
        }
        if escapes && c == '\\' {
            out.extend(chars.next());
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_substitution_ends_at_its_own_closing_parenthesis() {
        let close = |text: &str| {
            let mut chars = text.chars();
            let inner = super::until_close(&mut chars);
            (inner, chars.collect::<String>())
        };
        assert_eq!(close("ls) rest"), ("ls".to_owned(), " rest".to_owned()));
        assert_eq!(
            close(r#"echo ")"; rm -rf ~) x"#),
            (r#"echo ")"; rm -rf ~"#.to_owned(), " x".to_owned())
        );
        assert_eq!(
            close(r"echo ')' \\) x"),
            (r"echo ')' \\".to_owned(), " x".to_owned())
        );
        assert_eq!(close(r"echo \) x) y").0, r"echo \) x");
        assert_eq!(close("a $(b) (c)) x").0, "a $(b) (c)");
        assert_eq!(close(r#"a "$(echo ")")") x"#).0, r#"a "$(echo ")")""#);
        assert_eq!(close("echo `echo )`) x").0, "echo `echo )`");
        assert_eq!(
            close("unclosed ("),
            ("unclosed (".to_owned(), String::new())
        );
    }

    #[test]
    fn function_and_coproc_names_are_not_programs() {
        let words =
            |line: &str| -> Vec<String> { line.split_whitespace().map(str::to_owned).collect() };
        let program = |line: &str| {
            let w = words(line);
            w.get(super::program_start(&w)).cloned()
        };
        assert_eq!(program("function f { rm -rf ~"), Some("rm".to_owned()));
        assert_eq!(program("coproc c { rm -rf ~"), Some("rm".to_owned()));
        assert_eq!(program("coproc rm -rf ~"), Some("rm".to_owned()));
        assert_eq!(program("! A=1 if ls"), Some("ls".to_owned()));
        assert_eq!(program("function"), None);
    }

    #[test]
    fn redirection_operators_are_read_longest_first() {
        use super::{Redirected, redirection};
        assert_eq!(redirection("<<<x"), (Redirected::HereString, 3));
        assert_eq!(redirection("<<EOF"), (Redirected::Input, 2));
        assert_eq!(redirection("<>x"), (Redirected::ReadWrite, 2));
        assert_eq!(redirection(">&x"), (Redirected::Duplicate, 2));
        assert_eq!(redirection(">>x"), (Redirected::Output, 2));
        assert!(super::is_descriptor("2") && super::is_descriptor("-"));
        assert!(!super::is_descriptor("/etc/x") && !super::is_descriptor(""));
    }
}
