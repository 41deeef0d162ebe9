//! What an import means: the capability it reaches, and how this runtime enforces it for each
//! role. The runtime's linkers are built from the same facts (runtime/mod.rs, runtime/call.rs).

use serde::Serialize;

/// A class of imports, by the capability it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// Our own host interface (`passepartout:plugin/host`, `types`): logging only.
    Host,
    /// The WASI runtime baseline Rust's std links in: streams, exit, stdio, terminals.
    Runtime,
    /// Environment variables (`wasi:cli/environment`).
    Environment,
    /// Files (`wasi:filesystem/*`).
    Filesystem,
    /// Network (`wasi:sockets/*`, `wasi:http/*`).
    Network,
    /// Clocks (`wasi:clocks/*`).
    Clocks,
    /// Randomness (`wasi:random/*`).
    Random,
    /// Running programs (`passepartout:plugin/process`).
    Process,
    /// Passepartout's memory store (`passepartout:plugin/memory`).
    Memory,
    /// Anything else.
    Unknown,
}

impl Class {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::Host => "host",
            Class::Runtime => "runtime",
            Class::Environment => "environment",
            Class::Filesystem => "filesystem",
            Class::Network => "network",
            Class::Clocks => "clocks",
            Class::Random => "random",
            Class::Process => "process",
            Class::Memory => "memory",
            Class::Unknown => "unknown",
        }
    }
}

/// The class of one import (`package/interface@version`).
pub fn classify(import: &str) -> Class {
    let unversioned = import.split('@').next().unwrap_or(import);
    match unversioned {
        "passepartout:plugin/host"
        | "passepartout:plugin/types"
        | "passepartout:plugin/action-context" => Class::Host,
        "passepartout:plugin/process" => Class::Process,
        "passepartout:plugin/memory" => Class::Memory,
        "wasi:cli/environment" => Class::Environment,
        i if i.starts_with("wasi:io/") || i.starts_with("wasi:cli/") => Class::Runtime,
        i if i.starts_with("wasi:filesystem/") => Class::Filesystem,
        i if i.starts_with("wasi:sockets/") || i.starts_with("wasi:http/") => Class::Network,
        i if i.starts_with("wasi:clocks/") => Class::Clocks,
        i if i.starts_with("wasi:random/") => Class::Random,
        _ => Class::Unknown,
    }
}

/// Whether the tool/skill linker can provide `import` (WASI 0.2, wasi:http 0.2 and our
/// interfaces; the grantable ones only when granted). Anything else makes the plugin fail to
/// link, so it never loads.
pub fn provided_to_tools(import: &str) -> bool {
    let version = import.split_once('@').map(|(_, v)| v);
    match classify(import) {
        Class::Host => version.is_some_and(crate::runtime::plugin::wit_supported),
        Class::Runtime | Class::Environment | Class::Filesystem | Class::Clocks | Class::Random => {
            version.is_some_and(|v| v.starts_with("0.2."))
        }
        // wasi:http, `process` and `memory` are linked only for plugins granted them; a plugin
        // importing one without the grant is disabled at load (see the enforcement column).
        Class::Network => version.is_some_and(|v| v.starts_with("0.2.")),
        Class::Process | Class::Memory => {
            version.is_some_and(crate::runtime::plugin::wit_supported)
        }
        Class::Unknown => false,
    }
}
