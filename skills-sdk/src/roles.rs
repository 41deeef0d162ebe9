//! The three roles a plugin can take, and the macros that export them.

use crate::{Action, GateInfo, SignalView, SkillInfo, ToolError, ToolInfo, Verdict};

impl GateInfo {
    /// A gate's description: what it rejects, asks about or changes (shown to operators).
    pub fn new(description: impl Into<String>) -> GateInfo {
        GateInfo {
            description: description.into(),
        }
    }
}

/// A gate: verifies every proposed action before any actuator runs it.
///
/// A gate runs with no filesystem, network, environment, clock or randomness, under a fuel
/// budget: the same action gets the same verdict on any machine.
pub trait Gate {
    /// What this gate refuses or flags, in one sentence.
    fn describe() -> GateInfo;
    /// The verdict on `action`, proposed in response to `signal`.
    fn check(action: Action, signal: SignalView) -> Verdict;
}

/// A tool plugin: one or more named tools the model can call.
pub trait Tool {
    /// The tools offered, with their JSON Schemas.
    fn describe() -> Vec<ToolInfo>;
    /// Run tool `name` with `args` (a JSON object).
    ///
    /// # Errors
    /// A [`ToolError`] saying what was wrong with the call or what failed.
    fn call(name: String, args: String) -> Result<String, ToolError>;
}

/// A skill: contributes a prompt for the signals it handles.
pub trait Skill {
    /// What the skill is for, in one sentence.
    fn describe() -> SkillInfo;
    /// Whether the skill handles `signal`. Keep it cheap.
    fn triggers(signal: SignalView) -> bool;
    /// The prompt to use in place of the signal's raw text, if any.
    fn prompt(signal: SignalView) -> Option<String>;
}

/// Export a type implementing [`Gate`] as this component's `gate` role.
#[macro_export]
macro_rules! export_gate {
    ($ty:ty) => {
        #[doc(hidden)]
        pub struct __PassepartoutGate;
        $crate::__gate_guest!(__PassepartoutGate, $ty, $crate::bindings::gate);
        // Natively (unit tests, benchmarks) there is no component to export from.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::gate::__export_gate_world!(__PassepartoutGate with_types_in $crate::bindings::gate);
    };
}

/// Export a type implementing [`Tool`] as this component's `tool` role.
#[macro_export]
macro_rules! export_tool {
    ($ty:ty) => {
        #[doc(hidden)]
        pub struct __PassepartoutTool;
        $crate::__tool_guest!(__PassepartoutTool, $ty, $crate::bindings::tool);
        // Natively (unit tests, benchmarks) there is no component to export from.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::tool::__export_tool_world!(__PassepartoutTool with_types_in $crate::bindings::tool);
    };
}

/// Export a type implementing both [`Tool`] and [`Gate`] as a tool that brings its own gate
/// (the `guarded-tool-plugin` world). The host asks that gate about every action naming one of
/// this plugin's tools, besides every other gate (and, when a gate rewrites an action into one
/// naming another tool, decides again which gates apply); it never asks it about other tools.
/// Its manifest says `kinds = ["tool", "gate"]`.
#[macro_export]
macro_rules! export_guarded_tool {
    ($ty:ty) => {
        #[doc(hidden)]
        pub struct __PassepartoutGuardedTool;
        $crate::__tool_guest!(__PassepartoutGuardedTool, $ty, $crate::bindings::tool);
        $crate::__gate_guest!(__PassepartoutGuardedTool, $ty, $crate::bindings::gate);
        // Both roles' exports: the component then exports `tool` and `gate` and imports what
        // the code uses of both worlds, which is the `guarded-tool-plugin` world.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::tool::__export_tool_world!(__PassepartoutGuardedTool with_types_in $crate::bindings::tool);
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::gate::__export_gate_world!(__PassepartoutGuardedTool with_types_in $crate::bindings::gate);
    };
}

/// Export a type implementing [`Skill`] as this component's `skill` role.
#[macro_export]
macro_rules! export_skill {
    ($ty:ty) => {
        #[doc(hidden)]
        pub struct __PassepartoutSkill;
        impl $crate::bindings::skill::exports::passepartout::plugin::skill::Guest
            for __PassepartoutSkill
        {
            fn describe() -> $crate::SkillInfo {
                $crate::__private::init();
                <$ty as $crate::Skill>::describe()
            }
            fn triggers(signal: $crate::SignalView) -> bool {
                $crate::__private::init();
                <$ty as $crate::Skill>::triggers(signal)
            }
            fn prompt(signal: $crate::SignalView) -> Option<String> {
                $crate::__private::init();
                <$ty as $crate::Skill>::prompt(signal)
            }
        }
        // Natively (unit tests, benchmarks) there is no component to export from.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::skill::__export_skill_world!(__PassepartoutSkill with_types_in $crate::bindings::skill);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __gate_guest {
    ($wrapper:ident, $ty:ty, $($world:tt)*) => {
        impl $($world)*::exports::passepartout::plugin::gate::Guest for $wrapper {
            fn describe() -> $crate::GateInfo {
                $crate::__private::init();
                <$ty as $crate::Gate>::describe()
            }
            fn check(action: $crate::Action, signal: $crate::SignalView) -> $crate::Verdict {
                $crate::__private::init();
                <$ty as $crate::Gate>::check(action, signal)
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __tool_guest {
    ($wrapper:ident, $ty:ty, $($world:tt)*) => {
        impl $($world)*::exports::passepartout::plugin::tool::Guest for $wrapper {
            fn describe() -> Vec<$crate::ToolInfo> {
                $crate::__private::init();
                <$ty as $crate::Tool>::describe()
            }
            fn call(name: String, args: String) -> Result<String, $crate::ToolError> {
                $crate::__private::init();
                <$ty as $crate::Tool>::call(name, args)
            }
        }
    };
}
