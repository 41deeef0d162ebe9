//! `passepartout call` and `passepartout check`: run a tool or the gates from the shell.

use std::process::ExitCode;

use anyhow::Context as _;
use passepartout::runtime::types::{Action, SignalView, Verdict};
use passepartout::runtime::{Kind, Plugin};

use super::Loaded;

pub fn tool(loaded: &Loaded, tool: &str, args: &str) -> anyhow::Result<ExitCode> {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(args)
        .with_context(|| format!("the arguments must be a JSON object, got {args:?}"))?;
    let plugin = loaded
        .report
        .plugins
        .iter()
        .find(|p| p.tools.iter().any(|t| t.name == tool))
        .with_context(|| {
            format!("no loaded plugin offers a tool named {tool:?} (see `passepartout plugins`)")
        })?;
    match plugin.call_tool(tool, args) {
        Ok(out) => {
            println!("{out}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ActionJson {
    #[serde(default = "default_target")]
    target: String,
    tool: Option<String>,
    #[serde(default)]
    args: serde_json::Map<String, serde_json::Value>,
    text: Option<String>,
    explanation: Option<String>,
}

fn default_target() -> String {
    "tool".into()
}

pub fn check(loaded: &Loaded, action: &str) -> anyhow::Result<ExitCode> {
    let a: ActionJson = serde_json::from_str(action).context("the action is not valid JSON of the form {\"target\", \"tool\", \"args\", \"text\", \"explanation\"}")?;
    let mut action = Action {
        target: a.target,
        tool: a.tool,
        args: serde_json::Value::Object(a.args).to_string(),
        text: a.text,
        explanation: a.explanation,
    };
    let signal = SignalView {
        kind: "request".into(),
        sensor: Some("user-input".into()),
        text: None,
        source: Some("cli".into()),
        depth: 0,
        payload: "{}".into(),
    };
    let mut gates: Vec<&Plugin> = loaded
        .report
        .plugins
        .iter()
        .filter(|p| p.is(Kind::Gate))
        .collect();
    gates.sort_by_key(|p| std::cmp::Reverse(p.priority));
    for gate in gates {
        let verdict = gate.check(&action, &signal);
        match verdict {
            Ok(Verdict::Pass) => println!("{} (priority {}): pass", gate.id.name, gate.priority),
            Ok(Verdict::Modify(new)) => {
                println!("{}: modify -> {}", gate.id.name, new.args);
                action = new;
            }
            Ok(Verdict::RequireApproval(why)) => {
                println!("{}: require approval: {why}", gate.id.name)
            }
            Ok(Verdict::Reject(why)) => {
                println!("{}: reject: {why}", gate.id.name);
                return Ok(ExitCode::FAILURE);
            }
            Err(e) => {
                println!("{}: reject (fail closed): {e}", gate.id.name);
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
