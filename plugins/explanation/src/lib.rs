//! `explanation`: a Passepartout gate that makes actions which change things say why.
//!
//! The seed's policy: an action that is not read-only must carry an explanation of a few words
//! (by default at least 3 words and 12 characters), else it is rejected with a reason that says
//! what to add. Read-only, and so let through without one:
//!
//! - replies to a person: any action whose target is neither `tool` nor `shell`;
//! - calls of a tool named in the `read_only_tools` config list.
//!
//! A gate cannot see the tools' descriptions (nor their `read-only` flags), so the list comes
//! from the plugin's configuration; see [`Config`] and plugin.toml.
//!
//! The check itself is [`check_action`], a plain function, so it runs natively in tests.

mod config;

#[cfg(test)]
mod tests;

pub use config::Config;

use passepartout_sdk::{Action, Gate, GateInfo, LogLevel, SignalView, Verdict};

/// Longest tool name quoted in a reason.
const NAME_MAX: usize = 64;

/// The verdict on `action` under `config`.
pub fn check_action(action: &Action, config: &Config) -> Verdict {
    let tool = action.tool.as_deref();
    let read_only = match action.target.as_str() {
        "tool" => tool.is_some_and(|name| config.read_only_tools.iter().any(|t| t == name)),
        "shell" => false,
        _ => true,
    };
    if read_only {
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
    let what = match tool {
        Some(name) if action.target == "tool" => {
            let name: String = name.chars().take(NAME_MAX).collect();
            format!("calling `{name}`")
        }
        _ if action.target == "shell" => "running a shell command".to_owned(),
        _ => "a tool call that names no tool".to_owned(),
    };
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
            description: "Rejects actions that can change things (shell commands, tools not \
                          configured as read-only) when they carry no explanation of at least a \
                          few words."
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

passepartout_sdk::export_gate!(Explanation);
