//! Environment variables whose value a program runs: a command line (`PAGER`, `EDITOR`,
//! `GIT_SSH_COMMAND`, `RSYNC_RSH`, `LESSOPEN`...), a program (`GIT_SSH`, `GIT_ASKPASS`...),
//! options (`TAR_OPTIONS`, `ZIPOPT`), text the shell expands (`PS4='$(...)'`), or code the gate
//! cannot see (`BASH_ENV` names a script; git's configuration given in the environment; the
//! JVM's options; `HOME`, where programs find their configuration). A command
//! that sets one before its program (`NAME=value cmd`), through `env` or `sudo` (which keep such
//! assignments in front of the command they run, [`crate::wrappers`]), or for the commands
//! after it (`export NAME=value`), runs that too: [`lines_set`] gives it as command lines to
//! judge, [`changes_what_runs`] says why what it runs cannot be told.
//!
//! Variables that only say where to find programs or libraries (`PATH`, `LD_PRELOAD`,
//! `PYTHONPATH`, `RUSTFLAGS`' `-C linker=`) are not among them: they lead to files, and running
//! a file (`./x`) is judged by its name anyway; treating them as unknown made everyday commands
//! (`PYTHONPATH=. pytest`) ask without protecting anything. An `alias`'s line is judged as a
//! command line too.

use crate::split::{SUBSTITUTION, quote};
use crate::{is_assignment, program_start};

/// What a program does with a variable's value.
#[derive(Clone, Copy)]
enum Runs {
    /// Runs it as a command line.
    Line,
    /// Runs it as a program.
    Program,
    /// Reads it as options of this program (`TAR_OPTIONS`, `ZIPOPT`).
    Options(&'static str),
    /// Reads it as the value of this option of a program (`CARGO_TARGET_DIR` is `cargo
    /// --target-dir`): what the program writes there is judged.
    Value(&'static str),
    /// Runs it as the shell it gives its command lines to (`make`'s `SHELL`): a shell is
    /// what it would run anyway; another program is judged as a program.
    Shell,
    /// Expands it as the shell expands a double-quoted word (prompts).
    Expanded,
    /// Runs code the gate cannot see.
    Unseen,
}

/// The variables, by name.
const VARIABLES: &[(&str, Runs)] = &[
    ("PAGER", Runs::Line),
    ("MANPAGER", Runs::Line),
    ("GIT_PAGER", Runs::Line),
    ("EDITOR", Runs::Line),
    ("VISUAL", Runs::Line),
    ("GIT_EDITOR", Runs::Line),
    ("GIT_SEQUENCE_EDITOR", Runs::Line),
    ("GIT_SSH_COMMAND", Runs::Line),
    ("RSYNC_RSH", Runs::Line),
    ("RSYNC_CONNECT_PROG", Runs::Line),
    ("BROWSER", Runs::Line),
    ("PROMPT_COMMAND", Runs::Line),
    ("LESSOPEN", Runs::Line),
    ("LESSCLOSE", Runs::Line),
    ("GIT_SSH", Runs::Program),
    ("GIT_ASKPASS", Runs::Program),
    ("SSH_ASKPASS", Runs::Program),
    ("GIT_EXTERNAL_DIFF", Runs::Program),
    ("GIT_PROXY_COMMAND", Runs::Program),
    // Build tools run these: make gives `$(CC)` to the shell, cargo runs `RUSTC`.
    ("CC", Runs::Line),
    ("CXX", Runs::Line),
    ("CPP", Runs::Line),
    ("LD", Runs::Line),
    ("AR", Runs::Line),
    ("AS", Runs::Line),
    ("MAKE", Runs::Line),
    ("SHELL", Runs::Shell),
    ("CONFIG_SHELL", Runs::Shell),
    ("RUSTC", Runs::Program),
    ("RUSTDOC", Runs::Program),
    ("RUSTC_WRAPPER", Runs::Program),
    ("RUSTC_WORKSPACE_WRAPPER", Runs::Program),
    ("CARGO_BUILD_RUSTC_WRAPPER", Runs::Program),
    ("CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", Runs::Program),
    ("CARGO_BUILD_RUSTC", Runs::Program),
    ("CARGO_BUILD_RUSTDOC", Runs::Program),
    ("CARGO_HOST_LINKER", Runs::Program),
    // cargo splits a credential provider on blanks and runs it when it needs a token.
    ("CARGO_CREDENTIAL_PROVIDER", Runs::Line),
    ("CARGO_REGISTRY_CREDENTIAL_PROVIDER", Runs::Line),
    ("CARGO_REGISTRY_GLOBAL_CREDENTIAL_PROVIDERS", Runs::Unseen),
    ("CARGO_TARGET_DIR", Runs::Value("cargo --target-dir")),
    ("CARGO_BUILD_BUILD_DIR", Runs::Value("cargo --target-dir")),
    (
        "CARGO_BUILD_ARTIFACT_DIR",
        Runs::Value("cargo --target-dir"),
    ),
    ("CARGO_INSTALL_ROOT", Runs::Value("cargo --root")),
    ("CARGO_DOC_BROWSER", Runs::Line),
    ("CARGO_BUILD_TARGET_DIR", Runs::Value("cargo --target-dir")),
    ("TAR_OPTIONS", Runs::Options("tar")),
    ("ZIPOPT", Runs::Options("zip")),
    ("PS1", Runs::Expanded),
    ("PS2", Runs::Expanded),
    ("PS4", Runs::Expanded),
    ("BASH_ENV", Runs::Unseen),
    ("GIT_ALLOW_PROTOCOL", Runs::Unseen),
    ("GIT_EXEC_PATH", Runs::Unseen),
    ("GIT_TEMPLATE_DIR", Runs::Unseen),
    // The JVM reads options from these: `-XX:OnError=CMD` runs a command line, `-javaagent:`
    // loads code.
    ("JAVA_TOOL_OPTIONS", Runs::Unseen),
    ("_JAVA_OPTIONS", Runs::Unseen),
    ("JDK_JAVA_OPTIONS", Runs::Unseen),
    // Where programs find their configuration (`~/.gitconfig`'s `core.fsmonitor`, `~/.ssh/config`'s
    // `ProxyCommand`), which may be a file the agent wrote.
    ("HOME", Runs::Unseen),
    ("XDG_CONFIG_HOME", Runs::Unseen),
    ("GIT_DIR", Runs::Unseen),
    // cargo's own configuration (`config.toml`: runners, linkers, wrappers).
    ("CARGO_HOME", Runs::Unseen),
    // The names `patch` gives its backups (`.e` + `nvrc`).
    ("SIMPLE_BACKUP_SUFFIX", Runs::Unseen),
    ("VERSION_CONTROL", Runs::Unseen),
    ("PATCH_VERSION_CONTROL", Runs::Unseen),
    ("CURL_HOME", Runs::Unseen),
    ("WGETRC", Runs::Unseen),
];

/// Families of them, by the start of their names: git's configuration given in the
/// environment (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_0`, `GIT_CONFIG_PARAMETERS`), bash's
/// exported functions (`BASH_FUNC_name%%`).
const FAMILIES: &[&str] = &["GIT_CONFIG", "BASH_FUNC_"];

/// Programs that take `NAME=value` operands as variables (`make CC=clang`).
const MAKES: &[&str] = &["make", "gmake", "bmake", "remake"];

/// Builtins that set variables for the commands after them.
const SETTERS: &[&str] = &["export", "declare", "typeset", "readonly", "local"];

/// The variable the assignment `word` (`NAME=value`, `NAME+=value`) sets, what is done with
/// its value and the value; `None` when it is none of [`VARIABLES`] or [`FAMILIES`].
fn read(word: &str) -> Option<(&str, Runs, &str)> {
    let (name, value) = word.split_once('=')?;
    let name = name.strip_suffix('+').unwrap_or(name);
    let name = name.split_once('[').map_or(name, |(name, _)| name);
    if FAMILIES.iter().any(|f| name.starts_with(f)) {
        return Some((name, Runs::Unseen, value));
    }
    // cargo's `target.<triple>.runner`, split on blanks, the program run after it; its
    // `linker`, a program; a registry's credential provider, split on blanks.
    if let Some(rest) = name.strip_prefix("CARGO_TARGET_") {
        if rest.ends_with("_RUNNER") {
            return Some((name, Runs::Line, value));
        }
        if rest.ends_with("_LINKER") {
            return Some((name, Runs::Program, value));
        }
    }
    if name.starts_with("CARGO_REGISTRIES_") && name.ends_with("_CREDENTIAL_PROVIDER")
        || name.starts_with("CARGO_CREDENTIAL_ALIAS_")
    {
        return Some((name, Runs::Line, value));
    }
    // A cargo alias may carry `--config` settings of its own.
    if name.starts_with("CARGO_ALIAS_") {
        return Some((name, Runs::Unseen, value));
    }
    let (_, runs) = VARIABLES.iter().find(|(n, _)| *n == name)?;
    Some((name, *runs, value))
}

/// Whether the word `word` is a shell assignment (`NAME=value`) of a variable whose value runs.
pub fn runs_value(word: &str) -> bool {
    is_assignment(word) && read(word).is_some()
}

/// The assignments of the simple command `words`: before its program, or given to a builtin
/// that sets them for the commands after it.
fn assignments(words: &[String]) -> impl Iterator<Item = (&str, Runs, &str)> {
    let start = program_start(words);
    // `make CC=...` sets its variables from its operands, as the environment would.
    let set_for_later = match words.get(start) {
        Some(program) if SETTERS.contains(&program.as_str()) => words.get(start + 1..),
        Some(program) if MAKES.contains(&program.rsplit('/').next().unwrap_or(program)) => {
            words.get(start + 1..)
        }
        _ => None,
    };
    words
        .get(..start)
        .unwrap_or_default()
        .iter()
        .chain(set_for_later.unwrap_or_default())
        .filter(|w| is_assignment(w))
        .filter_map(|w| read(w))
}

/// The command lines that the variables `words` sets run (a pager, an editor, an ssh command,
/// tar's options as `tar OPTIONS`, a prompt as `echo "PROMPT"`), for the gates to judge as they
/// judge the command itself.
pub fn lines_set(words: &[String]) -> Vec<String> {
    // `alias NAME=LINE`: the line runs wherever NAME is a command later (`bash -c` with
    // `expand_aliases`, an interactive shell).
    let start = program_start(words);
    let aliased = words
        .get(start)
        .filter(|p| p.as_str() == "alias")
        .and(words.get(start + 1..))
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.split_once('=').map(|(_, line)| line.to_owned()));
    assignments(words)
        .filter_map(|(_, runs, value)| match runs {
            Runs::Line => Some(value.trim_start_matches('|').to_owned()),
            Runs::Program => Some(quote(value)),
            Runs::Shell => {
                let name = value.rsplit('/').next().unwrap_or(value);
                (!crate::wrappers::SHELLS.contains(&name)).then(|| quote(value))
            }
            Runs::Options(program) => Some(format!("{program} {value}")),
            Runs::Value(option) => Some(format!("{option} {}", quote(value))),
            Runs::Expanded => Some(format!("echo \"{}\"", value.replace('"', "\\\""))),
            Runs::Unseen => None,
        })
        .chain(aliased)
        .filter(|line| !line.is_empty() && line != SUBSTITUTION)
        .collect()
}

/// Why the simple command `words` runs what the gate cannot see: it sets a variable whose
/// value is code it cannot read (`BASH_ENV`, git's configuration).
pub fn changes_what_runs(words: &[String]) -> Option<String> {
    if let Some(name) = set_unseen(words) {
        return Some(format!(
            "it sets `{name}`, whose value runs, to what it reads or loops over, which this \
             gate does not follow"
        ));
    }
    let (name, _, _) = assignments(words).find(|(_, runs, _)| matches!(runs, Runs::Unseen))?;
    Some(format!(
        "it sets `{name}`, which makes a program run code this gate cannot see"
    ))
}

/// Builtins that set a variable named by an operand to a value the gate does not follow: its
/// input (`read PAGER`), a format (`printf -v PAGER ...`), a loop's words (`for PAGER in ...`).
const INDIRECT_SETTERS: &[&str] = &["read", "mapfile", "readarray", "printf", "for", "select"];

/// The variable among [`VARIABLES`] or [`FAMILIES`] that the simple command `words` sets
/// through one of [`INDIRECT_SETTERS`], if any (any operand that names one counts).
fn set_unseen(words: &[String]) -> Option<&str> {
    let start = program_start(words);
    let program = words.get(start)?;
    if !INDIRECT_SETTERS.contains(&program.as_str()) {
        return None;
    }
    words
        .get(start + 1..)?
        .iter()
        .map(String::as_str)
        .find(|w| read(&format!("{w}=")).is_some())
}

#[cfg(test)]
mod tests {
    use super::{changes_what_runs, lines_set, runs_value};

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn values_that_run_are_lines_to_judge() {
        let lines = |line: &str| lines_set(&words(line));
        assert_eq!(lines("PAGER=cat git log"), ["cat"]);
        assert_eq!(lines("GIT_SSH=/tmp/x git fetch"), ["/tmp/x"]);
        assert_eq!(lines("export EDITOR=vim"), ["vim"]);
        assert_eq!(
            lines("TAR_OPTIONS=--to-command=sh tar xf a"),
            ["tar --to-command=sh"]
        );
        assert_eq!(lines("PS4=$(x) bash -xc true"), ["echo \"$(x)\""]);
        assert_eq!(lines("LESSOPEN=|lesspipe less f"), ["lesspipe"]);
        assert_eq!(lines("ZIPOPT=-TTx zip a.zip f"), ["zip -TTx"]);
        assert_eq!(lines("RUSTC_WRAPPER=./w cargo build"), ["./w"]);
        assert_eq!(lines("CC=clang make"), ["clang"]);
        assert!(lines("SHELL=/bin/bash make").is_empty());
        assert_eq!(lines("make CC=sudo all"), ["sudo"]);
        assert!(lines("cc CC=x").is_empty(), "an operand of another program");
        assert_eq!(lines("SHELL=./x make"), ["./x"]);
        assert_eq!(
            lines("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./r cargo run"),
            ["./r"]
        );
        assert_eq!(
            lines("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=sudo cargo build"),
            ["sudo"]
        );
        assert_eq!(
            lines("CARGO_REGISTRIES_X_CREDENTIAL_PROVIDER=sudo cargo publish"),
            ["sudo"]
        );
        assert_eq!(
            lines("CARGO_TARGET_DIR=.git/t cargo build"),
            ["cargo --target-dir .git/t"]
        );
        assert!(lines("RUSTFLAGS='-D warnings' cargo build").is_empty());
        assert_eq!(lines("alias ls=sudo"), ["sudo"]);
        assert!(lines("RUST_LOG=debug PYTHONPATH=. LD_PRELOAD=x.so PATH=/tmp ls").is_empty());
        assert!(
            lines("ls PAGER=x").is_empty(),
            "an argument, not an assignment"
        );
        assert!(runs_value("GIT_SSH_COMMAND=x") && !runs_value("PATH=/tmp"));
    }

    #[test]
    fn code_the_gate_cannot_see_is_told() {
        let why = |line: &str| changes_what_runs(&words(line));
        assert!(why("BASH_ENV=./x bash -c true").is_some_and(|w| w.contains("BASH_ENV")));
        assert!(why("CARGO_HOME=./h cargo build").is_some_and(|w| w.contains("CARGO_HOME")));
        assert!(why("CARGO_ALIAS_B=run cargo b").is_some());
        assert!(why("SIMPLE_BACKUP_SUFFIX=nvrc patch -b .e x.diff").is_some());
        assert!(why("GIT_CONFIG_COUNT=1 git log").is_some());
        assert!(why("export GIT_CONFIG_PARAMETERS=x").is_some());
        assert!(why("PAGER=cat git log").is_none());
        assert!(why("HOME=. git status").is_some_and(|w| w.contains("HOME")));
        assert!(
            why("HOME=$HOME make").is_some(),
            "'$HOME' quoted is the directory `$HOME`: no value is taken as no change"
        );
        assert!(why("GIT_DIR=./x git status").is_some());
        assert!(why("read -r PAGER").is_some_and(|w| w.contains("PAGER")));
        assert!(why("printf -v GIT_SSH_COMMAND %s x").is_some());
        assert!(why("read -r line").is_none() && why("printf %s PAGERS").is_none());
        assert!(why("JAVA_TOOL_OPTIONS=-XX:OnError=x java -jar a.jar").is_some());
    }
}
