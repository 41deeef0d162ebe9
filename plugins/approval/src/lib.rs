//! `approval`: a Passepartout gate that turns some actions into questions for a person.
//!
//! Nothing is refused here: a matching action becomes `require-approval`, and runs only if a
//! person approves it. The rules come from the plugin's configuration (see [`Config`] and the
//! commented `[config]` in plugin.toml), tried in this order, the first match asking:
//!
//! 1. `dangerous_tools`: tools whose every call needs approval;
//! 2. `programs`: shell actions that run one of these programs (`sudo`, `kill`, `dd`...): any
//!    action whose args carry a `command`/`cmd` line, a `program` (with its `args` list) or an
//!    `argv` list;
//! 3. `workspace`: calls of `write_tools` whose `path` is outside the workspace, or relative;
//! 4. `known_hosts`: calls of `fetch_tools` whose `url` host is not listed, or cannot be told.
//!
//! Only actions aimed at `tool` or `shell` are looked at: a reply to a person runs nothing.
//! The check itself is [`check_action`], a plain function, so it runs natively in tests.

mod config;
mod paths;
mod shell;
mod url;

#[cfg(test)]
mod tests;

pub use config::Config;

use passepartout_sdk::{Action, Gate, GateInfo, LogLevel, SignalView, Verdict};
use serde_json::Value;

/// Longest piece of an action quoted in a question.
const QUOTE_MAX: usize = 200;

/// The verdict on `action` under `config`: the question for a person when a rule matches.
pub fn check_action(action: &Action, config: &Config) -> Verdict {
    if action.target != "tool" && action.target != "shell" {
        return Verdict::Pass;
    }
    let args = action.args_json();
    let tool = action.tool.as_deref().unwrap_or_default();
    dangerous_tool(tool, action, config)
        .or_else(|| programs(&args, config))
        .or_else(|| outside_workspace(tool, &args, config))
        .or_else(|| unknown_host(tool, &args, config))
        .map_or(Verdict::Pass, Verdict::RequireApproval)
}

fn dangerous_tool(tool: &str, action: &Action, config: &Config) -> Option<String> {
    config.dangerous_tools.iter().any(|t| t == tool).then(|| {
        format!(
            "`{}` is on the operator's list of tools that always need approval: approve calling \
             it with {}?",
            quote(tool),
            quote(&action.args)
        )
    })
}

fn programs(args: &Value, config: &Config) -> Option<String> {
    // (the simple commands, the line as shown to a person)
    let mut lines: Vec<(Vec<Vec<String>>, String)> = Vec::new();
    for key in ["command", "cmd"] {
        if let Some(line) = args[key].as_str() {
            lines.push((shell::split(line), line.to_owned()));
        }
    }
    let program = args["program"].as_str().map(|p| {
        let mut words = vec![p.to_owned()];
        words.extend(strings(&args["args"]));
        words
    });
    let argv = args["argv"]
        .is_array()
        .then(|| strings(&args["argv"]).collect());
    for words in [program, argv].into_iter().flatten() {
        let shown = words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        lines.push((vec![words], shown));
    }
    let mut found = Vec::new();
    let mut asked = Vec::new();
    for (simple_commands, shown) in &lines {
        let before = found.len();
        for words in simple_commands {
            shell::matches(words, &config.programs, &mut found);
        }
        if found.len() > before {
            asked.push(format!("`{}`", quote(shown)));
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

fn outside_workspace(tool: &str, args: &Value, config: &Config) -> Option<String> {
    if config.workspace.is_empty() || !config.write_tools.iter().any(|t| t == tool) {
        return None;
    }
    let path = args["path"].as_str()?;
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

fn unknown_host(tool: &str, args: &Value, config: &Config) -> Option<String> {
    if !config.fetch_tools.iter().any(|t| t == tool) {
        return None;
    }
    let url = args["url"].as_str()?;
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

/// The gate exported by the component.
pub struct Approval;

impl Gate for Approval {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Asks a person to approve shell commands that run privileged or \
                          disruptive programs, writes outside the workspace, fetches from hosts \
                          not fetched before, and calls of tools marked as always needing \
                          approval."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        let (config, warnings) = Config::from_json(&passepartout_sdk::config());
        for warning in warnings {
            passepartout_sdk::log(LogLevel::Warn, &format!("config: {warning}"));
        }
        check_action(&action, &config)
    }
}

passepartout_sdk::export_gate!(Approval);
