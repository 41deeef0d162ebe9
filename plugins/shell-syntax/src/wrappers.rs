//! Programs that run another command, and shells that run a script: what each runs, read from
//! its options with [`crate::options`]. `sudo -u root CMD`, `env -S "CMD"`, `timeout -s KILL 5
//! CMD`, `nice -n 5 CMD`, `xargs -n 1 CMD`, `busybox CMD`, `su -c LINE`, `watch LINE`, `eval
//! LINE`; `sh -c LINE`, `bash -o pipefail -c LINE`, `bash FILE`, `source FILE`, `sh` reading
//! its standard input. An option a program's table does not hold means the gate cannot tell
//! what runs ([`Runs::Unknown`], [`Script::Unknown`]): it says so rather than guess.
//!
//! [`runs`] also answers for the programs read in [`crate::launchers`] (`unshare`, `ssh`,
//! `systemd-run`, `bwrap`...) and, when one of their options runs a command, for those read in
//! [`crate::smuggled`] (`tar --to-command`, `git -c core.pager`...), so that both gates see
//! them through the one function.
//!

use crate::options::{self, Options};

/// What a wrapper runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runs {
    /// This command, its program first (empty: nothing runs).
    Command(Vec<String>),
    /// This shell command line (`su -c LINE`, `watch LINE`, `eval WORDS`, `flock F -c LINE`).
    Line(String),
    /// `xargs`: `command`, run with the words of its input added, or each line of it put in
    /// place of `replace` (`-I {}`); with `from_file`, the input comes from a file (`-a`).
    Xargs {
        /// The command, its program first.
        command: Vec<String>,
        /// The text `-I` or `-i` replaces with each line of input.
        replace: Option<String>,
        /// The character `-d` splits the input on.
        delimiter: Option<char>,
        /// Whether the input is read from a file the gate cannot see.
        from_file: bool,
    },
    /// The gate cannot tell what runs: why.
    Unknown(String),
    /// Each of these runs (made by `together`, never empty or nested): a launcher's helper
    /// programs and its command, the commands several options name, or a part the gate cannot
    /// read beside those it can.
    All(Vec<Runs>),
}

/// What a shell runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Script {
    /// These command lines (`-c LINE`; none when `-c` has no line).
    Lines(Vec<String>),
    /// The script in this file, which a gate cannot read.
    File(String),
    /// What it reads on standard input.
    Stdin,
    /// The gate cannot tell what runs: why.
    Unknown(String),
}

/// What a command reads on standard input, as far as the gate knows: the script of a shell
/// given none, and the words `xargs` adds to its command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// Nothing: the program run was given no input.
    Nothing,
    /// This text.
    Text(&'a str),
    /// What comes before it in a pipe, or from a file: the gate cannot see it.
    Unseen,
}

/// A word standing for input the gate cannot see: the rules read it as an expansion.
pub const UNSEEN: &str = crate::split::SUBSTITUTION;

/// The most lines (or NUL-separated items) of input `xargs` is judged on; more is unseen.
const MAX_LINES: usize = 256;

/// The most words of input `xargs` is judged on (each may start a group of its own); more is
/// unseen.
const MAX_WORDS: usize = 256;

const SUDO: &[&str] = &[
    "A|askpass",
    "a|auth-type=",
    "B|bell",
    "b|background",
    "C|close-from=",
    "c|login-class=",
    "D|chdir=",
    "E",
    "|preserve-env?",
    "e|edit",
    "g|group=",
    "H|set-home",
    "h?",
    "|host=",
    "|help",
    "i|login",
    "K|remove-timestamp",
    "k|reset-timestamp",
    "l|list",
    "N|no-update",
    "n|non-interactive",
    "P|preserve-groups",
    "p|prompt=",
    "R|chroot=",
    "r|role=",
    "S|stdin",
    "s|shell",
    "T|command-timeout=",
    "t|type=",
    "U|other-user=",
    "u|user=",
    "V|version",
    "v|validate",
];
const DOAS: &[&str] = &["C=", "L", "n", "s", "u="];
const PKEXEC: &[&str] = &[
    "|user=",
    "|disable-internal-agent",
    "|keep-cwd",
    "|help",
    "|version",
];
const SU: &[&str] = &[
    "c|command=",
    "|session-command=",
    "f|fast",
    "g|group=",
    "G|supp-group=",
    "l|login",
    "m|preserve-environment",
    "p",
    "P|pty",
    "T|no-pty",
    "s|shell=",
    "w|whitelist-environment=",
    "h|help",
    "V|version",
];
const RUNUSER: &[&str] = &[
    "c|command=",
    "|session-command=",
    "f|fast",
    "g|group=",
    "G|supp-group=",
    "l|login",
    "m|preserve-environment",
    "p",
    "P|pty",
    "T|no-pty",
    "s|shell=",
    "u|user=",
    "w|whitelist-environment=",
    "h|help",
    "V|version",
];
const ENV: &[&str] = &[
    "0|null",
    "i|ignore-environment",
    "u|unset=",
    "C|chdir=",
    "S|split-string=",
    "v|debug",
    "a|argv0=",
    "|block-signal?",
    "|default-signal?",
    "|ignore-signal?",
    "|list-signal-handling",
    "|help",
    "|version",
];
const NICE: &[&str] = &["#", "n|adjustment=", "|help", "|version"];
const IONICE: &[&str] = &[
    "c|class=",
    "n|classdata=",
    "p|pid=",
    "P|pgid=",
    "u|uid=",
    "t|ignore",
    "h|help",
    "V|version",
];
const TIMEOUT: &[&str] = &[
    "s|signal=",
    "k|kill-after=",
    "f|foreground",
    "p|preserve-status",
    "v|verbose",
    "|help",
    "|version",
];
const STDBUF: &[&str] = &["i|input=", "o|output=", "e|error=", "|help", "|version"];
const NOHUP: &[&str] = &["|help", "|version"];
const SETSID: &[&str] = &["c|ctty", "f|fork", "w|wait", "h|help", "V|version"];
const CHRT: &[&str] = &[
    "a|all-tasks",
    "b|batch",
    "d|deadline",
    "e|ext",
    "f|fifo",
    "i|idle",
    "m|max",
    "o|other",
    "p|pid",
    "r|rr",
    "R|reset-on-fork",
    "T|sched-runtime=",
    "P|sched-period=",
    "D|sched-deadline=",
    "v|verbose",
    "h|help",
    "V|version",
];
const TASKSET: &[&str] = &["a|all-tasks", "c|cpu-list", "p|pid", "h|help", "V|version"];
const TIME: &[&str] = &[
    "f|format=",
    "o|output=",
    "a|append",
    "p|portability",
    "v|verbose",
    "q|quiet",
    "|help",
    "V|version",
];
const COMMAND: &[&str] = &["p", "v", "V"];
const BUILTIN: &[&str] = &[];
const EXEC: &[&str] = &["c", "l", "a="];
const UNBUFFER: &[&str] = &["p"];
const CHROOT: &[&str] = &["|userspec=", "|groups=", "|skip-chdir", "|help", "|version"];
const FLOCK: &[&str] = &[
    "s|shared",
    "x|exclusive",
    "e",
    "u|unlock",
    "n|nonblock",
    "|nb",
    "w|wait=",
    "|timeout=",
    "E|conflict-exit-code=",
    "o|close",
    "c|command=",
    "F|no-fork",
    "|verbose",
    "h|help",
    "V|version",
];
const WATCH: &[&str] = &[
    "n|interval=",
    "q|equexit=",
    "d|differences?",
    "b|beep",
    "c|color",
    "C|no-color",
    "e|errexit",
    "g|chgexit",
    "p|precise",
    "t|no-title",
    "w|no-wrap",
    "x|exec",
    "r|no-rerun",
    "h|help",
    "v|version",
];
const XARGS: &[&str] = &[
    "0|null",
    "a|arg-file=",
    "d|delimiter=",
    "E=",
    "e|eof?",
    "I=",
    "i|replace?",
    "L=",
    "l|max-lines?",
    "n|max-args=",
    "o|open-tty",
    "p|interactive",
    "P|max-procs=",
    "r|no-run-if-empty",
    "s|max-chars=",
    "t|verbose",
    "x|exit",
    "|process-slot-var=",
    "|show-limits",
    "|help",
    "|version",
];
const STRACE: &[&str] = &[
    "e=",
    "o|output=",
    "p|attach=",
    "s|string-limit=",
    "u|user=",
    "a|columns=",
    "b|detach-on=",
    "E|env=",
    "I=",
    "O|summary-syscall-overhead=",
    "P|trace-path=",
    "S|summary-sort-by=",
    "X|const-print-style=",
    "U|summary-columns=",
    "|trace=",
    "|signal=",
    "|status=",
    "|abbrev=",
    "|verbose=",
    "|raw=",
    "|read=",
    "|write=",
    "|fault=",
    "|inject=",
    "|quiet?",
    "|decode-fds?",
    "|decode-pids?",
    "|timestamps?",
    "|absolute-timestamps?",
    "|relative-timestamps?",
    "|syscall-times?",
    "|daemonize?",
    "|seccomp-bpf",
    "|follow-forks",
    "|output-separately",
    "|summary-only",
    "|summary-wall-clock",
    "|stack-trace",
    "|syscall-number",
    "|no-abbrev",
    "|successful-only",
    "|failed-only",
    "|instruction-pointer",
    "|debug",
    "|help",
    "|version",
    "A",
    "c",
    "C",
    "d",
    "D",
    "f",
    "F",
    "h",
    "i",
    "k",
    "n",
    "q",
    "r",
    "t",
    "T",
    "v",
    "V",
    "w",
    "x",
    "y",
    "z",
    "Z",
];
const LTRACE: &[&str] = &[
    "a|align=",
    "A=",
    "D|debug=",
    "e=",
    "F|config=",
    "l|library=",
    "n|indent=",
    "o|output=",
    "p=",
    "s=",
    "u=",
    "w|where=",
    "x=",
    "b|no-signals",
    "c",
    "C|demangle",
    "f",
    "h|help",
    "i",
    "L",
    "r",
    "S",
    "t",
    "T",
    "V|version",
];
const TRAP: &[&str] = &["l", "p", "P"];
const FISH: &[&str] = &[
    "c|command=",
    "C|init-command=",
    "d|debug=",
    "o|debug-output=",
    "f|features=",
    "p|profile=",
    "|profile-startup=",
    "D|debug-stack-frames=",
    "i|interactive",
    "l|login",
    "n|no-execute",
    "N|no-config",
    "P|private",
    "v|version",
    "h|help",
    "|print-rusage-self",
    "|print-debug-categories",
];

/// Shells whose `-c` makes their first operand a command line, and that otherwise run the file
/// their first operand names, or what they read on standard input (fish is read apart).
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "ash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "yash", "posh",
    "csh", "tcsh",
];

/// bash's long options that take no value (zsh takes any option name as a long flag).
const BASH_FLAGS: &[&str] = &[
    "debugger",
    "dump-po-strings",
    "dump-strings",
    "help",
    "login",
    "noediting",
    "noprofile",
    "norc",
    "posix",
    "pretty-print",
    "restricted",
    "verbose",
    "version",
];

/// bash's long options that take the next word as their value.
const BASH_VALUED: &[&str] = &["rcfile", "init-file"];

/// What the wrapper called `name` (a base name) runs, given `args`, and the directory it starts
/// it in when that is not the one it was started in (`env -C DIR`, `sudo -D DIR`, `chroot DIR`;
/// `~`, the user's home, for `sudo -i`, `su -l` and `pkexec`); `None` when `name` is no
/// wrapper, nor a program whose options here run a command ([`crate::smuggled`]).
pub fn runs(name: &str, args: &[String]) -> Option<(Runs, Option<String>)> {
    let command = |table: &[&'static str], before: usize| -> Result<Wrapped, String> {
        let read = options::read(table, args)?;
        let command = read.rest.get(before..).unwrap_or_default().to_vec();
        Ok((Runs::Command(command), None))
    };
    let outcome: Result<Wrapped, String> = match name {
        "nohup" => command(NOHUP, 0),
        "nice" => command(NICE, 0),
        "ionice" => command(IONICE, 0),
        "timeout" => command(TIMEOUT, 1), // the duration
        "stdbuf" => command(STDBUF, 0),
        "setsid" => command(SETSID, 0),
        "taskset" => command(TASKSET, 1), // the mask
        "time" => command(TIME, 0),
        // `command -v NAME` only says what NAME is.
        "command" => options::read(COMMAND, args).map(|read| {
            let says = read.has("v") || read.has("V");
            (
                Runs::Command(if says { Vec::new() } else { read.rest }),
                None,
            )
        }),
        "builtin" => command(BUILTIN, 0),
        "exec" => command(EXEC, 0),
        "unbuffer" => command(UNBUFFER, 0),
        "strace" => options::read(STRACE, args).map(|read| (strace(&read), None)),
        "ltrace" => command(LTRACE, 0),
        "sudo" => options::read(SUDO, args).map(|read| {
            let dir = chdir(&read).or_else(|| home(read.has("login")));
            (as_user(&read, &["shell", "login"]), dir)
        }),
        "doas" => options::read(DOAS, args).map(|read| (as_user(&read, &["s"]), None)),
        "pkexec" => options::read(PKEXEC, args)
            .map(|read| (as_user(&read, &[]), home(!read.has("keep-cwd")))),
        "su" => options::permuted(SU, args).map(|read| su(&read, false)),
        "runuser" => options::permuted(RUNUSER, args).map(|read| su(&read, true)),
        "env" => env(args),
        "chroot" => options::read(CHROOT, args).map(|read| chroot(&read)),
        "chrt" => options::read(CHRT, args).map(|read| (chrt(&read), None)),
        "flock" => options::read(FLOCK, args).map(|read| (flock(&read), None)),
        "watch" => options::read(WATCH, args).map(|read| (watch(&read), None)),
        "xargs" => options::read(XARGS, args).map(|read| (xargs(&read), None)),
        "trap" => options::read(TRAP, args).map(|read| (trap(&read), None)),
        "busybox" => Ok((busybox(args), None)),
        "eval" => Ok((Runs::Line(args.join(" ")), None)),
        // More programs made to run a command, and ordinary programs whose options run one.
        _ => {
            return crate::launchers::runs(name, args)
                .or_else(|| crate::smuggled::runs(name, args));
        }
    };
    Some(outcome.unwrap_or_else(|why| (Runs::Unknown(format!("`{name}`: {why}")), None)))
}

/// What the shell called `name` (a base name) runs, given `args`; `None` when `name` is no
/// shell. Options come first, as shells read them: `-c` (alone or in a cluster, `-xc`) makes
/// the first operand the command line; `-o`/`+o` (and bash's `-O`, ksh's `-T` and `-R`),
/// `--rcfile` and `--init-file` take the next word; `-s` reads standard input. An option it
/// does not know leaves the gate unable to tell. `source FILE` and `. FILE` run the script in
/// the file as `bash FILE` does (in this shell, not a new one).
pub fn script(name: &str, args: &[String]) -> Option<Script> {
    if name == "fish" {
        return Some(fish(args));
    }
    if name == "source" || name == "." {
        return Some(sourced(args));
    }
    if !SHELLS.contains(&name) {
        return None;
    }
    let unknown = |word: &str| {
        Script::Unknown(format!(
            "`{name}`: option `{word}` is not one this gate knows"
        ))
    };
    let valued = match name {
        "bash" | "rbash" => "oO",
        "ksh" | "ksh93" | "mksh" | "pdksh" => "oTR",
        _ => "o",
    };
    let (mut command, mut stdin) = (false, false);
    let mut i = 0;
    while let Some(word) = args.get(i) {
        if word == "--" || word == "-" {
            i += 1;
            break;
        }
        if let Some(long) = word.strip_prefix("--") {
            i += 1;
            if BASH_VALUED.contains(&long) {
                i += 1;
            } else if name != "zsh" && !BASH_FLAGS.contains(&long) {
                return Some(unknown(word.as_str()));
            }
            continue;
        }
        let Some(letters) = word.strip_prefix(['-', '+']).filter(|l| !l.is_empty()) else {
            break; // the first operand
        };
        if !letters.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Some(unknown(word.as_str()));
        }
        if word.starts_with('-') {
            command |= letters.contains('c');
            stdin |= letters.contains('s');
        }
        i += 1 + letters.chars().filter(|c| valued.contains(*c)).count();
    }
    let first = args.get(i).cloned();
    Some(if command {
        Script::Lines(first.into_iter().collect())
    } else if stdin {
        Script::Stdin
    } else {
        first.map_or(Script::Stdin, Script::File)
    })
}

/// The commands `xargs` runs: `command` with the words of `input` added as xargs splits them
/// by default (blanks, quotes); with its items as `-L 1`, `-0` or `-d DELIMITER` split them
/// (lines, NUL or `delimiter`), all together and each alone; or, with `replace`, each item put
/// in its place; and, as xargs may cut its input into groups anywhere, each word alone and with
/// every word after it. Input the gate cannot see, or of more than [`MAX_LINES`] items or
/// [`MAX_WORDS`] words, is given as [`UNSEEN`].
pub fn xargs_commands(
    command: &[String],
    replace: Option<&str>,
    delimiter: Option<char>,
    input: Input<'_>,
) -> Vec<Vec<String>> {
    let separators: Vec<char> = ['\n', '\0'].into_iter().chain(delimiter).collect();
    let separators = separators.as_slice();
    let text = match input {
        Input::Nothing => "",
        Input::Text(text) if text.split(separators).count() <= MAX_LINES => text,
        Input::Text(_) | Input::Unseen => UNSEEN,
    };
    let items: Vec<&str> = text
        .split(separators)
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .collect();
    if let Some(replace) = replace {
        return items
            .iter()
            .map(|item| command.iter().map(|w| w.replace(replace, item)).collect())
            .collect();
    }
    let with = |added: &[&str]| {
        let mut words = command.to_vec();
        words.extend(added.iter().map(|a| (*a).to_owned()));
        words
    };
    let words = split_words(text, false);
    if words.len() > MAX_WORDS {
        return vec![with(&[UNSEEN])];
    }
    let mut blanks = command.to_vec();
    blanks.extend(words.iter().cloned());
    let mut commands = vec![blanks];
    let mut add = |run: Vec<String>| {
        if !commands.contains(&run) {
            commands.push(run);
        }
    };
    add(with(items.as_slice()));
    if items.len() > 1 {
        for item in &items {
            add(with(std::slice::from_ref(item)));
        }
    }
    // xargs may cut its input into groups (`-n`, `-L`, `-s`, or its own size limit), and any
    // word may start one: each word is judged right after the command, alone and with all
    // the words after it (`-n 2 sh -c` given `a b 'rm -rf ~' d` runs `sh -c 'rm -rf ~' d`).
    for (i, word) in words.iter().enumerate() {
        let mut alone = command.to_vec();
        alone.push(word.clone());
        add(alone);
        let mut rest = command.to_vec();
        rest.extend(words[i..].iter().cloned());
        add(rest);
    }
    commands
}

/// `text` split into words as `xargs` splits its input and, with `env`, as `env -S` splits its
/// string: on blanks, quotes grouping, a backslash escaping the next character; for `env`, `\_`
/// also separates words, `\c` ends the string and `#` starting a word starts a comment.
pub fn split_words(text: &str, env: bool) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"') | None, '\\') => match chars.next() {
                Some('_') if env && quote.is_none() => {
                    // `\_` outside quotes ends the word (a space in `env -S`).
                    let ended = std::mem::take(&mut in_word);
                    if ended {
                        words.push(std::mem::take(&mut word));
                    }
                }
                Some('_') if env => word.push(' '),
                Some('c') if env => break,
                Some(escaped) => {
                    word.push(escaped);
                    in_word = true;
                }
                None => {}
            },
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if env && !in_word => break,
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// What a wrapper runs, and the directory it starts it in when it changes it.
pub(crate) type Wrapped = (Runs, Option<String>);

/// The directory `-C DIR`/`--chdir DIR` (`env`, `sudo`) starts the command in.
fn chdir(read: &Options) -> Option<String> {
    read.values("chdir").last().map(str::to_owned)
}

/// `~`, the user's home, when `login` (`sudo -i`, `su -l`): where a login starts.
pub(crate) fn home(login: bool) -> Option<String> {
    login.then(|| "~".to_owned())
}

/// A shell reading its script on standard input (`sudo -s`, `su`, `chroot DIR`).
pub(crate) fn shell() -> Runs {
    Runs::Command(vec!["sh".to_owned()])
}

/// What runs when a program runs several things (`fakeroot -f FAKED CMD`, `tar
/// --to-command=A -I B`, `git -c core.pager=P rebase -x CMD`): `parts`, each judged on its
/// own, so that one the gate cannot read does not hide another it can. Parts that run nothing
/// are dropped and nested [`Runs::All`] flattened; one part is returned as it is, none is
/// [`Runs::Command`] with no words.
pub(crate) fn together(parts: Vec<Runs>) -> Runs {
    let mut flat = Vec::with_capacity(parts.len());
    for part in parts {
        match part {
            Runs::Command(words) if words.is_empty() => {}
            Runs::All(inner) => flat.extend(inner),
            part => flat.push(part),
        }
    }
    if flat.len() < 2 {
        return flat.pop().unwrap_or(Runs::Command(Vec::new()));
    }
    Runs::All(flat)
}

/// `NAME=value`, as `env` and `sudo` read their operands: any word with `=` after its start.
fn is_env_assignment(word: &str) -> bool {
    word.find('=').is_some_and(|at| at > 0)
}

/// `sudo`, `doas`, `pkexec`: the command after the options and any `NAME=value`; with none, the
/// shell that one of `shell_flags` starts (`sudo -s`, `sudo -i`), or that `pkexec` (no flags)
/// always starts.
fn as_user(read: &Options, shell_flags: &[&str]) -> Runs {
    let command = after_assignments(&read.rest);
    if command.len() == risky_assignments(&read.rest).count()
        && (shell_flags.is_empty() || shell_flags.iter().any(|f| read.has(f)))
    {
        return shell();
    }
    Runs::Command(command)
}

/// The assignments among the `NAME=value` words that `words` starts with that set a variable
/// whose value runs ([`crate::environment`]).
fn risky_assignments(words: &[String]) -> impl Iterator<Item = &String> {
    words
        .iter()
        .take_while(|w| is_env_assignment(w))
        .filter(|w| crate::environment::runs_value(w))
}

/// The command after the `NAME=value` words `words` starts with, those among them whose value
/// runs kept in front of it (they are shell assignments), so that the gates judge that too
/// ([`crate::environment`]) and still read the command.
fn after_assignments(words: &[String]) -> Vec<String> {
    risky_assignments(words)
        .chain(words.iter().skip_while(|w| is_env_assignment(w)))
        .cloned()
        .collect()
}

/// `su`, `runuser`: the line of `-c`; else, for `runuser -u USER`, the command after it; else
/// the user's shell, given the operands after the user. `-l` (or `-` first) starts in the
/// user's home.
fn su(read: &Options, runuser: bool) -> Wrapped {
    let dash = read.rest.first().is_some_and(|w| w == "-");
    let dir = home(dash || read.has("login"));
    // `-s PROGRAM` is what runs as the user's shell: a program that is no shell runs itself,
    // given `-c LINE` or the operands.
    let program = read
        .values("shell")
        .last()
        .filter(|p| !SHELLS.contains(&p.rsplit('/').next().unwrap_or(p)));
    if let Some(line) = read
        .values("command")
        .chain(read.values("session-command"))
        .next()
    {
        let runs = match program {
            Some(program) => Runs::Command(vec![program.to_owned(), "-c".into(), line.to_owned()]),
            None => Runs::Line(line.to_owned()),
        };
        return (runs, dir);
    }
    if runuser && read.has("user") {
        return (Runs::Command(read.rest.clone()), dir);
    }
    let operands = read.rest.iter().skip(usize::from(dash));
    let mut words = vec![program.unwrap_or("sh").to_owned()];
    words.extend(operands.skip(1).cloned()); // the user
    (Runs::Command(words), dir)
}

/// `strace`: the command it traces, and the command its output is piped to (`-o '|CMD'`, `-o
/// '!CMD'`: a line the shell runs).
fn strace(read: &Options) -> Runs {
    let piped = read
        .values("output")
        .filter_map(|out| out.strip_prefix(['|', '!']))
        .map(|line| Runs::Line(line.to_owned()));
    let mut parts: Vec<Runs> = piped.collect();
    parts.push(Runs::Command(read.rest.clone()));
    together(parts)
}

/// `env`: after its options and its `NAME=value` operands, the command, in the directory of
/// `-C`. `-S STRING` is split into words as env splits it and read again with the words after
/// it (it may hold options).
fn env(args: &[String]) -> Result<Wrapped, String> {
    let read = options::read(ENV, args)?;
    let dir = chdir(&read);
    let mut split: Vec<String> = read
        .values("split-string")
        .flat_map(|s| split_words(s, true))
        .collect();
    if !split.is_empty() {
        // Each round is shorter than the last: the string is part of a word it came from.
        split.extend(read.rest.iter().cloned());
        let (runs, inner) = env(&split)?;
        return Ok((runs, inner.or(dir)));
    }
    let skip = usize::from(read.rest.first().is_some_and(|w| w == "-"));
    let command = after_assignments(read.rest.get(skip..).unwrap_or_default());
    Ok((Runs::Command(command), dir))
}

/// `chroot DIR CMD`: the command, or, with none, the shell it starts; in `DIR`, which becomes
/// its `/` (unless `--skip-chdir`).
fn chroot(read: &Options) -> Wrapped {
    let dir = read
        .rest
        .first()
        .filter(|_| !read.has("skip-chdir"))
        .cloned();
    let runs = match read.rest.split_first() {
        Some((_root, [])) => shell(),
        Some((_root, command)) => Runs::Command(command.to_vec()),
        None => Runs::Command(Vec::new()),
    };
    (runs, dir)
}

/// `chrt [PRIORITY] CMD`: the command (newer versions let some policies leave out the
/// priority); `chrt -p` and `chrt -m` run nothing.
fn chrt(read: &Options) -> Runs {
    if read.has("pid") || read.has("max") {
        return Runs::Command(Vec::new());
    }
    let priority = read.rest.first().is_some_and(|p| p.parse::<i64>().is_ok());
    Runs::Command(
        read.rest
            .get(usize::from(priority)..)
            .unwrap_or_default()
            .to_vec(),
    )
}

/// `flock FILE CMD`, `flock FILE -c LINE`.
fn flock(read: &Options) -> Runs {
    if let Some(line) = read.values("command").next() {
        return Runs::Line(line.to_owned());
    }
    match read.rest.get(1..).unwrap_or_default() {
        [flag, line, ..] if flag == "-c" || flag == "--command" => Runs::Line(line.clone()),
        command => Runs::Command(command.to_vec()),
    }
}

/// `watch CMD...`: its words joined, run by `sh -c`; with `-x`, run as they are.
fn watch(read: &Options) -> Runs {
    if read.has("exec") {
        Runs::Command(read.rest.clone())
    } else {
        Runs::Line(read.rest.join(" "))
    }
}

/// The character `xargs -d` splits on: one character, or an escape for a newline, tab, NUL or
/// backslash; `None` for one this does not read.
fn delimiter_char(value: &str) -> Option<char> {
    let mut chars = value.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(c), None, _) => Some(c),
        (Some('\\'), Some(escaped), None) => match escaped {
            'n' => Some('\n'),
            't' => Some('\t'),
            '0' => Some('\0'),
            '\\' => Some('\\'),
            _ => None,
        },
        _ => None,
    }
}

/// `xargs CMD`: the command (`echo` when none is given), and what it does with its input.
fn xargs(read: &Options) -> Runs {
    let replace = read
        .given
        .iter()
        .rev()
        .find_map(|g| match g.name {
            "I" => g.value.clone(),
            "replace" => Some(g.value.clone().unwrap_or_else(|| "{}".to_owned())),
            _ => None,
        })
        .filter(|r| !r.is_empty());
    let command = if read.rest.is_empty() {
        vec!["echo".to_owned()]
    } else {
        read.rest.clone()
    };
    let delimiter = match read.values("delimiter").last() {
        None => None,
        Some(given) => match delimiter_char(given) {
            Some(c) => Some(c),
            None => {
                return Runs::Unknown(format!(
                    "`xargs`: its delimiter `{given}` is not one this gate reads"
                ));
            }
        },
    };
    Runs::Xargs {
        command,
        replace,
        delimiter,
        from_file: read.has("arg-file"),
    }
}

/// `trap LINE SIGNAL...`: the line, run when the signal comes.
fn trap(read: &Options) -> Runs {
    match read.rest.as_slice() {
        [line, _signal, ..] => Runs::Line(line.clone()),
        _ => Runs::Command(Vec::new()),
    }
}

/// `busybox APPLET ARGS` runs `APPLET ARGS`; `busybox --list` and the like run nothing.
fn busybox(args: &[String]) -> Runs {
    match args.first() {
        Some(first) if first.starts_with('-') => Runs::Command(Vec::new()),
        _ => Runs::Command(args.to_vec()),
    }
}

/// `source FILE ARGS`, `. FILE`: the script in the file (none when no file is named).
fn sourced(args: &[String]) -> Script {
    let skip = usize::from(args.first().is_some_and(|a| a == "--"));
    match args.get(skip) {
        Some(file) => Script::File(file.clone()),
        None => Script::Lines(Vec::new()),
    }
}

/// `fish -c LINE`: the lines of `-c` and `-C`; else the script file or standard input.
fn fish(args: &[String]) -> Script {
    let read = match options::read(FISH, args) {
        Ok(read) => read,
        Err(why) => return Script::Unknown(format!("`fish`: {why}")),
    };
    if read.has("command") {
        let lines = read.values("init-command").chain(read.values("command"));
        return Script::Lines(lines.map(str::to_owned).collect());
    }
    if read.has("init-command") {
        return Script::Unknown(
            "`fish`: it runs its --init-command and then a script from elsewhere".into(),
        );
    }
    read.rest
        .first()
        .map_or(Script::Stdin, |file| Script::File(file.clone()))
}
