//! The shape every grantable capability has (Spin's `factor-*`): one value per capability,
//! implemented in that capability's own module, answering for the manifest side, the policy
//! side, what the plugin gets, whether the runtime can enforce it, how its interfaces link and
//! what the audit says of it. The runtime ([`super::Grants`], the loader, the linker) and the
//! audit both walk [`FACTORS`], so a capability is added in one module and one line here.

use super::Grants;
use crate::runtime::manifest::CapabilityRequest;
use crate::runtime::policy::PluginPolicy;

/// One grantable capability, whole.
pub trait Factor: Sync {
    /// Its name in reports and errors: `filesystem`, `environment`, `network`, `process`,
    /// `memory`.
    fn name(&self) -> &'static str;

    /// What it gives, in a few words naming its interface, e.g. `programs to run
    /// (passepartout:plugin/process)`.
    fn what(&self) -> &'static str;

    /// Whether `import` (`package/interface`, version stripped) reaches this capability.
    fn owns(&self, interface: &str) -> bool;

    /// Whether this host's tool and skill linker provides `interface` at `version` (when
    /// granted, for the interfaces linked only then). Anything else fails to link.
    /// By default: WASI 0.2, the version the linker's WASI (and wasi:http) is.
    fn provides(&self, _interface: &str, version: &str) -> bool {
        version.starts_with("0.2.")
    }

    /// Whether `interface` is linked only for plugins granted this capability: importing it
    /// without the grant disables the plugin. The other interfaces are always linked and
    /// deny in the call's context instead.
    fn linked_only_when_granted(&self, _interface: &str) -> bool {
        false
    }

    /// Whether every component imports it whatever its author writes (Rust's std imports
    /// `wasi:cli/environment`): importing it without a grant is no finding.
    fn baseline(&self) -> bool {
        false
    }

    /// Whether the manifest asks for any of it.
    fn asked(&self, asked: &CapabilityRequest) -> bool;

    /// Put what the plugin gets (asked AND granted) into `grants`.
    ///
    /// # Errors
    /// A grant that cannot be resolved on this machine (a mount whose directory is missing).
    fn resolve(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &mut Grants,
    ) -> Result<(), GrantRefused>;

    /// Whether the plugin got any of it.
    fn granted(&self, grants: &Grants) -> bool;

    /// A grant in `grants` this runtime cannot enforce: the grant and why. Such a plugin is
    /// refused at load, never run with the grant dropped.
    fn unenforceable(&self, _grants: &Grants) -> Option<(String, &'static str)> {
        None
    }

    /// The policy line that grants it to plugin `plugin`, as the runtime's refusal and the
    /// audit's finding both print it.
    fn grant_hint(&self, plugin: &str) -> String;

    /// What the manifest asks, the policy grants, the plugin gets, and what the policy grants
    /// that the manifest does not ask (no effect), as the audit shows them.
    fn sides(&self, asked: &CapabilityRequest, policy: &PluginPolicy, grants: &Grants) -> Sides;

    /// How the runtime enforces it for a tool or skill with `grants`, in one sentence (the
    /// audit prints it; the code beside it in the capability's module is what keeps it).
    fn enforced(&self, grants: &Grants) -> String;
}

/// Why an operator's grant cannot be used on this machine (the plugin is not loaded; the audit
/// reports it).
#[derive(Debug, thiserror::Error)]
pub enum GrantRefused {
    /// A mounted directory that does not exist here.
    #[error(
        "the policy mounts {} at {guest}, but that is not a directory on this machine",
        host.display()
    )]
    NotADirectory {
        /// The directory on this machine.
        host: std::path::PathBuf,
        /// What the plugin would see.
        guest: String,
    },
    /// A mount that holds, or is inside, the daemon's keys, database, configuration, plugins
    /// or compile cache.
    #[error(
        "the policy mounts {} at {guest}, which holds {}, the daemon's own keys, database, \
         configuration, plugins or compiled code: no plugin may see them. Grant a directory \
         that does not contain it (e.g. a workspace below it)",
        host.display(),
        protected.display()
    )]
    Protected {
        /// The directory on this machine.
        host: std::path::PathBuf,
        /// What the plugin would see.
        guest: String,
        /// The protected path it would expose.
        protected: std::path::PathBuf,
    },
    /// A read-write mount that holds, or is inside, the program every granted program starts
    /// through.
    #[error(
        "the policy mounts {} read-write at {guest}, which holds {}, the program every granted \
         program starts through before it is confined: no plugin may write it. Mount it \
         read-only, or a directory that does not contain it",
        host.display(),
        protected.display()
    )]
    Unwritable {
        /// The directory on this machine.
        host: std::path::PathBuf,
        /// What the plugin would see.
        guest: String,
        /// The file it would expose.
        protected: std::path::PathBuf,
    },
    /// A read-only mount that is also inside a read-write mount of the same plugin: writable
    /// through the other, so the read-only grant could not be kept.
    #[error(
        "the policy mounts {} read-only at {guest}, but the same plugin gets {} read-write at \
         {outer}, which holds it: the plugin could write it there. Mount directories that do \
         not hold one another, or both read-only",
        host.display(),
        outer_host.display()
    )]
    ReadOnlyInsideWritable {
        /// The read-only directory.
        host: std::path::PathBuf,
        /// Where the plugin sees it.
        guest: String,
        /// The read-write directory holding it.
        outer_host: std::path::PathBuf,
        /// Where the plugin sees that one.
        outer: String,
    },
}

/// One capability as the audit shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sides {
    /// What the manifest asks for.
    pub declared: Vec<String>,
    /// What the policy grants.
    pub granted: Vec<String>,
    /// What the plugin gets.
    pub effective: Vec<String>,
    /// Granted items the manifest does not ask for (no effect: the runtime intersects).
    pub undeclared: Vec<String>,
}

impl Sides {
    /// The sides of a capability asked and granted item by item (names, hosts, programs).
    pub fn listed(asked: &[String], granted: &[String], effective: Vec<String>) -> Sides {
        Sides {
            declared: asked.to_vec(),
            granted: granted.to_vec(),
            effective,
            undeclared: not_asked(granted, asked),
        }
    }
}

/// Why a plugin that imports a capability's interface without its grant is not loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotGranted {
    /// The capability ([`Factor::what`]).
    pub capability: &'static str,
    /// The policy line that grants it ([`Factor::grant_hint`]).
    pub hint: String,
}

/// Every grantable capability, in the order reports show them.
pub const FACTORS: [&dyn Factor; 5] = [
    &super::fs::Filesystem,
    &super::env::Environment,
    &super::net::Network,
    &super::process::Process,
    &super::memory::MemoryFactor,
];

/// The capability `import` (`package/interface@version`) reaches, if it is a grantable one.
pub fn factor_of(import: &str) -> Option<&'static dyn Factor> {
    let interface = import.split('@').next().unwrap_or(import);
    FACTORS.into_iter().find(|f| f.owns(interface))
}

/// The first import of `imports` whose interface is linked only when granted and that
/// `grants` do not grant: the plugin cannot link, so the loader refuses it with this.
pub fn not_granted(imports: &[String], grants: &Grants, plugin: &str) -> Option<NotGranted> {
    imports.iter().find_map(|import| {
        let interface = import.split('@').next().unwrap_or(import);
        let f = factor_of(import)?;
        (f.linked_only_when_granted(interface) && !f.granted(grants)).then(|| NotGranted {
            capability: f.what(),
            hint: f.grant_hint(plugin),
        })
    })
}

/// The items of `granted` that `asked` does not hold.
pub(crate) fn not_asked(granted: &[String], asked: &[String]) -> Vec<String> {
    granted
        .iter()
        .filter(|g| !asked.contains(g))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_interface_belongs_to_at_most_one_capability() {
        let interfaces = [
            "wasi:filesystem/types",
            "wasi:filesystem/preopens",
            "wasi:cli/environment",
            "wasi:sockets/tcp",
            "wasi:http/outgoing-handler",
            "passepartout:plugin/process",
            "passepartout:plugin/memory",
        ];
        for i in interfaces {
            let owners: Vec<_> = FACTORS
                .iter()
                .filter(|f| f.owns(i))
                .map(|f| f.name())
                .collect();
            assert_eq!(owners.len(), 1, "{i}: {owners:?}");
        }
        for i in [
            "wasi:cli/stdout",
            "wasi:clocks/wall-clock",
            "passepartout:plugin/host",
        ] {
            assert!(factor_of(i).is_none(), "{i}");
        }
    }

    #[test]
    fn an_interface_linked_only_when_granted_is_named_with_its_policy_line() {
        let imports = vec!["passepartout:plugin/process@0.3.0".to_owned()];
        let missing = not_granted(&imports, &Grants::default(), "tidy").expect("not granted");
        assert!(missing.capability.contains("passepartout:plugin/process"));
        assert!(missing.hint.contains("[plugins.tidy]"), "{}", missing.hint);
        let granted = Grants {
            process: vec!["ls".into()],
            ..Grants::default()
        };
        assert_eq!(not_granted(&imports, &granted, "tidy"), None);
        // Sockets are always linked (disabled in the context): no refusal for them.
        let sockets = vec!["wasi:sockets/tcp@0.2.6".to_owned()];
        assert_eq!(not_granted(&sockets, &Grants::default(), "tidy"), None);
    }
}
