//! What an import means: the capability it reaches, and how this runtime enforces it for each
//! role. The runtime's linkers are built from the same facts (runtime/mod.rs, runtime/call.rs).

use serde::Serialize;

use crate::runtime::capabilities::factor::factor_of;
#[cfg(doc)]
use crate::runtime::capabilities::{FACTORS, Factor};

/// A class of imports, by the capability it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Class {
    /// A grantable capability ([`Factor::name`]: filesystem, environment, network, process,
    /// memory), as the runtime's own [`FACTORS`] recognise it.
    Capability(&'static str),
    /// Clocks (`wasi:clocks/*`).
    Clocks,
    /// Randomness (`wasi:random/*`).
    Random,
    /// The WASI runtime baseline Rust's std links in: streams, exit, stdio, terminals.
    Runtime,
    /// Our own host interface (`passepartout:plugin/host`, `types`): logging only.
    Host,
    /// Anything else.
    Unknown,
}

impl Class {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Class::Capability(name) => name,
            Class::Host => "host",
            Class::Runtime => "runtime",
            Class::Clocks => "clocks",
            Class::Random => "random",
            Class::Unknown => "unknown",
        }
    }

    /// The classes that are not grantable capabilities, in the order reports show them.
    pub const OTHERS: [Class; 5] = [
        Class::Clocks,
        Class::Random,
        Class::Runtime,
        Class::Host,
        Class::Unknown,
    ];
}

/// The class of one import (`package/interface@version`).
pub fn classify(import: &str) -> Class {
    if let Some(f) = factor_of(import) {
        return Class::Capability(f.name());
    }
    let unversioned = import.split('@').next().unwrap_or(import);
    match unversioned {
        "passepartout:plugin/host"
        | "passepartout:plugin/types"
        | "passepartout:plugin/action-context" => Class::Host,
        i if i.starts_with("wasi:io/") || i.starts_with("wasi:cli/") => Class::Runtime,
        i if i.starts_with("wasi:clocks/") => Class::Clocks,
        i if i.starts_with("wasi:random/") => Class::Random,
        _ => Class::Unknown,
    }
}

/// Whether the tool/skill linker can provide `import` (WASI 0.2, wasi:http 0.2 and our
/// interfaces; the grantable ones as their [`Factor::provides`] says, some only when
/// granted). Anything else makes the plugin fail to link, so it never loads.
pub fn provided_to_tools(import: &str) -> bool {
    let Some((interface, version)) = import.split_once('@') else {
        return false;
    };
    match classify(import) {
        Class::Capability(_) => factor_of(import).is_some_and(|f| f.provides(interface, version)),
        Class::Host => crate::runtime::plugin::wit_supported(version),
        Class::Runtime | Class::Clocks | Class::Random => version.starts_with("0.2."),
        Class::Unknown => false,
    }
}
