//! `shell-guard`: a Passepartout gate that rejects destructive shell commands.
//!
//! It looks at every action that runs a shell command (tool `shell`, or any action whose args
//! carry a `command`/`cmd` string, a `program` with its `args` list, or an `argv` list) and rejects, with a reason a person
//! understands: `rm -r` of `/`, `~` or a top-level system directory; fork bombs; `mkfs`/`wipefs`;
//! `dd` onto a disk device; recursive `chmod`/`chown` of `/`; redirections onto block devices or
//! into `/etc`. It looks through `sudo`, `env`, `sh -c`, `xargs`, `find -exec`, `time`,
//! command chains and `$(...)`/backtick substitutions.
//!
//! The check itself is [`check_command`], a plain function, so the host's benchmark can run the
//! very same code natively beside the component.

mod check;
mod words;

pub use check::check_command;

use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

/// The gate exported by the component.
pub struct ShellGuard;

impl Gate for ShellGuard {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects destructive shell commands (rm -rf /, fork bombs, mkfs, dd onto \
                          disks, chmod -R /, writes to /dev/sd* or /etc)."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        let is_shell = action.tool.as_deref() == Some("shell") || action.target == "shell";
        // Parsing a large body (a file being written, a POST) costs fuel; an action that names
        // none of the keys read below cannot carry a command, so it is not parsed at all.
        let keys = ["\"command\"", "\"cmd\"", "\"program\"", "\"argv\""];
        // (A key spelled with a \u escape is parsed, so it cannot hide a command.)
        if !is_shell
            && !action.args.contains("\\u")
            && !keys.iter().any(|k| action.args.contains(k))
        {
            return Verdict::Pass;
        }
        let args = action.args_json();
        let command = ["command", "cmd"]
            .iter()
            .find_map(|key| args[*key].as_str().map(str::to_owned))
            .or_else(|| {
                // The shell tool's form: a program and its arguments as a list.
                let program = args["program"].as_str()?;
                let rest = args["args"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default();
                Some(
                    std::iter::once(program)
                        .chain(rest.iter().filter_map(|a| a.as_str()))
                        .map(words::quote)
                        .collect::<Vec<_>>()
                        .join(" "),
                )
            })
            .or_else(|| {
                args["argv"].as_array().map(|argv| {
                    argv.iter()
                        .filter_map(|a| a.as_str())
                        .map(words::quote)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
            });
        match command {
            Some(command) => match check_command(&command) {
                Some(reason) => Verdict::Reject(reason),
                None => Verdict::Pass,
            },
            None if is_shell => Verdict::Reject(
                "a shell action must carry its program in args.program (with args.args)".into(),
            ),
            None => Verdict::Pass,
        }
    }
}

passepartout_sdk::export_gate!(ShellGuard);

#[cfg(test)]
mod tests {
    use super::*;

    fn action(tool: &str, args: &str) -> Action {
        Action {
            target: "tool".into(),
            tool: Some(tool.into()),
            args: args.into(),
            text: None,
            explanation: None,
        }
    }

    fn signal() -> SignalView {
        SignalView {
            kind: "event".into(),
            sensor: None,
            text: None,
            source: None,
            depth: 0,
            payload: "{}".into(),
        }
    }

    #[test]
    fn a_large_body_without_a_command_is_not_parsed_and_an_escaped_key_still_is() {
        let body = serde_json::json!({"path": "/workspace/a", "content": "x ".repeat(200_000)});
        assert!(matches!(
            ShellGuard::check(action("write-file", &body.to_string()), signal()),
            Verdict::Pass
        ));
        assert!(matches!(
            ShellGuard::check(action("run", r#"{"\u0063md": "rm -rf /"}"#), signal()),
            Verdict::Reject(_)
        ));
        assert!(matches!(
            ShellGuard::check(action("run", r#"{"cmd": "rm -rf /"}"#), signal()),
            Verdict::Reject(_)
        ));
    }
}
