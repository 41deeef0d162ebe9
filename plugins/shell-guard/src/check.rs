//! The rules. Each finds nothing, a reason to reject, or, when the gate cannot tell what a
//! command would do, a question for a person: what it cannot see, it does not let pass.

use crate::options;
use crate::paths::{self, Cwd, Onto, Target};
use crate::wrappers::{self, Input, Runs, Script};
use shell_syntax::split::{Simple, quote, split};

/// How deep shells, substitutions and wrappers are followed.
const MAX_DEPTH: u32 = 16;

/// `find`'s tests that narrow which files its later actions act on (`-newerXY` too).
const FIND_TESTS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-type",
    "-xtype",
    "-newer",
    "-anewer",
    "-cnewer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-size",
    "-empty",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-nouser",
    "-nogroup",
    "-perm",
    "-links",
    "-inum",
    "-samefile",
    "-fstype",
];

/// Longest piece of a command quoted in a reason or a question.
const QUOTE_MAX: usize = 200;

/// What the rules find in a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// It must not run: why, for the person and the model.
    Reject(String),
    /// The gate cannot tell whether it is one it would reject: the question for a person.
    Ask(String),
}

/// The gravest of `findings`: the first rejection (the rest are not looked at), else the first
/// question.
pub fn gravest(findings: impl IntoIterator<Item = Option<Finding>>) -> Option<Finding> {
    let mut asked = None;
    for finding in findings.into_iter().flatten() {
        match finding {
            Finding::Reject(_) => return Some(finding),
            Finding::Ask(_) if asked.is_none() => asked = Some(finding),
            Finding::Ask(_) => {}
        }
    }
    asked
}

/// Check a shell command line. Returns why it must not run, or what to ask a person when the
/// gate cannot tell what it runs; `None` when nothing in it is destructive by these rules.
pub fn check_command(line: &str) -> Option<Finding> {
    check_line(line, 0, &Cwd::start())
}

/// Check one program run given as its words (the program first), with what it reads on
/// standard input, as [`check_command`] checks a line.
pub fn check_program(words: &[String], input: Input<'_>) -> Option<Finding> {
    command(words, 0, input, &Cwd::start())
}

fn too_deep() -> Finding {
    Finding::Reject(format!(
        "the command nests shells and wrappers more than {MAX_DEPTH} deep; refusing to guess"
    ))
}

/// Check the line `line`, run at `depth` from `start` (where a shell that runs it starts).
fn check_line(line: &str, depth: u32, start: &Cwd) -> Option<Finding> {
    if depth > MAX_DEPTH {
        return Some(too_deep());
    }
    if let Some(reason) = fork_bomb(line) {
        return Some(Finding::Reject(reason));
    }
    // A line that sets CDPATH makes `cd name` go where the gate cannot tell; one that may set
    // HOME, `~` and a bare `cd`.
    let cdpath = line.contains("CDPATH");
    let mut cwd = if may_set_home(line) {
        start.homeless()
    } else {
        start.clone()
    };
    gravest(split(line).iter().map(|simple| {
        let found = check_simple(simple, depth, &cwd);
        if let Some(next) = changed_dir(&simple.words, &cwd, cdpath) {
            cwd = next;
        }
        found
    }))
}

/// Whether `line` may give `HOME` a value (`HOME=/`, `export HOME`, `read HOME`,
/// `${HOME:=/}`): it names `HOME` other than to read it as `$HOME` or `${HOME}`.
fn may_set_home(line: &str) -> bool {
    let name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    line.match_indices("HOME").any(|(at, _)| {
        let (before, after) = (&line[..at], &line[at + "HOME".len()..]);
        let whole = !before.ends_with(name) && !after.starts_with(name);
        let read = before.ends_with('$') || (before.ends_with("${") && after.starts_with('}'));
        whole && !read
    })
}

/// One simple command of a line: its redirections, then what it runs. What it reads on
/// standard input is its here-string, or comes from a pipe or a file the gate cannot see.
fn check_simple(simple: &Simple, depth: u32, cwd: &Cwd) -> Option<Finding> {
    let redirects = simple
        .redirects
        .iter()
        .map(|target| match paths::onto(target, cwd, false) {
            Onto::Harm(reason) => Some(Finding::Reject(format!(
                "redirecting output to {target}: {reason}"
            ))),
            Onto::Unknown => Some(ask_write("redirects output to", target)),
            Onto::Fine => None,
        });
    let input = simple.input();
    gravest(redirects.chain(std::iter::once_with(|| {
        command(&simple.words, depth, input, cwd)
    })))
}

/// Where a `cd` (or `pushd`, `popd`) in `words` leads, when the command is one. An `eval`
/// that may change directory (its words name `cd` or are expanded) and a sourced script lead
/// where the gate cannot tell.
fn changed_dir(words: &[String], cwd: &Cwd, cdpath: bool) -> Option<Cwd> {
    let (first, args) = dir_command(words).split_first()?;
    match first.as_str() {
        "cd" => Some(cwd.cd(args, cdpath)),
        "pushd" if !args.is_empty() => Some(cwd.cd(args, cdpath)),
        "pushd" | "popd" | "source" | "." => Some(cwd.unknown()),
        "eval" if args.iter().map(String::as_str).any(may_change_dir) => Some(cwd.unknown()),
        _ => None,
    }
}

/// `words` from the command that may change directory on: shell grammar, assignments, and
/// what runs a builtin in this shell (`builtin`, `command`, `time`, `time -p`) left out.
fn dir_command(words: &[String]) -> &[String] {
    let mut words = program_words(words);
    loop {
        words = match words {
            [first, p, rest @ ..] if first == "time" && p == "-p" => rest,
            [first, rest @ ..] if matches!(first.as_str(), "builtin" | "command" | "time") => rest,
            _ => return words,
        };
        words = program_words(words);
    }
}

/// Whether the word `word` of an `eval` may change directory: it names `cd`, `pushd` or
/// `popd`, or the shell expands it.
fn may_change_dir(word: &str) -> bool {
    ["cd", "pushd", "popd"].iter().any(|w| word.contains(w)) || paths::expands(word)
}

/// Check one command's words, run at `depth` from `cwd` with `input` on standard input:
/// wrappers and shells are looked through, then the rules judge the program. What the
/// variables it sets run is judged too (`PAGER='rm -rf ~' git log`, `env GIT_SSH_COMMAND=...
/// git fetch`); one whose value is code the gate cannot see (`BASH_ENV=./x`) asks.
fn command(words: &[String], depth: u32, input: Input<'_>, cwd: &Cwd) -> Option<Finding> {
    use shell_syntax::environment::{changes_what_runs, lines_set};
    let unseen = changes_what_runs(words).map(|why| {
        Finding::Ask(format!(
            "cannot tell what `{}` runs ({why}): approve running it?",
            shown(words)
        ))
    });
    let set = lines_set(words);
    let values = set.iter().map(|line| check_line(line, depth + 1, cwd));
    gravest(
        [unseen]
            .into_iter()
            .chain(values)
            .chain([program(words, depth, input, cwd)]),
    )
}

/// [`command`], for what its program runs.
fn program(words: &[String], depth: u32, input: Input<'_>, cwd: &Cwd) -> Option<Finding> {
    if depth > MAX_DEPTH {
        return Some(too_deep());
    }
    let words = program_words(words);
    let (first, args) = words.split_first()?;
    // `[` is the test command, not a glob.
    let test = first == "[" || first == "[[";
    if paths::expands(first) || (paths::has_glob(first) && !test) {
        return Some(Finding::Ask(format!(
            "runs `{}`, and this gate cannot tell which program that is until the shell \
             expands `{}`: approve running it?",
            shown(words),
            shown(std::slice::from_ref(first))
        )));
    }
    let name = basename(first);
    if let Some((runs, dir)) = wrappers::runs(name, args) {
        // A wrapper may start its command elsewhere: `env -C /`, `sudo -i` (the user's home).
        let cwd = &dir.map_or_else(|| cwd.clone(), |dir| cwd.cd(&["--".to_owned(), dir], false));
        return wrapped(runs, words, depth, input, cwd);
    }
    if let Some(script) = wrappers::script(name, args) {
        return shell(name, script, input, depth, cwd);
    }
    rules(name, args, depth, cwd)
}

/// What a wrapper (the command `words`) runs: `runs`, given `input`, in `cwd`.
fn wrapped(
    runs: Runs,
    words: &[String],
    depth: u32,
    input: Input<'_>,
    cwd: &Cwd,
) -> Option<Finding> {
    match runs {
        Runs::Command(inner) => command(&inner, depth + 1, input, cwd),
        Runs::Line(line) => check_line(&line, depth + 1, cwd),
        Runs::Xargs {
            command: inner,
            replace,
            delimiter,
            from_file,
        } => {
            let input = if from_file { Input::Unseen } else { input };
            // xargs gives the commands it starts no input of their own.
            let runs = wrappers::xargs_commands(&inner, replace.as_deref(), delimiter, input);
            gravest(
                runs.iter()
                    .map(|run| command(run, depth + 1, Input::Nothing, cwd)),
            )
        }
        Runs::Unknown(why) => Some(Finding::Ask(format!(
            "cannot tell what `{}` runs ({why}): approve running it?",
            shown(words)
        ))),
        // A part the gate cannot read asks; one it can may still be rejected.
        Runs::All(parts) => gravest(
            parts
                .into_iter()
                .map(|part| wrapped(part, words, depth, input, cwd)),
        ),
    }
}

/// What the shell `name` runs by `script`, given `input` on standard input, started in `cwd`.
fn shell(name: &str, script: Script, input: Input<'_>, depth: u32, cwd: &Cwd) -> Option<Finding> {
    match script {
        Script::Lines(lines) => gravest(lines.iter().map(|line| check_line(line, depth + 1, cwd))),
        Script::File(file) => Some(Finding::Ask(format!(
            "runs the script `{}` with {name}, and this gate cannot read a script file: approve \
             running it?",
            shown(std::slice::from_ref(&file))
        ))),
        Script::Stdin => match input {
            Input::Nothing => None,
            Input::Text(text) => check_line(text, depth + 1, cwd),
            Input::Unseen => Some(Finding::Ask(format!(
                "runs {name} on a script it reads on standard input, which this gate cannot \
                 see: approve running it?"
            ))),
        },
        Script::Unknown(why) => Some(Finding::Ask(format!(
            "cannot tell what {name} runs ({why}): approve running it?"
        ))),
    }
}

/// The rules on programs that destroy: `program` (a base name) run with `args`.
fn rules(program: &str, args: &[String], depth: u32, cwd: &Cwd) -> Option<Finding> {
    match program {
        "find" => find(args, depth, cwd),
        "rm" => rm(args, cwd),
        "mkfs" | "mke2fs" | "mkswap" | "wipefs" | "fdisk" | "sfdisk" | "parted" => {
            Some(Finding::Reject(format!(
                "{program} rewrites a disk or partition table; do that by hand, not through an \
                 agent"
            )))
        }
        p if p.starts_with("mkfs.") => Some(Finding::Reject(format!(
            "{p} formats a filesystem and destroys what was on the device"
        ))),
        "dd" => dd(args, cwd),
        "shred" => gravest(operands(args).map(|a| match paths::onto(a, cwd, true) {
            Onto::Harm(_) => Some(Finding::Reject(format!("shred onto {a} destroys the disk"))),
            Onto::Unknown => Some(ask_write("shreds", a)),
            Onto::Fine => None,
        })),
        "chmod" | "chown" | "chgrp" => recursive_on_system(program, args, cwd),
        "tee" => gravest(operands(args).map(|a| match paths::onto(a, cwd, false) {
            Onto::Harm(reason) => Some(Finding::Reject(format!("tee into {a}: {reason}"))),
            Onto::Unknown => Some(ask_write("tees into", a)),
            Onto::Fine => None,
        })),
        _ => None,
    }
}

/// `words` from the program on: shell grammar (`{`, `if`, `!`...), assignments and the names
/// of `function NAME` and `coproc NAME` left out ([`shell_syntax::program_start`]).
fn program_words(words: &[String]) -> &[String] {
    words
        .get(shell_syntax::program_start(words)..)
        .unwrap_or_default()
}

/// The arguments that are not options.
fn operands(args: &[String]) -> impl Iterator<Item = &String> {
    args.iter().filter(|a| !a.starts_with('-'))
}

fn basename(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// `words` as a command line to quote: on one line, at most [`QUOTE_MAX`] characters.
fn shown(words: &[String]) -> String {
    let line = words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ");
    let mut out: String = line
        .chars()
        .take(QUOTE_MAX)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if line.chars().nth(QUOTE_MAX).is_some() {
        out.push('…');
    }
    out
}

/// The question when `target`, written onto, cannot be told.
fn ask_write(what: &str, target: &str) -> Finding {
    Finding::Ask(format!(
        "{what} `{}`, and this gate cannot tell where that is until the shell expands it: \
         approve writing there?",
        shown(&[target.to_owned()])
    ))
}

/// The question when `target` of `what` (`rm -r`, `chmod -R`) cannot be told.
fn ask_target(what: &str, target: &str) -> Finding {
    Finding::Ask(format!(
        "{what} `{}`: this gate cannot tell what that names until the command runs (a \
         variable, a substitution, a glob, input from a pipe, or a path from a directory it \
         cannot tell): approve running it?",
        shown(&[target.to_owned()])
    ))
}

/// ` (/etc)`, when `word` names `dir` spelled otherwise.
fn named(word: &str, dir: &str) -> String {
    if word == dir {
        String::new()
    } else {
        format!(" ({dir})")
    }
}

/// `find ... -exec CMD {} ;` (and `-execdir`, `-ok`, `-okdir`), and `find / -delete`.
fn find(args: &[String], depth: u32, cwd: &Cwd) -> Option<Finding> {
    let roots = find_roots(args);
    let filtered = find_filtered(args);
    let deleted = roots
        .iter()
        .filter(|_| args.iter().any(|a| a == "-delete"))
        .map(|root| find_delete(root, filtered, cwd));
    let exec = roots
        .iter()
        .flat_map(|root| find_execs(args, root, cwd))
        .map(|(cmd, cwd)| {
            command(&cmd, depth + 1, Input::Nothing, &cwd).map(|finding| match finding {
                Finding::Reject(reason) => Finding::Reject(format!("find -exec: {reason}")),
                Finding::Ask(question) => Finding::Ask(format!("find -exec: {question}")),
            })
        });
    gravest(deleted.chain(exec))
}

/// `find`'s starting points: the words after its leading options (`-H`, `-L`, `-P`, `-D OPTS`,
/// `-OLEVEL`) up to the first test; `.` when there are none. `-files0-from FILE` reads more
/// from a file, which stand as [`wrappers::UNSEEN`].
fn find_roots(args: &[String]) -> Vec<String> {
    let mut start = 0;
    while let Some(a) = args.get(start) {
        match a.as_str() {
            "-H" | "-L" | "-P" => start += 1,
            "-D" => start += 2,
            o if o.starts_with("-O") => start += 1,
            _ => break,
        }
    }
    let mut roots: Vec<String> = args
        .iter()
        .skip(start)
        .take_while(|a| !a.starts_with(['-', '(', '!']))
        .cloned()
        .collect();
    if args.iter().any(|a| a == "-files0-from") {
        roots.push(wrappers::UNSEEN.to_owned());
    } else if roots.is_empty() {
        roots.push(".".to_owned());
    }
    roots
}

/// Whether a test comes before `find`'s `-delete`, so that it removes only some of what is
/// below a starting point; not when an operator lets `-delete` run without the test
/// (`find ~ -name x -o -delete`).
fn find_filtered(args: &[String]) -> bool {
    let Some(at) = args.iter().position(|a| a == "-delete") else {
        return false;
    };
    let or = args
        .iter()
        .any(|a| matches!(a.as_str(), "-o" | "-or" | ","));
    let tested = args
        .get(..at)
        .unwrap_or_default()
        .iter()
        .any(|a| FIND_TESTS.contains(&a.as_str()) || a.starts_with("-newer"));
    tested && !or
}

/// What `find ROOT ... -delete` removes, from `cwd`: a home or system directory is rejected,
/// unless tests choose what goes (`filtered`), when it asks.
fn find_delete(root: &str, filtered: bool, cwd: &Cwd) -> Option<Finding> {
    let whole = match paths::target(root, cwd) {
        Target::Home => "the home directory",
        Target::System(_) => "system files",
        Target::Unknown => return Some(ask_target("find -delete in", root)),
        Target::Other => return None,
    };
    if !filtered {
        return Some(Finding::Reject(format!(
            "find {root} -delete removes {whole}"
        )));
    }
    Some(Finding::Ask(format!(
        "find {} -delete removes what its tests select below it, which this gate cannot tell \
         and may be much of {whole}: approve running it?",
        shown(&[root.to_owned()])
    )))
}

/// The commands `find`'s `-exec`, `-execdir`, `-ok` and `-okdir` run for the files below
/// `root`, each with where it runs: `{}` stands for `root`. `-execdir` and `-okdir` run in
/// each file's directory, which the gate cannot tell.
fn find_execs(args: &[String], root: &str, cwd: &Cwd) -> Vec<(Vec<String>, Cwd)> {
    args.iter()
        .enumerate()
        .filter(|(_, a)| ["-exec", "-execdir", "-ok", "-okdir"].contains(&a.as_str()))
        .map(|(at, action)| {
            let cmd: Vec<String> = args
                .iter()
                .skip(at + 1)
                .take_while(|a| *a != ";" && *a != "+")
                .map(|a| a.replace("{}", root))
                .collect();
            let dir = action.ends_with("dir");
            (cmd, if dir { cwd.unknown() } else { cwd.clone() })
        })
        .collect()
}

fn rm(args: &[String], cwd: &Cwd) -> Option<Finding> {
    let mut recursive = false;
    let mut no_preserve = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    for a in args {
        if !options_done && a == "--" {
            options_done = true;
        } else if !options_done && let Some(long) = a.strip_prefix("--") {
            // GNU rm takes any unambiguous prefix: `--rec`, `--no`.
            recursive |= options::abbreviates(long, "recursive");
            no_preserve |= options::abbreviates(long, "no-preserve-root");
        } else if !options_done && a.starts_with('-') && a.len() > 1 {
            recursive |= a.contains(['r', 'R']);
        } else {
            targets.push(a.as_str());
        }
    }
    if no_preserve {
        return Some(Finding::Reject(
            "rm --no-preserve-root exists only to delete /".into(),
        ));
    }
    if !recursive {
        return None;
    }
    gravest(targets.into_iter().map(|t| match paths::target(t, cwd) {
        Target::Home => Some(Finding::Reject(format!(
            "rm -r {t} deletes the home directory"
        ))),
        Target::System(dir) => Some(Finding::Reject(format!(
            "rm -r {t} deletes a system directory{}",
            named(t, dir)
        ))),
        Target::Unknown => Some(ask_target("rm -r", t)),
        Target::Other => None,
    }))
}

fn dd(args: &[String], cwd: &Cwd) -> Option<Finding> {
    gravest(
        args.iter()
            .filter_map(|a| a.strip_prefix("of="))
            .map(|target| match paths::onto(target, cwd, true) {
                Onto::Harm(_) => Some(Finding::Reject(format!(
                    "dd onto {target} overwrites the disk"
                ))),
                Onto::Unknown => Some(ask_write("dd writes onto", target)),
                Onto::Fine => None,
            }),
    )
}

fn recursive_on_system(program: &str, args: &[String], cwd: &Cwd) -> Option<Finding> {
    let recursive = args.iter().any(|a| match a.strip_prefix("--") {
        Some(long) => options::abbreviates(long, "recursive"),
        None => a.starts_with('-') && a.contains('R'),
    });
    if !recursive {
        return None;
    }
    gravest(operands(args).map(|t| match paths::target(t, cwd) {
        Target::Home | Target::System(_) => Some(Finding::Reject(format!(
            "{program} -R on {t} changes the whole system's permissions"
        ))),
        Target::Unknown => Some(ask_target(&format!("{program} -R"), t)),
        Target::Other => None,
    }))
}

/// `:(){ :|:& };:` and its renamings: a function that pipes itself into itself in background.
fn fork_bomb(line: &str) -> Option<String> {
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let mut search = squeezed.as_str();
    while let Some(pos) = search.find("(){") {
        let name_start = search[..pos]
            .rfind(|c: char| ";&|\n(){}".contains(c))
            .map_or(0, |p| p + 1);
        let name = search[name_start..pos].trim_start_matches("function");
        let body = &search[pos + 3..];
        if !name.is_empty() && body.contains(&format!("{name}|{name}&")) {
            return Some(format!(
                "this defines `{name}` to start two copies of itself forever: a fork bomb"
            ));
        }
        search = &search[pos + 3..];
    }
    None
}
