//! Environment variables that make a program run other code than its own: the dynamic loader's
//! (`LD_PRELOAD=./x.so ls`), the shell's (`BASH_ENV`, `PATH`), and those naming a command a
//! program starts when it needs one (`GIT_SSH_COMMAND`, `PAGER`, `EDITOR`, `RSYNC_RSH`,
//! `LESSOPEN`, `TAR_OPTIONS`...). A command that sets one, before its program (`NAME=value
//! cmd`), through `env` or `sudo` (which keep such assignments in front of the command they
//! run, [`crate::wrappers`]), or for what follows (`export NAME=value`), runs what the gate
//! cannot see from its words: [`changes_what_runs`] says why, and the gates ask.

use crate::{is_assignment, program_start};

/// Variables, by name, whose value is code, a command, a library or where programs are found.
const RISKY: &[&str] = &[
    "PATH",
    "IFS",
    "ENV",
    "BASH_ENV",
    "SHELLOPTS",
    "BASHOPTS",
    "PROMPT_COMMAND",
    "PAGER",
    "MANPAGER",
    "GIT_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXTERNAL_DIFF",
    "GIT_EXEC_PATH",
    "GIT_PROXY_COMMAND",
    "GIT_TEMPLATE_DIR",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "RSYNC_RSH",
    "RSYNC_CONNECT_PROG",
    "TAR_OPTIONS",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "NODE_OPTIONS",
    "NODE_PATH",
    "RUBYOPT",
    "RUBYLIB",
];

/// Families of such variables, by the start of their names: the dynamic loader's (`LD_`,
/// macOS's `DYLD_`), git's configuration given in the environment (`GIT_CONFIG_COUNT`,
/// `GIT_CONFIG_KEY_0`, `GIT_CONFIG_PARAMETERS`), bash's exported functions (`BASH_FUNC_`).
const RISKY_PREFIXES: &[&str] = &["LD_", "DYLD_", "GIT_CONFIG", "BASH_FUNC_"];

/// The directories a `PATH` may list first and still find the system's own programs.
const SYSTEM_DIRS: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// Whether the `PATH` value `value` finds the programs the system's own directories (or the
/// `PATH` it had) find: it lists only those before any other (`/usr/bin:/bin`,
/// `$PATH:./node_modules/.bin`), so no program of the gate's lists is taken from elsewhere.
fn plain_path(value: &str) -> bool {
    for entry in value.split(':') {
        if entry == "$PATH" || entry == "${PATH}" {
            return true;
        }
        if !SYSTEM_DIRS.contains(&entry.trim_end_matches('/')) {
            return false;
        }
    }
    true
}

/// Builtins that set variables for the commands after them.
const SETTERS: &[&str] = &["export", "declare", "typeset", "readonly", "local"];

/// The name of the variable that the assignment `word` (`NAME=value`, `NAME+=value`) sets,
/// when it is one that can make a program run other code than its own.
pub fn risky(word: &str) -> Option<&str> {
    if !is_assignment(word) {
        return None;
    }
    let (name, value) = word.split_once('=')?;
    let appends = name.ends_with('+');
    let name = name.strip_suffix('+').unwrap_or(name);
    if name == "PATH" && (appends || plain_path(value)) {
        return None;
    }
    let name = name.split_once('[').map_or(name, |(name, _)| name);
    let named = RISKY.contains(&name) || RISKY_PREFIXES.iter().any(|p| name.starts_with(p));
    named.then_some(name)
}

/// Why the simple command `words` may run other code than its words name: it sets a [`risky`]
/// variable before its program, or for the commands after it (`export`, `declare`...).
pub fn changes_what_runs(words: &[String]) -> Option<String> {
    let start = program_start(words);
    let before = words.get(..start).unwrap_or_default().iter();
    let set_for_later = match words.get(start) {
        Some(program) if SETTERS.contains(&program.as_str()) => words.get(start + 1..),
        _ => None,
    };
    let name = before
        .chain(set_for_later.unwrap_or_default())
        .find_map(|w| risky(w))?;
    Some(format!(
        "it sets `{name}`, which can make a program run other code than its own"
    ))
}

#[cfg(test)]
mod tests {
    use super::{changes_what_runs, risky};

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn loader_shell_and_command_variables_are_risky() {
        assert_eq!(risky("LD_PRELOAD=./x.so"), Some("LD_PRELOAD"));
        assert_eq!(risky("GIT_SSH_COMMAND=sh"), Some("GIT_SSH_COMMAND"));
        assert_eq!(
            risky("GIT_CONFIG_KEY_0=core.pager"),
            Some("GIT_CONFIG_KEY_0")
        );
        assert_eq!(risky("PATH=/tmp:/usr/bin"), Some("PATH"));
        assert_eq!(risky("PATH=./bin:$PATH"), Some("PATH"));
        assert_eq!(risky("PATH=/usr/bin:/bin"), None, "the system's own");
        assert_eq!(
            risky("PATH=$PATH:./node_modules/.bin"),
            None,
            "appended: shadows none"
        );
        assert_eq!(risky("PATH+=:/opt/x"), None, "appended too");
        assert_eq!(risky("RUST_LOG=debug"), None);
        assert_eq!(risky("LD_PRELOAD"), None, "not an assignment");
    }

    #[test]
    fn a_command_setting_one_is_told() {
        let why = |line: &str| changes_what_runs(&words(line));
        assert!(why("LD_PRELOAD=./x.so ls").is_some_and(|w| w.contains("LD_PRELOAD")));
        assert!(why("A=1 PAGER=sh git log").is_some());
        assert!(why("export GIT_SSH_COMMAND=./x").is_some());
        assert!(why("PATH=/tmp").is_some(), "for the commands after it");
        assert!(why("env -i PATH=/bin ls").is_none());
        assert!(why("RUST_LOG=debug cargo test").is_none());
        assert!(why("export RUST_LOG=debug").is_none());
        assert!(
            why("ls PATH=/tmp").is_none(),
            "an argument, not an assignment"
        );
    }
}
