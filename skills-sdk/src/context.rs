//! What a gate may learn about the action under check beyond the action itself: the tool's
//! identity (plugin, version, its declared read-only flag) and the action's **effects**, which
//! the host derives from the tool's declared schema: programs with their argv, paths read and
//! written, URLs fetched, memory writes.
//!
//! Judge effects, not argument names: the `shell` tool runs `{"program": "sudo", "args":
//! ["ls"]}`, another tool may call the same thing `{"exe": ..., "params": ...}`, and both show
//! up here as one [`ProgramRun`] `sudo ["ls"]`.
//!
//! ```no_run
//! use passepartout_sdk::{Action, ActionExt, Verdict};
//!
//! fn check(action: &Action) -> Verdict {
//!     if action.effects().programs.iter().any(|p| p.program == "sudo") {
//!         return Verdict::Reject("sudo is not allowed".into());
//!     }
//!     Verdict::Pass
//! }
//! ```
//!
//! Natively (unit tests of a gate) there is no host: [`testing::with`] sets what these return.

pub use crate::bindings::gate::passepartout::plugin::action_context::{
    ActionEffects as Effects, PathEffect, ProgramRun, ToolIdentity, UrlEffect,
};

use crate::Action;

impl ProgramRun {
    /// The program followed by its arguments, as the words of a command line: `["git", "push",
    /// "origin"]`, to match sequences such as `["git", "push"]` with `windows`.
    pub fn words(&self) -> Vec<&str> {
        std::iter::once(self.program.as_str())
            .chain(self.argv.iter().map(String::as_str))
            .collect()
    }
}

impl Effects {
    /// No effects: a reply, a read-only call that declares none, or an unknown tool.
    pub fn none() -> Effects {
        Effects {
            programs: Vec::new(),
            reads: Vec::new(),
            writes: Vec::new(),
            urls: Vec::new(),
            memory_writes: Vec::new(),
        }
    }

    /// Whether the action does nothing the host can see.
    pub fn is_empty(&self) -> bool {
        self.programs.is_empty()
            && self.reads.is_empty()
            && self.writes.is_empty()
            && self.urls.is_empty()
            && self.memory_writes.is_empty()
    }
}

/// The tool the action under check names, as the host knows it; `None` for a reply or a tool
/// nobody offers. Gates only.
pub fn tool() -> Option<ToolIdentity> {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::gate::passepartout::plugin::action_context::tool()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        testing::CURRENT.with(|c| c.borrow().0.clone())
    }
}

/// What the action under check would do. Gates only.
pub fn effects() -> Effects {
    #[cfg(target_arch = "wasm32")]
    {
        crate::bindings::gate::passepartout::plugin::action_context::effects()
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        testing::CURRENT.with(|c| c.borrow().1.clone())
    }
}

/// The context of an [`Action`] under check, as methods on it.
pub trait ActionExt {
    /// What the action would do: [`effects`].
    fn effects(&self) -> Effects;
    /// The tool it names: [`tool`].
    fn tool_identity(&self) -> Option<ToolIdentity>;
    /// Whether it names a tool that declares it changes nothing. `false` for replies and
    /// unknown tools.
    fn is_read_only(&self) -> bool {
        self.tool_identity().is_some_and(|t| t.read_only)
    }
}

impl ActionExt for Action {
    fn effects(&self) -> Effects {
        effects()
    }
    fn tool_identity(&self) -> Option<ToolIdentity> {
        tool()
    }
}

/// For unit tests of gates, natively: set what [`tool`] and [`effects`] return.
#[cfg(not(target_arch = "wasm32"))]
pub mod testing {
    use super::{Effects, ToolIdentity};
    use std::cell::RefCell;

    thread_local! {
        pub(super) static CURRENT: RefCell<(Option<ToolIdentity>, Effects)> =
            RefCell::new((None, Effects::none()));
    }

    /// Run `f` with `tool` and `effects` as the action's context, as the host would give it.
    pub fn with<T>(tool: Option<ToolIdentity>, effects: Effects, f: impl FnOnce() -> T) -> T {
        let old = CURRENT.with(|c| c.replace((tool, effects)));
        let out = f();
        CURRENT.with(|c| *c.borrow_mut() = old);
        out
    }

    /// A signal for tests: an event with no sensor, text or source, at depth 0.
    pub fn signal() -> crate::SignalView {
        crate::SignalView {
            kind: "event".into(),
            sensor: None,
            text: None,
            source: None,
            depth: 0,
            payload: "{}".into(),
        }
    }

    /// A tool identity for tests: plugin `plugin`, tool `tool`, declaring its effects.
    pub fn tool(plugin: &str, tool: &str, read_only: bool) -> ToolIdentity {
        ToolIdentity {
            plugin: plugin.into(),
            version: "0.1.0".into(),
            tool: tool.into(),
            read_only,
            declares_effects: true,
        }
    }

    /// Effects of running the command line `line` (a tool taking `x-effect: command-line`):
    /// split on whitespace as the host does, with the line kept.
    pub fn command_line(line: &str) -> Effects {
        let mut words = line.split_whitespace().map(str::to_owned);
        Effects {
            programs: vec![super::ProgramRun {
                program: words.next().unwrap_or_default(),
                argv: words.collect(),
                line: Some(line.to_owned()),
                stdin: None,
            }],
            ..Effects::none()
        }
    }

    /// Effects of writing `guest` (on this machine at `host`).
    pub fn write(guest: &str, host: Option<&str>) -> Effects {
        Effects {
            writes: vec![super::PathEffect {
                guest: guest.into(),
                host: host.map(Into::into),
            }],
            ..Effects::none()
        }
    }

    /// Effects of running `program` with `argv`.
    pub fn program(program: &str, argv: &[&str]) -> Effects {
        Effects {
            programs: vec![super::ProgramRun {
                program: program.into(),
                argv: argv.iter().map(|a| (*a).to_owned()).collect(),
                line: None,
                stdin: None,
            }],
            ..Effects::none()
        }
    }
}
