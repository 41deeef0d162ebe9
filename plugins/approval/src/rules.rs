//! The rules, each the question to ask when it matches, and the text helpers they share.

use passepartout_sdk::Action;
use passepartout_sdk::context::ProgramRun;
use serde_json::Value;

use crate::shell::Found;
use crate::wrappers::{self, Input};
use crate::{Config, paths, shell, url};
use shell_syntax::split::{Simple, quote as shell_quote, split};

/// Longest piece of an action quoted in a question.
const QUOTE_MAX: usize = 200;

/// One program run, or one command line, an action would run.
pub struct Run {
    /// The program and its arguments, with what it reads on standard input, when the run is
    /// one program.
    program: Option<(Vec<String>, Option<String>)>,
    /// The simple commands of the command lines it runs: what they read on standard input is
    /// their here-string, or cannot be seen.
    commands: Vec<Simple>,
    /// How it is shown to a person.
    shown: String,
}

impl Run {
    /// A program run from the action's effects: the program and its argv, with its standard
    /// input (a shell given none runs it; `xargs` adds its words to its command). A program
    /// name that is itself a command line (`sudo reboot` in place of a name) is read as one
    /// too: a tool may hand it to a shell.
    pub fn of_effect(run: &ProgramRun) -> Run {
        // A whole command line: read it as a shell would, not by its whitespace-split words,
        // and what it feeds a shell it starts.
        if let Some(line) = &run.line {
            let mut commands = split(line);
            let name = run.program.rsplit('/').next().unwrap_or_default();
            if let Some(script) = run.stdin.as_deref()
                && wrappers::script(name, &[]).is_some()
            {
                commands.extend(split(script));
            }
            return Run {
                program: None,
                commands,
                shown: line.clone(),
            };
        }
        let mut words = vec![run.program.clone()];
        words.extend(run.argv.iter().cloned());
        let mut out = Run::words(words, run.stdin.clone());
        if run
            .program
            .contains(|c: char| c.is_whitespace() || ";&|`$()".contains(c))
        {
            out.commands.extend(split(&run.program));
        }
        out
    }

    /// The runs an action's arguments spell, read by key (for tools that declare no effects):
    /// `command`/`cmd` lines, a `program` with its `args`, an `argv` list; with the `stdin`
    /// text a program is given.
    pub fn sniffed(args: &Value) -> Vec<Run> {
        let stdin = args["stdin"].as_str().map(String::from);
        let mut runs: Vec<Run> = ["command", "cmd"]
            .iter()
            .filter_map(|key| args[*key].as_str())
            .map(|line| Run {
                program: None,
                commands: split(line),
                shown: line.to_owned(),
            })
            .collect();
        if let Some(program) = args["program"].as_str() {
            let mut words = vec![program.to_owned()];
            words.extend(strings(&args["args"]));
            runs.push(Run::words(words, stdin.clone()));
        }
        if args["argv"].is_array() {
            runs.push(Run::words(strings(&args["argv"]).collect(), stdin));
        }
        runs
    }

    fn words(words: Vec<String>, stdin: Option<String>) -> Run {
        let shown = words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        Run {
            program: Some((words, stdin)),
            commands: Vec::new(),
            shown,
        }
    }

    /// What its commands run, by the `programs` entries, and what they write.
    pub fn found(&self, programs: &[Vec<String>]) -> Found {
        let mut found = Found::default();
        if let Some((words, stdin)) = &self.program {
            let input = stdin.as_deref().map_or(Input::Nothing, Input::Text);
            shell::matches(words, programs, input, &mut found);
        }
        for simple in &self.commands {
            shell::command(simple, programs, &mut found);
        }
        found
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

/// Rule 2: some of `runs` run programs listed in `programs`, or run something this gate cannot
/// tell (a program named by an expansion, one behind a wrapper option it does not know, a
/// script fed on input it cannot see): the operator's list cannot be checked against it.
/// `found` is what each of `runs` was found to run ([`Run::found`]), in the same order.
pub fn programs(runs: &[Run], found: &[Found]) -> Option<String> {
    let mut all = Found::default();
    let (mut asked, mut unclear) = (Vec::new(), Vec::new());
    for (run, here) in runs.iter().zip(found) {
        let shown = format!("`{}`", quote(&run.shown));
        if !here.programs.is_empty() {
            asked.push(shown);
        } else if !here.unclear.is_empty() {
            unclear.push(shown);
        }
        all.merge(here);
    }
    if !all.programs.is_empty() {
        return Some(format!(
            "runs {}: approve running {}?",
            and_list(&all.programs),
            asked.join(" and ")
        ));
    }
    (!all.unclear.is_empty()).then(|| {
        format!(
            "cannot tell what {} runs ({}), so not whether it runs a program on the approval \
             plugin's list: approve running it?",
            unclear.join(" and "),
            quote(&all.unclear.join("; "))
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

/// Rule 3b: `path`, written inside the workspace, is one of `protected_paths` or inside one:
/// a file that configures what runs later, outside the sandbox (git hooks and config, direnv,
/// editor tasks, CI workflows). A relative path is matched as written; its globs match names
/// starting with `.` only with `dotglob` ([`paths::protected`]).
pub fn protected_path(path: &str, config: &Config, dotglob: bool) -> Option<String> {
    let normal = paths::normalise(path).unwrap_or_else(|| path.to_owned());
    // `tee .env{rc,}` writes both names (each read after its expansion: `{.git/info,a}/../x`);
    // braces too many to expand may name anything.
    let expanded: Vec<String> = match shell_syntax::glob::expand_braces(path) {
        Some(words) => words
            .into_iter()
            .map(|w| paths::normalise(&w).unwrap_or(w))
            .collect(),
        None => vec!["/$".repeat(16)],
    };
    let entry = config.protected_paths.iter().find(|entry| {
        expanded
            .iter()
            .any(|one| paths::protected(one, entry, dotglob))
    })?;
    let as_written = if normal == path {
        String::new()
    } else {
        format!(" (`{}` as written)", quote(path))
    };
    Some(format!(
        "writes `{}`{as_written}, which `{}` on the approval plugin's protected_paths covers: \
         such files configure programs that run later outside the sandbox (git hooks and \
         config, direnv, editor tasks, CI), so a change there can run code on this machine. \
         Approve writing it?",
        quote(&normal),
        quote(entry)
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

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
