//! `shell-guard`: a Passepartout gate that rejects destructive shell commands.
//!
//! It judges what an action would run, not how its tool spells its arguments: every program in
//! the action's effects (which the host derives from the tool's declared schema, so the shell
//! tool's `{"program": "sudo", "args": [...]}` and another tool's `{"exe": "sudo", "params":
//! [...]}` are the same run) is quoted into one command line and checked. Only for a tool that
//! declares no effects (or when the host names no tool: a reply, a `shell` target, a check made
//! natively) does it also read the arguments the old way, as defence in depth: a
//! `command`/`cmd` string, a `program` with its `args` list, or an `argv` list. No tool gets
//! any trust from its name.
//!
//! It rejects, with a reason a person understands: `rm -r` of `/`, `~` or a top-level system
//! directory; fork bombs; `mkfs`/`wipefs`; `dd` onto a disk device; recursive `chmod`/`chown`
//! of `/`; redirections onto block devices or into `/etc`. It looks through `sudo`, `env`,
//! `sh -c`, `xargs`, `find -exec`, `time`, command chains and `$(...)`/backtick substitutions.
//!
//! The checks are plain functions, so they run natively: [`check_action`] (an action with its
//! tool and effects) and [`check_command`] (one command line), which the host's benchmark runs
//! beside the component.

mod action;
mod check;
mod words;

#[cfg(test)]
mod tests;

pub use action::{check_action, command_line};
pub use check::check_command;

use passepartout_sdk::context::{effects, tool};
use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};

/// The gate exported by the component.
pub struct ShellGuard;

impl Gate for ShellGuard {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects actions that would run destructive commands (rm -rf /, fork \
                          bombs, mkfs, dd onto disks, chmod -R /, writes to /dev/sd* or /etc), \
                          whichever tool runs them."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        check_action(&action, tool().as_ref(), &effects())
    }
}

passepartout_sdk::export_gate!(ShellGuard);
