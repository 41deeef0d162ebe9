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
        let args = action.args_json();
        let is_shell = action.tool.as_deref() == Some("shell") || action.target == "shell";
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
