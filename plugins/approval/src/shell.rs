//! Which programs a shell action runs: a light reading of command lines (shell-guard does the
//! thorough one). Quotes and backslashes are honoured; `;`, `&`, `|`, newlines and brackets
//! separate commands; redirections are left out of the words, and a here-string (`<<< WORD`) is
//! what its command reads on standard input; `$(...)`, backticks (also inside double quotes)
//! and process substitutions (`<(...)`, `>(...)`) are commands of their own; wrappers
//! (`sudo`, `env` and its `-S`, `nice`, `timeout`, `xargs`, `busybox`...) and shells (`sh -c
//! '...'`, `bash -o pipefail -c '...'`, a shell reading its standard input) are looked
//! through, each read by its own option table ([`crate::wrappers`]). Variables are not
//! expanded: a program named by one (`$X args`, `$(...) args`) cannot be told, nor can one
//! behind a wrapper option this does not know, nor a script fed on input it cannot see or made
//! by a command (`bash <(curl ...)`); those are reported as unclear ([`Found::unclear`]), and
//! the gate asks.

use crate::wrappers::{self, Input, Runs, Script};
use shell_syntax::{Redirected, program_start, redirection, until_close};

/// How deep shells, wrappers and substitutions are followed.
const MAX_DEPTH: u32 = 8;

/// What a substitution (`$(...)`, backticks) leaves in its word: a program named by one is
/// unclear.
const SUBSTITUTION: &str = "$(...)";

/// What reading a run's commands found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The entries of `programs` they run, as written in the config (`"sudo"`, `"git push"`),
    /// once each.
    pub programs: Vec<String>,
    /// Why what some of them run cannot be told, once each.
    pub unclear: Vec<String>,
}

impl Found {
    /// Add the entry `entry`, once.
    fn program(&mut self, entry: String) {
        if !self.programs.contains(&entry) {
            self.programs.push(entry);
        }
    }

    /// Add why something cannot be told, once.
    fn unclear(&mut self, why: String) {
        if !self.unclear.contains(&why) {
            self.unclear.push(why);
        }
    }
}

/// One simple command of a line: its words, and the here-string it reads on standard input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Simple {
    /// Its words, quotes removed and redirections left out.
    pub words: Vec<String>,
    /// The text of its here-string (`<<< WORD`), when the last of its input redirections is
    /// one; else what it reads comes from a pipe or a file the gate cannot see.
    pub here: Option<String>,
}

impl Simple {
    /// What it reads on standard input, as far as the gate knows.
    pub fn input(&self) -> Input<'_> {
        self.here.as_deref().map_or(Input::Unseen, Input::Text)
    }

    /// Add the finished `word`, which follows the redirection operator `after`, if any: a
    /// redirection's file is no argument.
    fn add(&mut self, word: String, after: Option<Redirected>) {
        match after {
            None => self.words.push(word),
            Some(Redirected::Output | Redirected::Duplicate) => {}
            Some(Redirected::Input | Redirected::ReadWrite) => self.here = None,
            Some(Redirected::HereString) => self.here = Some(word),
        }
    }
}

/// `line` split into simple commands.
pub fn split(line: &str) -> Vec<Simple> {
    let mut out = Vec::new();
    split_into(&shell_syntax::joined(line), 0, &mut out);
    out
}

fn split_into(line: &str, depth: u32, out: &mut Vec<Simple>) {
    if depth > MAX_DEPTH {
        // Not read, so not passed: a program the shell makes (`$(...)`) is one nobody can
        // name, and the rules ask about it.
        out.push(Simple {
            words: vec![SUBSTITUTION.to_owned()],
            here: None,
        });
        return;
    }
    let mut cur = Simple::default();
    let mut word = String::new();
    let mut in_word = false;
    // The redirection operator the next word follows.
    let mut after: Option<Redirected> = None;
    let mut nested: Vec<String> = Vec::new();
    let mut chars = line.chars().peekable();
    let end_word = |cur: &mut Simple,
                    word: &mut String,
                    in_word: &mut bool,
                    after: &mut Option<Redirected>| {
        if std::mem::take(in_word) {
            cur.add(std::mem::take(word), after.take());
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        '`' => {
                            nested.push(chars.by_ref().take_while(|&c| c != '`').collect());
                            word.push_str(SUBSTITUTION);
                        }
                        '$' if chars.peek() == Some(&'(') => {
                            chars.next();
                            nested.push(until_close(&mut chars));
                            word.push_str(SUBSTITUTION);
                        }
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            // A command substitution, or a process substitution (`<(...)`, `>(...)`).
            '$' | '<' | '>' if chars.peek() == Some(&'(') => {
                chars.next();
                nested.push(until_close(&mut chars));
                word.push_str(SUBSTITUTION);
                in_word = true;
            }
            '`' => {
                nested.push(chars.by_ref().take_while(|&c| c != '`').collect());
                word.push_str(SUBSTITUTION);
                in_word = true;
            }
            '<' | '>' => {
                // `2>x`, `0<x`: the digits before the operator are a descriptor, not a word.
                if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut cur, &mut word, &mut in_word, &mut after);
                let head: String = std::iter::once(c).chain(chars.clone()).take(3).collect();
                let (what, len) = redirection(&head);
                for _ in 1..len {
                    chars.next();
                }
                after = Some(what);
            }
            ';' | '&' | '|' | '\n' | '(' | ')' => {
                end_word(&mut cur, &mut word, &mut in_word, &mut after);
                out.push(std::mem::take(&mut cur));
                after = None;
            }
            c if c.is_whitespace() => end_word(&mut cur, &mut word, &mut in_word, &mut after),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut cur, &mut word, &mut in_word, &mut after);
    out.push(cur);
    out.retain(|simple| !simple.words.is_empty());
    for inner in nested {
        split_into(&inner, depth + 1, out);
    }
}

/// Read the simple command `words`, given what it reads on standard input: the entries of
/// `programs` it runs (`"sudo"`, `"git push"`) and what cannot be told are added to `found`.
pub fn matches(words: &[String], programs: &[Vec<String>], input: Input<'_>, found: &mut Found) {
    matches_at(words, programs, input, 0, found);
}

fn matches_at(
    words: &[String],
    programs: &[Vec<String>],
    input: Input<'_>,
    depth: u32,
    found: &mut Found,
) {
    if depth > MAX_DEPTH {
        found.unclear(format!(
            "it nests shells and wrappers more than {MAX_DEPTH} deep"
        ));
        return;
    }
    let skip = program_start(words);
    let Some((first, args)) = words.get(skip..).unwrap_or_default().split_first() else {
        return;
    };
    if unclear_program(first) {
        found.unclear(format!(
            "its program `{first}` is not known until the shell expands it"
        ));
        return;
    }
    let name = first.rsplit('/').next().unwrap_or(first);
    for entry in programs {
        if runs(entry, name, args) {
            found.program(entry.join(" "));
        }
    }
    // Where the wrapper starts its command does not change which program it is.
    if let Some((inner, _dir)) = wrappers::runs(name, args) {
        match inner {
            Runs::Command(command) => matches_at(&command, programs, input, depth + 1, found),
            Runs::Line(line) => line_at(&line, programs, depth + 1, found),
            Runs::Xargs {
                command,
                replace,
                delimiter,
                from_file,
            } => {
                let input = if from_file { Input::Unseen } else { input };
                // xargs gives the commands it starts no input of their own.
                let runs = wrappers::xargs_commands(&command, replace.as_deref(), delimiter, input);
                for command in runs {
                    matches_at(&command, programs, Input::Nothing, depth + 1, found);
                }
            }
            Runs::Unknown(why) => found.unclear(why),
        }
        return;
    }
    match wrappers::script(name, args) {
        Some(Script::Lines(lines)) => {
            for line in lines {
                line_at(&line, programs, depth + 1, found);
            }
        }
        Some(Script::Stdin) => match input {
            Input::Text(script) => line_at(script, programs, depth + 1, found),
            Input::Unseen => found.unclear(format!(
                "`{name}` runs a script from its standard input, which this gate cannot see"
            )),
            Input::Nothing => {}
        },
        Some(Script::Unknown(why)) => found.unclear(why),
        // A script a command makes (`bash <(curl ...)`, `. <(...)`) cannot be seen.
        Some(Script::File(file)) if file.contains(SUBSTITUTION) => found.unclear(format!(
            "`{name}` runs a script that a command makes, which this gate cannot see"
        )),
        // A script file runs programs of its own, as `./x.sh` does; shell-guard asks about it.
        Some(Script::File(_)) | None => {}
    }
}

/// Read each simple command of the command line `line`; what they read on standard input is
/// their here-string, or cannot be seen.
fn line_at(line: &str, programs: &[Vec<String>], depth: u32, found: &mut Found) {
    for simple in split(line) {
        matches_at(&simple.words, programs, simple.input(), depth, found);
    }
}

/// A program word the shell changes before it runs: a variable or a substitution, a glob,
/// braces. `[` is the test command.
fn unclear_program(word: &str) -> bool {
    word != "["
        && word != "[["
        && (word.contains(['$', '`', '*', '?', '[']) || (word.contains('{') && word.contains('}')))
}

/// Does the program `name`, given `args`, run `entry`? Its first word is the program (`mkfs`
/// also matches `mkfs.ext4`); any further words must be among the arguments, in order.
fn runs(entry: &[String], name: &str, args: &[String]) -> bool {
    let Some((program, words)) = entry.split_first() else {
        return false;
    };
    let named = name == program
        || name
            .strip_prefix(program.as_str())
            .is_some_and(|rest| rest.starts_with('.'));
    let mut args = args.iter();
    named && words.iter().all(|w| args.any(|a| a == w))
}
