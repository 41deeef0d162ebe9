//! `explanation`: a Passepartout gate that makes actions which change things say why.
//!
//! The seed's policy: an action that is not read-only must carry an explanation of a few words
//! (by default at least 3 words and 12 characters), else it is rejected with a reason that says
//! what to add. Read-only, and so let through without one:
//!
//! - replies to a person: any action whose target is neither `tool` nor `shell`;
//! - calls of a tool that declares itself read-only (its `read-only` flag, which the host
//!   passes on as the tool's identity);
//! - calls of a tool named in the `read_only_tools` config list: an operator's override for
//!   tools that do not declare it.
//!
//! Whatever the flag or the list say, an action whose effects run a program always needs an
//! explanation; so does a call of a tool the host does not know (no identity), of an opaque
//! tool (not read-only, no declared effects), and a `shell` action. No tool is trusted for its
//! name alone: the list is empty by default. See [`Config`] and plugin.toml.
//!
//! The check itself is [`check_action`], a plain function, so it runs natively in tests.

mod config;

#[cfg(test)]
mod tests;

pub use config::Config;

use passepartout_sdk::context::{Effects, ToolIdentity, effects, tool};
use passepartout_sdk::{Action, Gate, GateInfo, LogLevel, SignalView, Verdict};

/// Longest tool or program name quoted in a reason.
const NAME_MAX: usize = 64;

/// Whether `action` changes nothing, given the tool it names (`None` when the host knows none)
/// and what it would do.
pub fn is_read_only(
    action: &Action,
    tool: Option<&ToolIdentity>,
    effects: &Effects,
    config: &Config,
) -> bool {
    match action.target.as_str() {
        "tool" if effects.programs.is_empty() => {
            let declared = tool.is_some_and(|t| t.read_only);
            let listed = action
                .tool
                .as_deref()
                .is_some_and(|name| config.read_only_tools.iter().any(|t| t == name));
            declared || listed
        }
        "tool" | "shell" => false,
        _ => true,
    }
}

/// The verdict on `action` under `config`, given its tool and effects as for [`is_read_only`].
pub fn check_action(
    action: &Action,
    tool: Option<&ToolIdentity>,
    effects: &Effects,
    config: &Config,
) -> Verdict {
    if is_read_only(action, tool, effects, config) {
        return Verdict::Pass;
    }
    let explanation = action.explanation.as_deref().unwrap_or_default().trim();
    let chars = explanation.chars().count();
    let words = explanation
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count();
    if chars >= config.min_chars && words >= config.min_words {
        return Verdict::Pass;
    }
    let short = |name: &str| name.chars().take(NAME_MAX).collect::<String>();
    let mut what = match action.tool.as_deref() {
        Some(name) if action.target == "tool" => format!("calling `{}`", short(name)),
        _ if action.target == "shell" => "running a shell command".to_owned(),
        _ => "a tool call that names no tool".to_owned(),
    };
    if let Some(run) = effects.programs.first() {
        what.push_str(&format!(", which runs `{}`,", short(&run.program)));
    }
    let problem = if explanation.is_empty() {
        "this one has none".to_owned()
    } else {
        format!("this one is too short ({chars} characters, {words} words)")
    };
    Verdict::Reject(format!(
        "{what} can change things, so it needs an explanation, and {problem}. Add an \
         `explanation` saying in a sentence why it is needed (at least {} words and {} \
         characters, e.g. \"save the meeting notes the user dictated\"), then propose it again.",
        config.min_words, config.min_chars
    ))
}

/// The gate exported by the component.
pub struct Explanation;

impl Gate for Explanation {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects actions that can change things (tools that do not declare \
                          themselves read-only, anything that runs a program) when they carry \
                          no explanation of at least a few words."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        let (config, warnings) = Config::from_json(&passepartout_sdk::config());
        for warning in warnings {
            passepartout_sdk::log(LogLevel::Warn, &format!("config: {warning}"));
        }
        check_action(&action, tool().as_ref(), &effects(), &config)
    }
}

passepartout_sdk::export_gate!(Explanation);
