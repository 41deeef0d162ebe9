//! `shell-guard`: a Passepartout gate that rejects destructive shell commands.
//!
//! It judges what an action would run, not how its tool spells its arguments: every program in
//! the action's effects (which the host derives from the tool's declared schema, so the shell
//! tool's `{"program": "sudo", "args": [...]}` and another tool's `{"exe": "sudo", "params":
//! [...]}` are the same run) is judged as the words of one command. Only for a tool that
//! declares no effects (or when the host names no tool: a reply, a `shell` target, a check made
//! natively) does it also read the arguments the old way, as defence in depth: a
//! `command`/`cmd` string, a `program` with its `args` list, or an `argv` list. No tool gets
//! any trust from its name.
//!
//! It rejects, with a reason a person understands: `rm -r` of `/`, `~` or a top-level system
//! directory; fork bombs; `mkfs`/`wipefs`; `dd` onto a disk device; recursive `chmod`/`chown`
//! of `/`; redirections onto block devices or into `/etc`. Paths are resolved lexically first
//! (`//etc`, `/usr/../etc`, `/./etc` are `/etc`; a relative one against a `cd` earlier in the
//! line), a glob is compared as one (`/e*c` may be `/etc`), and GNU long options count in any
//! abbreviation (`rm --rec --no`). It looks through shells (`sh -c`, `bash -o pipefail -c`,
//! options before `-c` read as the shell reads them), wrappers (`sudo`, `env` with `-S`,
//! `nice`, `timeout`, `stdbuf`, `ionice`, `chrt`, `taskset`, `setsid`, `nohup`, `busybox`,
//! `xargs`, `su -c`, `watch`, `eval`, `unshare`, `systemd-run`, `bwrap`, `ssh HOST CMD`,
//! `parallel`...; each option read by the wrapper's own table, so a value is never taken for
//! the command), options that make an ordinary program run one (`tar --to-command`, `rsync
//! -e`, `git -c core.sshCommand=...`, `sed`'s `e`, `awk`'s `system()`), `find -exec`, command
//! chains, `$(...)`/backtick
//! substitutions and `<(...)`/`>(...)` process substitutions; and it judges what a shell or
//! `xargs` reads on standard input (given by the tool, or a here-string, `bash <<< LINE`) as
//! part of what runs.
//!
//! It fails closed: what it cannot tell asks a person (`require-approval`) instead of passing.
//! That is a program named by an expansion (`$(echo rm) -rf /etc`, `$x -rf /`), a target of a
//! destructive command that the shell expands first or that is relative to a directory it
//! cannot tell (`rm -rf "$D"`, `cd .. && rm -rf etc`), an option of a wrapper or shell it does
//! not know, input it cannot see (`... | xargs rm -rf`, `curl ... | sh`), and a script file run
//! by a shell (`bash x.sh`), which it cannot read.
//!
//! The checks are plain functions, so they run natively: [`check_action`] (an action with its
//! tool and effects) and [`check_command`] (one command line), which the host's benchmark runs
//! beside the component.

mod action;
mod check;
mod paths;

#[cfg(test)]
mod tests;

pub use action::{check_action, command_line};
pub use check::{Finding, check_command};

use passepartout_sdk::context::{effects, tool};
use passepartout_sdk::{Action, Gate, GateInfo, SignalView, Verdict};
use shell_syntax::{options, wrappers};

/// The gate exported by the component.
pub struct ShellGuard;

impl Gate for ShellGuard {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Rejects actions that would run destructive commands (rm -rf /, fork \
                          bombs, mkfs, dd onto disks, chmod -R /, writes to /dev/sd* or /etc), \
                          whichever tool runs them, and asks a person when it cannot tell what \
                          a command runs."
                .into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        check_action(&action, tool().as_ref(), &effects())
    }
}

passepartout_sdk::export_gate!(ShellGuard);
