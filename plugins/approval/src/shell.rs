//! Which programs a shell action runs: a light reading of command lines (shell-guard does the
//! thorough one). Quotes and backslashes are honoured; `;`, `&`, `|`, newlines and brackets
//! separate commands; `$(...)` and backticks, also inside double quotes, are commands of their
//! own; wrappers (`sudo`, `env`, `nice`, `timeout`, `xargs`...) and `sh -c '...'` are looked
//! through. Variables are not expanded: `$X args` runs a program this cannot name.

/// How deep `sh -c "sh -c '...'"` and substitutions are followed.
const MAX_DEPTH: u32 = 4;

/// Shells (and `su`) whose `-c STRING` is a command line of its own.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "fish", "busybox", "su"];

/// Words of shell grammar that stand where a program would.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done",
];

/// Programs that run the rest of their arguments as a command, with their options that take a
/// value (`sudo -u root cmd`) and how many plain arguments come before the command.
fn wrapper(name: &str) -> Option<(&'static [&'static str], usize)> {
    Some(match name {
        "sudo" => (
            &["-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"],
            0,
        ),
        "doas" | "runuser" => (&["-u", "-g", "-C"], 0),
        "env" => (&["-u", "-C"], 0),
        "nice" => (&["-n"], 0),
        "ionice" => (&["-c", "-n", "-p", "-P", "-u"], 0),
        "timeout" => (&["-s", "-k"], 1),
        "xargs" => (&["-n", "-I", "-L", "-P", "-d", "-E", "-s", "-a"], 0),
        "stdbuf" => (&["-i", "-o", "-e"], 0),
        "strace" | "ltrace" => (&["-e", "-o", "-p", "-s", "-u"], 0),
        "chroot" | "flock" => (&[], 1),
        "nohup" | "time" | "command" | "exec" | "builtin" | "setsid" | "unbuffer" => (&[], 0),
        _ => return None,
    })
}

/// `line` split into simple commands, each a list of words with quotes removed.
pub fn split(line: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    split_into(line, 0, &mut out);
    out
}

fn split_into(line: &str, depth: u32, out: &mut Vec<Vec<String>>) {
    if depth > MAX_DEPTH {
        return;
    }
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut nested: Vec<String> = Vec::new();
    let mut chars = line.chars().peekable();
    let end_word = |words: &mut Vec<String>, word: &mut String, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
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
                        '`' => nested.push(chars.by_ref().take_while(|&c| c != '`').collect()),
                        '$' if chars.peek() == Some(&'(') => {
                            chars.next();
                            nested.push(until_close(&mut chars));
                        }
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '$' if chars.peek() == Some(&'(') => {
                chars.next();
                end_word(&mut words, &mut word, &mut in_word);
                out.push(std::mem::take(&mut words));
            }
            ';' | '&' | '|' | '\n' | '(' | ')' | '`' => {
                end_word(&mut words, &mut word, &mut in_word);
                out.push(std::mem::take(&mut words));
            }
            c if c.is_whitespace() => end_word(&mut words, &mut word, &mut in_word),
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    end_word(&mut words, &mut word, &mut in_word);
    out.push(words);
    out.retain(|words| !words.is_empty());
    for inner in nested {
        split_into(&inner, depth + 1, out);
    }
}

/// The text up to the `)` that closes an already opened `$(`.
fn until_close(chars: &mut impl Iterator<Item = char>) -> String {
    let mut depth = 1;
    let mut inner = String::new();
    for c in chars {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            break;
        }
        inner.push(c);
    }
    inner
}

/// The entries of `programs` that the simple command `words` runs, as written in the config
/// (`"sudo"`, `"git push"`), added to `found` once each.
pub fn matches(words: &[String], programs: &[Vec<String>], found: &mut Vec<String>) {
    matches_at(words, programs, 0, found);
}

fn matches_at(words: &[String], programs: &[Vec<String>], depth: u32, found: &mut Vec<String>) {
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if RESERVED.contains(&word.as_str()) || is_assignment(word) {
            i += 1;
            continue;
        }
        let name = word.rsplit('/').next().unwrap_or(word);
        let args = words.get(i + 1..).unwrap_or_default();
        for entry in programs {
            let joined = entry.join(" ");
            if runs(entry, name, args) && !found.contains(&joined) {
                found.push(joined);
            }
        }
        if SHELLS.contains(&name) || name == "watch" {
            if depth < MAX_DEPTH {
                for command in command_strings(name, args) {
                    for simple in split(&command) {
                        matches_at(&simple, programs, depth + 1, found);
                    }
                }
            }
            return;
        }
        let Some((valued, mut positional)) = wrapper(name) else {
            return;
        };
        i += 1;
        while let Some(w) = words.get(i) {
            if w == "--" {
                i += 1;
                break;
            } else if w.starts_with('-') {
                i += if valued.contains(&w.as_str()) { 2 } else { 1 };
            } else if positional > 0 {
                positional -= 1;
                i += 1;
            } else if is_assignment(w) {
                i += 1;
            } else {
                break;
            }
        }
    }
}

/// The command lines a shell (`sh -c LINE`, `bash -lc LINE`, `su -c LINE`) or `watch` runs.
fn command_strings(name: &str, args: &[String]) -> Vec<String> {
    if name == "watch" {
        let rest = args
            .iter()
            .skip_while(|a| a.starts_with('-') || a.parse::<f64>().is_ok());
        return vec![rest.cloned().collect::<Vec<_>>().join(" ")];
    }
    args.iter()
        .position(|a| a.starts_with('-') && !a.starts_with("--") && a.contains('c'))
        .and_then(|at| args.get(at + 1))
        .into_iter()
        .cloned()
        .collect()
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

/// `NAME=value`, as in `FOO=1 cmd`.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}
