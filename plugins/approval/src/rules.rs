//! The four rules, each the question to ask when it matches, and the text helpers they share.

use passepartout_sdk::Action;
use passepartout_sdk::context::ProgramRun;
use serde_json::Value;

use crate::{Config, paths, shell, url};

/// Longest piece of an action quoted in a question.
const QUOTE_MAX: usize = 200;

/// One program run, or one command line, an action would run.
pub struct Run {
    /// Its simple commands, each a list of words.
    commands: Vec<Vec<String>>,
    /// How it is shown to a person.
    shown: String,
}

/// Programs that run what they read on standard input as shell code.
const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "busybox",
];

impl Run {
    /// A program run from the action's effects: the program and its argv, one simple command.
    /// A program name that is itself a command line (`sudo reboot` in place of a name) is read
    /// as one too: a tool may hand it to a shell.
    pub fn of_effect(run: &ProgramRun) -> Run {
        // A whole command line: read it as a shell would, not by its whitespace-split words.
        if let Some(line) = &run.line {
            return Run {
                commands: shell::split(line),
                shown: line.clone(),
            };
        }
        let mut words = vec![run.program.clone()];
        words.extend(run.argv.iter().cloned());
        let mut out = Run::words(words);
        // What a shell reads on standard input is what it runs.
        let name = run.program.rsplit('/').next().unwrap_or_default();
        if let Some(script) = run.stdin.as_ref().filter(|_| SHELLS.contains(&name)) {
            out.commands.extend(shell::split(script));
        }
        if run
            .program
            .contains(|c: char| c.is_whitespace() || ";&|`$()".contains(c))
        {
            out.commands.extend(shell::split(&run.program));
        }
        out
    }

    /// The runs an action's arguments spell, read by key (for tools that declare no effects):
    /// `command`/`cmd` lines, a `program` with its `args`, an `argv` list.
    pub fn sniffed(args: &Value) -> Vec<Run> {
        let mut runs: Vec<Run> = ["command", "cmd"]
            .iter()
            .filter_map(|key| args[*key].as_str())
            .map(|line| Run {
                commands: shell::split(line),
                shown: line.to_owned(),
            })
            .collect();
        if let Some(program) = args["program"].as_str() {
            let mut words = vec![program.to_owned()];
            words.extend(strings(&args["args"]));
            runs.push(Run::words(words));
        }
        if args["argv"].is_array() {
            runs.push(Run::words(strings(&args["argv"]).collect()));
        }
        runs
    }

    fn words(words: Vec<String>) -> Run {
        let shown = words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        Run {
            commands: vec![words],
            shown,
        }
    }
}

/// Rule 1: the tool, by any of `names` (as called, its own name), is in `dangerous_tools`.
pub fn dangerous_tool(names: &[&str], action: &Action, config: &Config) -> Option<String> {
    let listed = config
        .dangerous_tools
        .iter()
        .find(|t| names.contains(&t.as_str()))?;
    Some(format!(
        "`{}` is on the operator's list of tools that always need approval: approve calling \
         it with {}?",
        quote(listed),
        quote(&action.args)
    ))
}

/// Rule 2: some of `runs` run programs listed in `programs`.
pub fn programs(runs: &[Run], config: &Config) -> Option<String> {
    let mut found = Vec::new();
    let mut asked = Vec::new();
    for run in runs {
        let before = found.len();
        for words in &run.commands {
            shell::matches(words, &config.programs, &mut found);
        }
        if found.len() > before {
            asked.push(format!("`{}`", quote(&run.shown)));
        }
    }
    (!found.is_empty()).then(|| {
        format!(
            "runs {}: approve running {}?",
            and_list(&found),
            asked.join(" and ")
        )
    })
}

/// Rule 3: `path`, written, is outside the workspace or relative.
pub fn outside_workspace(path: &str, config: &Config) -> Option<String> {
    if config.workspace.is_empty() {
        return None;
    }
    let workspace = config.workspace.join(" or ");
    let Some(normal) = paths::normalise(path) else {
        return Some(format!(
            "writes to `{}`, a relative path that may land outside {workspace}: approve writing \
             it? (Absolute paths inside {workspace} need no approval.)",
            quote(path)
        ));
    };
    if config.workspace.iter().any(|w| paths::inside(&normal, w)) {
        return None;
    }
    let as_written = if normal == path {
        String::new()
    } else {
        format!(" (`{}` as written)", quote(path))
    };
    Some(format!(
        "writes outside {workspace}, to {}{as_written}: approve writing `{}`? (Writes inside \
         {workspace} need no approval.)",
        quote(&normal),
        quote(&normal)
    ))
}

/// Rule 4: `url`, fetched, has a host not in `known_hosts`, or one that cannot be told. The
/// URL is read by this gate's own strict parser, which refuses what parsers may read apart.
pub fn unknown_host(url: &str, config: &Config) -> Option<String> {
    match url::host(url) {
        Ok(host) if url::is_known(&host, &config.known_hosts) => None,
        Ok(host) => Some(format!(
            "fetches from a host not fetched before: {}. Approve fetching `{}`? (Hosts in the \
             approval plugin's known_hosts are fetched without asking.)",
            quote(&host),
            quote(url)
        )),
        Err(why) => Some(format!(
            "fetches `{}`, but cannot tell from which host ({why}): approve fetching it?",
            quote(url)
        )),
    }
}

/// The strings of a JSON list (other items skipped); nothing when it is not a list.
fn strings(value: &Value) -> impl Iterator<Item = String> + '_ {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(String::from))
}

/// `s` fit to quote in one line: control characters as spaces, at most [`QUOTE_MAX`] characters.
fn quote(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(QUOTE_MAX)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().nth(QUOTE_MAX).is_some() {
        out.push('…');
    }
    out
}

/// A word as a shell would need it written: in single quotes when it holds anything special.
fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
