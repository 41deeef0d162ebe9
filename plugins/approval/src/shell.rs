//! Which programs a shell action runs: a light reading of command lines (shell-guard does the
//! thorough one). Lines are cut into commands and words as shell-guard cuts them
//! ([`shell_syntax::split`]: quotes, chains, redirections, a here-string as what its command
//! reads, substitutions as commands of their own); wrappers
//! (`sudo`, `env` and its `-S`, `nice`, `timeout`, `xargs`, `busybox`...) and shells (`sh -c
//! '...'`, `bash -o pipefail -c '...'`, a shell reading its standard input) are looked
//! through, each read by its own option table ([`crate::wrappers`]). Variables are not
//! expanded: a program named by one (`$X args`, `$(...) args`) cannot be told, nor can one
//! behind a wrapper option this does not know, nor a script fed on input it cannot see or made
//! by a command (`bash <(curl ...)`); those are reported as unclear ([`Found::unclear`]), and
//! the gate asks.

use crate::wrappers::{self, Input, Runs, Script};
use shell_syntax::program_start;
use shell_syntax::split::{SUBSTITUTION, Simple, split};

/// How deep shells and wrappers are followed.
const MAX_DEPTH: u32 = 8;

/// What reading a run's commands found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// The entries of `programs` they run, as written in the config (`"sudo"`, `"git push"`),
    /// once each.
    pub programs: Vec<String>,
    /// Why what some of them run cannot be told, once each.
    pub unclear: Vec<String>,
    /// The files they write, as written: the targets of their output redirections (`>`,
    /// `>>`, `>&FILE`, `<>`) and what programs that write files write (`tee`, `cp`, `sed -i`,
    /// `curl -o`...: [`shell_syntax::writes`]), once each.
    pub writes: Vec<String>,
    /// The directories a `cd`, `pushd` or a wrapper (`env -C DIR`, `sudo -D DIR`) moves to,
    /// once each: a relative write may land in any of them.
    pub dirs: Vec<String>,
    /// Whether a command makes the shell's globs match names starting with `.` (`shopt -s
    /// dotglob`, `bash -O dotglob`, or `GLOBIGNORE` set, which does the same): `*/config`
    /// may then be `.git/config`. Where on the line it does so is not followed.
    pub dotglob: bool,
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

    /// Add what `other` found, each once.
    pub fn merge(&mut self, other: &Found) {
        for entry in &other.programs {
            self.program(entry.clone());
        }
        for why in &other.unclear {
            self.unclear(why.clone());
        }
        for path in &other.writes {
            self.write(path);
        }
        for dir in &other.dirs {
            self.dir(dir.clone());
        }
        self.dotglob |= other.dotglob;
    }

    /// Add a directory moved to, once.
    fn dir(&mut self, dir: String) {
        if !self.dirs.contains(&dir) {
            self.dirs.push(dir);
        }
    }

    /// The files written, and each relative one as it would be in each directory moved to
    /// (`cd .git && tee config` writes `.git/config`; the order of the moves and writes is
    /// not followed, which only names more files).
    pub fn written(&self) -> Vec<String> {
        let mut all = self.writes.clone();
        for dir in &self.dirs {
            let dir = dir.trim_end_matches('/');
            let relative = self.writes.iter().filter(|w| !w.starts_with('/'));
            all.extend(relative.map(|w| format!("{dir}/{w}")));
        }
        all
    }

    /// Add a file written, once.
    fn write(&mut self, path: &str) {
        if !self.writes.iter().any(|w| w == path) {
            self.writes.push(path.to_owned());
        }
    }
}

/// Read the simple command `simple` of a line: what it runs (as [`matches`]) and the files its
/// redirections write.
pub fn command(simple: &Simple, programs: &[Vec<String>], found: &mut Found) {
    command_at(simple, programs, 0, found);
}

fn command_at(simple: &Simple, programs: &[Vec<String>], depth: u32, found: &mut Found) {
    for target in &simple.redirects {
        found.write(target);
    }
    matches_at(&simple.words, programs, simple.input(), depth, found);
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
    if let Some(why) = shell_syntax::environment::changes_what_runs(words) {
        found.unclear(why);
    }
    found.dotglob |= sets_dotglob(words);
    for line in shell_syntax::environment::lines_set(words) {
        line_at(&line, programs, depth + 1, found);
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
    let written = shell_syntax::writes::written(name, args, input);
    for path in &written.paths {
        found.write(path);
    }
    if let Some(why) = written.unclear {
        found.unclear(why);
    }
    for entry in programs {
        if runs(entry, name, args) {
            found.program(entry.join(" "));
        }
    }
    // Where the wrapper starts its command does not change which program it is.
    if name == "cd" || name == "pushd" {
        let dir = args
            .iter()
            .find(|a| !a.starts_with('-') || a.as_str() == "-");
        found.dir(dir.cloned().unwrap_or_else(|| "~".into()));
    }
    if let Some((inner, dir)) = wrappers::runs(name, args) {
        if let Some(dir) = dir {
            found.dir(dir);
        }
        wrapped(inner, programs, input, depth, found);
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
        // A script file runs programs of its own, as `./x.sh` does, which no gate can read.
        Some(Script::File(_)) | None => {}
    }
}

/// What a wrapper runs (`runs`, given `input`), read for `programs` into `found`.
fn wrapped(runs: Runs, programs: &[Vec<String>], input: Input<'_>, depth: u32, found: &mut Found) {
    match runs {
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
        Runs::All(parts) => {
            for part in parts {
                wrapped(part, programs, input, depth, found);
            }
        }
    }
}

/// Read each simple command of the command line `line`; what they read on standard input is
/// their here-string, or cannot be seen.
fn line_at(line: &str, programs: &[Vec<String>], depth: u32, found: &mut Found) {
    for simple in split(line) {
        command_at(&simple, programs, depth, found);
    }
}

/// Whether the simple command `words` may turn bash's `dotglob` on: any word naming it,
/// `GLOBIGNORE` (which does the same) or `BASHOPTS` (a new bash's options), however it is
/// spelled around them (`shopt -qs dotglob`, `bash -eO dotglob`, `: ${GLOBIGNORE:=x}`); a
/// builtin that sets a variable given an expansion or a glob, whose name is then built at run
/// time (`shopt -s dotgl?b`, `declare $v=x`, `printf -v "${v}NORE" x`). `shopt -u dotglob`
/// counts too: only ever more globs are judged wide.
fn sets_dotglob(words: &[String]) -> bool {
    let program = words.get(program_start(words)).map(String::as_str);
    // Builtins that set a variable named by an operand, which may be built at run time
    // (`printf -v "${v}NORE" x`, `read "$n"`, `declare -n r="$n"`); `shopt` given an
    // expansion or a glob (`shopt -s dotgl?b`).
    let names_at_run_time = matches!(
        program,
        Some(
            "shopt"
                | "declare"
                | "typeset"
                | "export"
                | "local"
                | "readonly"
                | "read"
                | "printf"
                | "mapfile"
                | "readarray"
                | "eval"
        )
    );
    words.iter().any(|w| {
        ["dotglob", "GLOBIGNORE", "BASHOPTS"]
            .iter()
            .any(|name| w.contains(name))
            || (names_at_run_time && w.contains(['$', '`', '*', '?', '[']))
    })
}

/// A program word the shell changes before it runs: a variable or a substitution, a glob or
/// an extglob group (`/bin/@(rm)`), braces. `[` is the test command.
fn unclear_program(word: &str) -> bool {
    word != "["
        && word != "[["
        && (word.contains(['$', '`', '*', '?', '[', '('])
            || (word.contains('{') && word.contains('}')))
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
