//! `approval`: a Passepartout gate that turns some actions into questions for a person.
//!
//! Nothing is refused here: a matching action becomes `require-approval`, and runs only if a
//! person approves it. It judges what an action would do, from the effects the host derives
//! from the tool's declared schema, not from how the tool names its arguments. The rules come
//! from the plugin's configuration (see [`Config`] and the commented `[config]` in
//! plugin.toml), tried in this order, the first match asking:
//!
//! 1. `dangerous_tools`: tools whose every call needs approval (by the name called, or the
//!    tool's own name in its plugin);
//! 2. `programs`: actions whose effects run one of these programs (`sudo`, `kill`, `dd`...),
//!    whichever tool runs them, looking through wrappers and shells (each wrapper's options
//!    read by its own table: `env -S`, `timeout --signal KILL 5`, `nice --adjustment 5`,
//!    `xargs --max-args 1`, `busybox APPLET`) and through what a shell or `xargs` reads on
//!    standard input; and actions that run something it cannot tell (a program named by an
//!    expansion, a wrapper option it does not know, a script fed on input it cannot see, code a
//!    variable names that it cannot see: `BASH_ENV=...`); what a variable set before a command
//!    runs (`GIT_SSH_COMMAND='sudo sh' git fetch`, `EDITOR=...`) is read as a command line;
//! 3. `workspace`: actions whose effects write a path outside the workspace, or a relative one;
//!    and `protected_paths`: writes inside it to files that configure what runs later outside
//!    the sandbox (`.git/`, `.envrc`, `.vscode/`, `.github/workflows/`...), by the action's
//!    effects or by what its command lines write (redirections, and what
//!    [`shell_syntax::writes`] reads: `tee`, `cp`, `mv`, `sed -i`, `curl -o`, `tar -x -C`...);
//! 4. `known_hosts`: actions whose effects fetch a URL whose host is not listed, or cannot be
//!    told.
//!
//! Defence in depth, for what declares no effects: the arguments of a tool that declares none
//! (or of an action the host names no tool for: a `shell` target, a check made natively) are
//! also read the old way for programs (a `command`/`cmd` line, a `program` with its `args`
//! list and `stdin`, an `argv` list); and the `path` of a tool listed in `write_tools` and the
//! `url` of one listed in `fetch_tools` are judged as a write and a fetch too, whatever it
//! declares.
//!
//! Only actions aimed at `tool` or `shell` are looked at: a reply to a person runs nothing.
//! The check itself is [`check_action`], a plain function, so it runs natively in tests.

mod config;
mod paths;
mod rules;
mod shell;
mod url;

#[cfg(test)]
mod tests;

pub use config::Config;

use passepartout_sdk::context::{Effects, ToolIdentity, effects, tool};
use passepartout_sdk::{Action, Gate, GateInfo, LogLevel, SignalView, Verdict};
use serde_json::Value;
use shell_syntax::wrappers;

use rules::Run;

/// The verdict on `action` under `config`, given the tool it names (`None` when the host knows
/// none) and what it would do: the question for a person when a rule matches.
pub fn check_action(
    action: &Action,
    tool: Option<&ToolIdentity>,
    effects: &Effects,
    config: &Config,
) -> Verdict {
    if action.target != "tool" && action.target != "shell" {
        return Verdict::Pass;
    }
    let called = action.tool.as_deref().unwrap_or_default();
    let names: Vec<&str> = std::iter::once(called)
        .chain(tool.map(|t| t.tool.as_str()))
        .collect();
    let listed = |list: &[String]| list.iter().any(|t| names.contains(&t.as_str()));
    let (write_tool, fetch_tool) = (listed(&config.write_tools), listed(&config.fetch_tools));
    // Parsing a large body costs fuel: only when the args are read below.
    let sniff = effects.programs.is_empty();
    let args = if sniff || write_tool || fetch_tool {
        action.args_json()
    } else {
        Value::Null
    };

    let mut runs: Vec<Run> = effects.programs.iter().map(Run::of_effect).collect();
    // A tool that declares no program may still carry a command under an undeclared name.
    if sniff {
        runs.extend(Run::sniffed(&args));
    }
    let mut writes: Vec<&str> = effects.writes.iter().map(|w| w.guest.as_str()).collect();
    writes.extend(args["path"].as_str().filter(|_| write_tool));
    let mut urls: Vec<&str> = effects.urls.iter().map(|u| u.url.as_str()).collect();
    urls.extend(args["url"].as_str().filter(|_| fetch_tool));

    // What each run runs and writes, read once for the rules below.
    let found: Vec<_> = runs.iter().map(|r| r.found(&config.programs)).collect();
    rules::dangerous_tool(&names, action, config)
        .or_else(|| rules::programs(&runs, &found))
        .or_else(|| {
            writes.iter().find_map(|p| {
                rules::outside_workspace(p, config)
                    .or_else(|| rules::protected_path(p, config, false))
            })
        })
        // What a command line writes is judged for protected paths only: a relative target
        // (`> out.log`) is where the tool runs it, in the workspace, and its mounts hold it.
        .or_else(|| {
            found.iter().find_map(|f| {
                f.written()
                    .iter()
                    .find_map(|p| rules::protected_path(p, config, f.dotglob))
            })
        })
        .or_else(|| urls.iter().find_map(|u| rules::unknown_host(u, config)))
        .map_or(Verdict::Pass, Verdict::RequireApproval)
}

/// The gate exported by the component.
pub struct Approval;

impl Gate for Approval {
    fn describe() -> GateInfo {
        GateInfo {
            description: "Asks a person to approve actions that run privileged or disruptive \
                          programs (or programs it cannot tell), write outside the workspace or \
                          to files there that configure what runs outside the sandbox, or fetch \
                          from hosts not fetched before, whichever tool does it, and calls of \
                          tools marked as always needing approval."
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

passepartout_sdk::export_gate!(Approval);
