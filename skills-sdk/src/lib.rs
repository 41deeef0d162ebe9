//! # passepartout-sdk
//!
//! Everything a Rust author needs to write a Passepartout plugin: a gate that verifies proposed
//! actions, a tool that does work, or a skill that shapes prompts. Implement one trait, invoke one
//! macro, build for `wasm32-wasip2`: the result is a WebAssembly component that the Passepartout
//! host loads against the `passepartout:plugin@0.1.1` WIT package (the `wit/` folder of this
//! repository; read it for the exact contract).
//!
//! ## A complete gate
//!
//! ```no_run
//! use passepartout_sdk::{Action, ActionExt, Gate, GateInfo, SignalView, Verdict};
//!
//! struct NoSudo;
//!
//! impl Gate for NoSudo {
//!     fn describe() -> GateInfo {
//!         GateInfo::new("Rejects programs run through sudo.")
//!     }
//!
//!     fn check(action: Action, _signal: SignalView) -> Verdict {
//!         // What the action would run, whichever tool and however it names its arguments
//!         // (see the `context` module): never read a tool's argument names.
//!         let sudo = action.effects().programs.iter().any(|run| {
//!             run.program == "sudo" || run.argv.iter().any(|arg| arg == "sudo")
//!         });
//!         if sudo {
//!             Verdict::Reject("sudo is not allowed; run the command without it".into())
//!         } else {
//!             Verdict::Pass
//!         }
//!     }
//! }
//!
//! passepartout_sdk::export_gate!(NoSudo);
//! ```
//!
//! ## A complete tool
//!
//! Its arguments are a type of its own: [`parse_args`] reads a call into it, and [`tool_info`]
//! shows the model that type's JSON Schema, so what the model is told is what the tool parses.
//!
//! ```no_run
//! use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args, schemars, serde, tool_info};
//!
//! /// What `shout` takes (the doc comments are the descriptions the model reads).
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! #[serde(crate = "passepartout_sdk::serde")]
//! #[schemars(crate = "passepartout_sdk::schemars")]
//! struct Shout {
//!     /// The text to return in capital letters.
//!     text: String,
//! }
//!
//! struct Upper;
//!
//! impl Tool for Upper {
//!     fn describe() -> Vec<ToolInfo> {
//!         // Arguments that name a program, its argv, a command line, a path read or written,
//!         // a URL or a memory node carry "x-effect" (program, argv, command-line, path-read,
//!         // path-write, url, memory-write: `#[schemars(extend("x-effect" = "path-read"))]`
//!         // on the field), so that gates see what a call does; this tool touches nothing.
//!         vec![tool_info::<Shout>("shout", "Returns the text in capital letters.", true)]
//!     }
//!
//!     fn call(name: String, args: String) -> Result<String, ToolError> {
//!         match name.as_str() {
//!             "shout" => Ok(parse_args::<Shout>(&args)?.text.to_uppercase()),
//!             other => Err(ToolError::InvalidArgs(format!("no tool named {other}"))),
//!         }
//!     }
//! }
//!
//! passepartout_sdk::export_tool!(Upper);
//! ```
//!
//! ## Build and install
//!
//! The quickest way: `passepartout plugin new NAME` writes a project with this crate's sources
//! beside it (it is not on a registry), `passepartout plugin build` builds it, `plugin test`
//! runs its cases and `plugin install` installs it (`docs/plugins-authoring.md`). By hand, the
//! crate is a `cdylib`:
//!
//! ```toml
//! [lib]
//! crate-type = ["cdylib"]
//!
//! [dependencies]
//! passepartout-sdk = { path = "../passepartout/skills-sdk" }   # a checkout of this repository (not on crates.io)
//! ```
//!
//! Then, once per machine `rustup target add wasm32-wasip2`, and
//! `cargo build --release --target wasm32-wasip2`. The component is
//! `target/wasm32-wasip2/release/<crate>.wasm` (rustc already makes it a component).
//!
//! Install it by making a folder for it in the plugin directory
//! (`$XDG_DATA_HOME/passepartout/plugins/<name>/`, or the `--plugins DIR` you pass) holding the
//! component and a `plugin.toml`:
//!
//! ```toml
//! name = "no-sudo"
//! version = "0.1.0"
//! description = "Rejects shell commands run through sudo."
//! kinds = ["gate"]
//! priority = 50
//! component = "no_sudo.wasm"
//!
//! [limits]
//! fuel = 10_000_000      # per call; the same budget on every machine
//! timeout_ms = 1000
//! memory_mib = 16
//!
//! # Tools ask for what they need; the operator's policy.toml decides what they get:
//! # [[capabilities.fs]]
//! # guest = "/workspace"
//! # access = "read-write"
//! # env = ["LANG"]
//! ```
//!
//! `passepartout plugins` then lists it with its limits and effective grants.
//!
//! ## Configuration, programs and memory
//!
//! - [`config()`] returns the `[config]` table of your `plugin.toml` as JSON, with the keys the
//!   operator sets under `[plugins.NAME.config]` in `policy.toml` laid over it. Gates may read
//!   it: it is the same for every call.
//! - [`process::run`] runs a program the policy grants by name (tools only; ask for it with
//!   `process = ["git"]` under `[capabilities]`), with a list of arguments, no shell.
//! - [`memory`] queries the Org memory store (`memory = "read"`), and sets properties with
//!   `memory = "read-write"`.
//! - Outbound HTTP is plain `wasi:http` (e.g. the `wasip2` crate), linked only for plugins
//!   granted hosts (`net = ["*"]` in the manifest takes whatever hosts the operator grants).
//!
//! A plugin importing `process`, `memory` or `wasi:http` without the grant is not loaded: it is
//! listed as disabled, with what to grant.
//!
//! ## Other languages
//!
//! Any language that builds a WebAssembly component against `wit/` works. The repository's
//! `docs/python-plugins.md` walks through a gate in Python with componentize-py (the
//! first-party `pii` gate is one), and shows JavaScript through componentize-js / jco.
//!
//! ## Panics
//!
//! A panic inside a plugin ends the call; the host reports it as a panic of your plugin (with the
//! message, which the export macros forward to the host log) and the next call starts afresh.

#![deny(missing_docs)]

/// Bindings generated from `wit/` by wit-bindgen, one module per world. Plugin authors use the
/// re-exports at the crate root; the macros use these paths.
#[doc(hidden)]
pub mod bindings {
    /// The `gate-plugin` world; also the home of the shared `types` and `host` interfaces.
    pub mod gate {
        wit_bindgen::generate!({
            world: "gate-plugin",
            path: "../wit",
            pub_export_macro: true,
            export_macro_name: "__export_gate_world",
            default_bindings_module: "passepartout_sdk::bindings::gate",
        });
    }
    /// The `tool-plugin` world.
    pub mod tool {
        wit_bindgen::generate!({
            world: "tool-plugin",
            path: "../wit",
            with: {
                "passepartout:plugin/types@0.1.1": crate::bindings::gate::passepartout::plugin::types,
                "passepartout:plugin/host@0.1.1": crate::bindings::gate::passepartout::plugin::host,
            },
            pub_export_macro: true,
            export_macro_name: "__export_tool_world",
            default_bindings_module: "passepartout_sdk::bindings::tool",
        });
    }
    /// The `skill-plugin` world.
    pub mod skill {
        wit_bindgen::generate!({
            world: "skill-plugin",
            path: "../wit",
            with: {
                "passepartout:plugin/types@0.1.1": crate::bindings::gate::passepartout::plugin::types,
                "passepartout:plugin/host@0.1.1": crate::bindings::gate::passepartout::plugin::host,
                "passepartout:plugin/memory@0.1.1": crate::bindings::tool::passepartout::plugin::memory,
            },
            pub_export_macro: true,
            export_macro_name: "__export_skill_world",
            default_bindings_module: "passepartout_sdk::bindings::skill",
        });
    }
}

mod args;
pub mod context;
mod roles;

pub use args::{parse_args, tool_info};
pub use bindings::gate::passepartout::plugin::types::{
    Action, GateInfo, LogLevel, SignalView, SkillInfo, ToolError, ToolInfo, Verdict,
};
pub use context::{ActionExt, Effects, ProgramRun, ToolIdentity};
pub use roles::{Gate, Skill, Tool};

/// Write `message` to the daemon's log at `level`, tagged with this plugin's name and version.
///
/// The host cuts lines longer than 4 KiB and keeps at most 100 lines per call.
pub fn log(level: LogLevel, message: &str) {
    bindings::gate::passepartout::plugin::host::log(level, message);
}

/// The JSON crate the SDK speaks (tools' arguments, the configuration): walk an action's args or
/// build a schema without a dependency of your own.
pub use serde_json;

/// schemars, for `#[derive(JsonSchema)]` on a tool's arguments ([`tool_info`]), with
/// `#[schemars(crate = "passepartout_sdk::schemars")]` when the plugin does not depend on it.
pub use schemars;

/// serde, for `#[derive(Deserialize)]` on a tool's arguments or a configuration type (with
/// `#[serde(crate = "passepartout_sdk::serde")]` when the plugin does not depend on serde itself).
pub use serde;

/// This plugin's configuration: the `[config]` table of its `plugin.toml` with the operator's
/// `[plugins.NAME.config]` keys laid over it, as a JSON object (`{}` when there is none). To read
/// it into a type of your own, with an error when it does not fit, use [`config_as`].
pub fn config() -> serde_json::Value {
    let text = bindings::gate::passepartout::plugin::host::config();
    serde_json::from_str(&text).unwrap_or_else(|_| serde_json::Value::Object(Default::default()))
}

/// This plugin's configuration ([`config`]) read into `T`.
///
/// # Errors
/// A [`ConfigError`] naming what does not fit (a missing key, a wrong type), for the plugin to
/// report rather than carry on with defaults the operator did not choose: a gate can reject with
/// it, a tool can fail with it, and [`log`] can tell the operator.
pub fn config_as<T: serde::de::DeserializeOwned>() -> Result<T, ConfigError> {
    let text = bindings::gate::passepartout::plugin::host::config();
    serde_json::from_str(&text).map_err(|e| ConfigError(e.to_string()))
}

/// Why the configuration does not fit the type a plugin reads it into ([`config_as`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the plugin's configuration ([config] in plugin.toml, [plugins.NAME.config] in \
             policy.toml) does not fit: {}",
            self.0
        )
    }
}

impl std::error::Error for ConfigError {}

/// Running programs through the host (tools only; the policy must grant each program by name).
///
/// ```no_run
/// use passepartout_sdk::process::{Command, run};
/// let out = run(&Command {
///     program: "git".into(),
///     args: vec!["status".into(), "--short".into()],
///     cwd: Some("/workspace".into()),
///     stdin: None,
///     timeout_ms: Some(10_000),
/// });
/// ```
pub mod process {
    pub use crate::bindings::tool::passepartout::plugin::process::{
        Command, Output, ProcessError, run,
    };
}

/// Queries on (and, with a `read-write` grant, writes to) the memory store of Org headlines.
pub mod memory {
    pub use crate::bindings::tool::passepartout::plugin::memory::{
        Node, NodeQuery, awareness, get, query, root, set_property,
    };
}

/// Not part of the API: used by the export macros.
#[doc(hidden)]
pub mod __private {
    /// Forward panic messages to the host log (once per instance), so that the host can say
    /// what a panicking plugin said instead of only "unreachable executed".
    pub fn init() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            std::panic::set_hook(Box::new(|info| {
                crate::log(crate::LogLevel::Error, &format!("panicked: {info}"));
            }));
        });
    }
}
