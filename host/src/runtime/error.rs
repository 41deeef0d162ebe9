//! Errors at the plugin boundary. Every one names the plugin and its version, as
//! `plugin "files" 0.1.0: ...`, and says which limit or grant was involved.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// A plugin's identity: its manifest's name and version.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct PluginId {
    /// The plugin's name, unique among loaded plugins.
    pub name: String,
    /// The plugin's version (semver, from its manifest).
    pub version: String,
}

impl fmt::Display for PluginId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plugin {:?} {}", self.name, self.version)
    }
}

/// The limit a call ran into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The fuel budget (`limits.fuel`).
    Fuel,
    /// The wall-clock deadline (`limits.timeout_ms` / `limits.tool_timeout_ms`).
    Timeout,
    /// The memory cap (`limits.memory_mib`).
    Memory,
    /// The wasm stack (unbounded recursion).
    Stack,
    /// The output cap (`limits.max_output_kib`).
    Output,
    /// The disk limit (`limits.disk_mib`).
    Disk,
}

/// An error and its sources in one line, `what failed: why: the cause`, for where an error
/// becomes text for a person or the model (a gate's reason, a tool's result). A cause the
/// message already names (as `...: cause`, the way our errors name theirs) is not repeated.
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        let named = text.is_empty() || msg.ends_with(&text) || msg.contains(&format!(": {text}"));
        if !named {
            msg = format!("{msg}: {text}");
        }
        source = s.source();
    }
    msg
}

/// What a denial of `import` most often means, when that is not the obvious.
fn denied_hint(import: &str) -> &'static str {
    if import.starts_with("wasi:cli/environment") {
        " (a Rust plugin panicking without the SDK's panic hook does this: std's hook reads \
         RUST_BACKTRACE, so the panic message is lost; passepartout_sdk's export macros set a \
         hook that reports it)"
    } else {
        ""
    }
}

/// Why a manifest or policy file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The manifest is not one (TOML, or a field's value).
    #[error(transparent)]
    Manifest(#[from] super::manifest::ManifestError),
    /// The policy is not one (TOML, or a setting).
    #[error(transparent)]
    Policy(#[from] super::policy::PolicyError),
    /// The file cannot be read.
    #[error("cannot read it: {0}")]
    Read(#[from] std::io::Error),
    /// What the loader found wrong with the plugin's files before reading them.
    #[error("{0}")]
    Problem(String),
}

/// Why a call into a loaded plugin failed. The host keeps serving after any of these, and the
/// plugin's next call starts in a fresh instance.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The call used up its fuel budget.
    #[error(
        "{plugin}: ran out of fuel ({fuel} units per call; raise `limits.fuel` in its policy if this is legitimate)"
    )]
    OutOfFuel {
        /// The plugin.
        plugin: PluginId,
        /// The budget it had.
        fuel: u64,
    },
    /// The call ran past its deadline.
    #[error("{plugin}: timed out after {} ms (`limits.timeout_ms`)", timeout.as_millis())]
    TimedOut {
        /// The plugin.
        plugin: PluginId,
        /// The deadline it had.
        timeout: Duration,
    },
    /// The call wrote more through WASI than its disk limit.
    #[error("{plugin}: wrote past its disk limit of {} MiB (`limits.disk_mib`)", cap_bytes >> 20)]
    DiskLimit {
        /// The plugin.
        plugin: PluginId,
        /// The limit it had, in bytes.
        cap_bytes: u64,
    },
    /// The plugin tried to grow its memory past its cap.
    #[error("{plugin}: exceeded its memory cap of {} MiB (`limits.memory_mib`)", cap_bytes >> 20)]
    OutOfMemory {
        /// The plugin.
        plugin: PluginId,
        /// The cap, in bytes.
        cap_bytes: u64,
    },
    /// The plugin overflowed the wasm stack, usually by unbounded recursion.
    #[error("{plugin}: overflowed its stack (unbounded recursion?)")]
    StackOverflow {
        /// The plugin.
        plugin: PluginId,
    },
    /// The plugin panicked.
    #[error("{plugin}: panicked: {message}")]
    Panicked {
        /// The plugin.
        plugin: PluginId,
        /// What it said when it panicked.
        message: String,
    },
    /// The plugin called a host function it was not granted (for a gate: any WASI call).
    #[error(
        "{plugin}: called `{import}`, which it was not granted; the call was stopped{}",
        denied_hint(import)
    )]
    Denied {
        /// The plugin.
        plugin: PluginId,
        /// The import it called, e.g. `wasi:filesystem/preopens@0.2.6#get-directories`.
        import: String,
    },
    /// The plugin returned more than its output cap.
    #[error(
        "{plugin}: returned {size} bytes, more than its output cap of {cap} bytes (`limits.max_output_kib`)"
    )]
    OutputTooLarge {
        /// The plugin.
        plugin: PluginId,
        /// What it returned.
        size: usize,
        /// The cap.
        cap: usize,
    },
    /// The plugin handed the host more bytes in one value than its call's copy budget: a
    /// result over its output cap, or as much passed to one host call (a log line, a write).
    /// wasmtime refuses such a value before copying any of it, so its size is not known.
    #[error(
        "{plugin}: handed the host more than {budget} bytes at once, refused before any was \
         copied: a result over its output cap of {cap} bytes (`limits.max_output_kib`), or as \
         much passed to one host call (a log line, a write)"
    )]
    TooMuchAtOnce {
        /// The plugin.
        plugin: PluginId,
        /// The most the host copies out of the guest at once in this call.
        budget: usize,
        /// The call's output cap, which the budget is derived from.
        cap: usize,
    },
    /// Any other trap (unreachable, out-of-bounds access, ...).
    #[error("{plugin}: trapped: {detail}")]
    Trapped {
        /// The plugin.
        plugin: PluginId,
        /// The trap and what the plugin last said.
        detail: String,
    },
    /// A tool reported an error of its own (bad arguments, a failed operation).
    #[error("{plugin}: tool {tool:?}: {error}")]
    Tool {
        /// The plugin.
        plugin: PluginId,
        /// The tool called.
        tool: String,
        /// The tool's own error.
        error: ToolFailure,
    },
    /// The plugin does not have the role or tool asked for.
    #[error("{plugin}: {what}")]
    NotOffered {
        /// The plugin.
        plugin: PluginId,
        /// What is missing, e.g. `is not a gate`, `has no tool "x"`.
        what: String,
    },
    /// The gate did not load, so no action can be verified until it is fixed or disabled.
    #[error(
        "{plugin}: this gate did not load, so every action is refused until it is fixed or \
         disabled with `[plugins.{}] enabled = false` in policy.toml: {why}", plugin.name
    )]
    Missing {
        /// The plugin (version `?` when its manifest could not be read).
        plugin: PluginId,
        /// Why it did not load.
        why: String,
    },
    /// The call found no room: the plugin's own cap on calls at once, or the tools' share of
    /// the instance pool ([`super::share`]).
    #[error("{plugin}: not run: {why}")]
    Busy {
        /// The plugin.
        plugin: PluginId,
        /// Who holds the room, and what to do.
        why: String,
    },
    /// The host could not set up the call (a mount that vanished, ...).
    #[error("{plugin}: could not start the call: {source}")]
    Setup {
        /// The plugin.
        plugin: PluginId,
        /// What went wrong.
        #[source]
        source: SetupError,
    },
}

/// Why the host could not set up a call.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A granted directory could not be opened.
    #[error(transparent)]
    Mount(#[from] super::capabilities::fs::MountError),
    /// The Store refused the call's fuel or yield budget.
    #[error("the call's {what} could not be set: {source}")]
    Budget {
        /// Which budget.
        what: &'static str,
        /// Wasmtime's error.
        #[source]
        source: wasmtime::Error,
    },
}

impl LoadError {
    /// The plugin the error is about, by name, when it names one.
    pub fn plugin_name(&self) -> Option<&str> {
        match self {
            Self::Component { plugin, .. }
            | Self::Invalid { plugin, .. }
            | Self::Unenforceable { plugin, .. }
            | Self::NotGranted { plugin, .. }
            | Self::Tampered { plugin, .. }
            | Self::DisabledByPolicy { plugin } => Some(&plugin.name),
            Self::Duplicate { name, .. } => Some(name),
            Self::Config { .. } => None,
        }
    }
}

impl PluginError {
    /// The plugin the error is about.
    pub fn plugin(&self) -> &PluginId {
        match self {
            Self::OutOfFuel { plugin, .. }
            | Self::TimedOut { plugin, .. }
            | Self::DiskLimit { plugin, .. }
            | Self::OutOfMemory { plugin, .. }
            | Self::StackOverflow { plugin }
            | Self::Panicked { plugin, .. }
            | Self::Denied { plugin, .. }
            | Self::OutputTooLarge { plugin, .. }
            | Self::TooMuchAtOnce { plugin, .. }
            | Self::Trapped { plugin, .. }
            | Self::Tool { plugin, .. }
            | Self::NotOffered { plugin, .. }
            | Self::Missing { plugin, .. }
            | Self::Busy { plugin, .. }
            | Self::Setup { plugin, .. } => plugin,
        }
    }

    /// The limit the call ran into, if that is why it failed.
    pub fn limit(&self) -> Option<Limit> {
        match self {
            Self::OutOfFuel { .. } => Some(Limit::Fuel),
            Self::TimedOut { .. } => Some(Limit::Timeout),
            Self::OutOfMemory { .. } => Some(Limit::Memory),
            Self::DiskLimit { .. } => Some(Limit::Disk),
            Self::StackOverflow { .. } => Some(Limit::Stack),
            Self::OutputTooLarge { .. } | Self::TooMuchAtOnce { .. } => Some(Limit::Output),
            _ => None,
        }
    }
}

/// A tool's own error, as the `tool-error` variant of the WIT.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
pub enum ToolFailure {
    /// The arguments did not fit the tool's schema.
    #[error("invalid arguments: {0}")]
    InvalidArgs(String),
    /// The tool refused (not granted, outside its mounts, ...).
    #[error("denied: {0}")]
    Denied(String),
    /// The tool tried and failed.
    #[error("failed: {0}")]
    Failed(String),
    /// The tool gave up waiting.
    #[error("timed out")]
    TimedOut,
}

/// Why a plugin could not be loaded. Loading goes on with the other plugins.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A manifest or policy file could not be read or parsed.
    #[error("{path}: {source}")]
    Config {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (boxed: TOML errors are large, and a `LoadError` is
        /// returned often).
        #[source]
        source: Box<ConfigError>,
    },
    /// The component could not be read, compiled or linked.
    #[error("{plugin}: {message}")]
    Component {
        /// The plugin.
        plugin: PluginId,
        /// What failed.
        message: String,
    },
    /// The manifest and the component disagree, or a limit is out of range.
    #[error("{plugin}: {message}")]
    Invalid {
        /// The plugin.
        plugin: PluginId,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The plugin would get a grant this runtime cannot enforce: refused, never ignored.
    #[error(
        "{plugin}: {grant} is granted, but this runtime cannot enforce it yet: {why}. Remove it from plugin.toml or policy.toml."
    )]
    Unenforceable {
        /// The plugin.
        plugin: PluginId,
        /// The grant, e.g. `network hosts ["example.com"]`.
        grant: String,
        /// Why it cannot be enforced.
        why: String,
    },
    /// The component imports a capability interface its grants do not include: it is not
    /// loaded (disabled) until the operator grants it. Not an error of the plugin's.
    #[error("{plugin}: disabled, it needs {capability} and policy.toml grants none; {hint}")]
    NotGranted {
        /// The plugin.
        plugin: PluginId,
        /// What it needs, e.g. `programs to run (passepartout:plugin/process)`.
        capability: String,
        /// What to write in policy.toml.
        hint: String,
    },
    /// The manifest or component changed since it was installed.
    #[error(
        "{plugin}: {what} changed after install (the fingerprint is now {found}; pinned: {pinned}). Refusing to load it: reinstall with `passepartout plugin update`."
    )]
    Tampered {
        /// The plugin.
        plugin: PluginId,
        /// Which file changed (`plugin.toml`, `its component`, or both).
        what: String,
        /// The pinned fingerprint (sha256 over plugin.toml and the component).
        pinned: String,
        /// The fingerprint found.
        found: String,
    },
    /// The operator's policy turns the plugin off (`[plugins.NAME] enabled = false`).
    #[error("{plugin}: disabled by policy.toml ([plugins.{}] enabled = false)", plugin.name)]
    DisabledByPolicy {
        /// The plugin.
        plugin: PluginId,
    },
    /// Two plugins share a name.
    #[error("two plugins are named {name:?}: {first} and {second}; rename or remove one")]
    Duplicate {
        /// The name.
        name: String,
        /// Where the first came from.
        first: String,
        /// Where the second came from.
        second: String,
    },
}
