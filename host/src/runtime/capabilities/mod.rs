//! Capabilities: what a plugin asked for (manifest) ∩ what the operator granted (policy), then
//! how each is enforced when a call starts. One module per capability, each whole (a
//! [`Factor`]: its manifest request, its policy grant, the enforceability check, its linking,
//! its per-call state and what the audit says of it); the audit reads the same [`Grants`] and
//! the same sentences the runtime enforces, so the two cannot disagree.

pub mod confine;
pub mod disk;
pub mod env;
pub mod factor;
pub mod frozen;
pub mod fs;
pub mod gate_io;
pub mod memory;
pub mod net;
pub mod process;
pub mod read_only_view;
pub mod reap;
pub mod subreaper;

use serde::Serialize;

use super::error::{LoadError, PluginId};
use super::manifest::{CapabilityRequest, Kind, MemoryAccess};
use super::policy::PluginPolicy;

pub use factor::{FACTORS, Factor, GrantRefused, NotGranted, Sides};
pub use fs::Mount;

/// The capabilities a plugin's tool and skill calls run with. Gate calls get none of them.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Grants {
    /// Directories preopened for the plugin.
    pub fs: Vec<Mount>,
    /// Environment variables set for the plugin (names only are shown; values stay private).
    pub env: Vec<env::EnvGrant>,
    /// Hosts for outbound HTTP.
    pub net: Vec<String>,
    /// Programs it may run.
    pub process: Vec<String>,
    /// Access to the memory store.
    pub memory: MemoryAccess,
    /// How its programs are confined.
    pub confine: confine::Confine,
}

impl Grants {
    /// What the plugin gets, one line per item, each after its capability's name
    /// (`filesystem: /workspace -> /home/me/work (ReadWrite)`): what `status` shows.
    pub fn lines(&self) -> Vec<String> {
        let (asked, policy) = (CapabilityRequest::default(), PluginPolicy::default());
        FACTORS
            .iter()
            .flat_map(|f| {
                f.sides(&asked, &policy, self)
                    .effective
                    .into_iter()
                    .map(move |e| format!("{}: {e}", f.name()))
            })
            .collect()
    }

    /// Whether these grants let a plugin change anything outside itself: a read-write mount,
    /// a network host, a program, or memory writes. What a plugin says of its tools
    /// (`read-only`) is its word; this is what the runtime enforces.
    pub fn can_change_the_world(&self) -> bool {
        self.fs
            .iter()
            .any(|m| m.access == super::manifest::Access::ReadWrite)
            || !self.net.is_empty()
            || !self.process.is_empty()
            || self.memory == MemoryAccess::ReadWrite
    }

    /// These grants narrowed to what changes nothing: every mount read-only, memory reads
    /// only, no network host and no program. A tool that says it is read-only runs with
    /// these, so that what it says of itself is enforced, not taken on its word.
    pub fn read_only(&self) -> Grants {
        Grants {
            fs: self
                .fs
                .iter()
                .map(|m| Mount {
                    access: super::manifest::Access::ReadOnly,
                    ..m.clone()
                })
                .collect(),
            env: self.env.clone(),
            net: Vec::new(),
            process: Vec::new(),
            memory: match self.memory {
                MemoryAccess::None => MemoryAccess::None,
                MemoryAccess::Read | MemoryAccess::ReadWrite => MemoryAccess::Read,
            },
            confine: self.confine,
        }
    }

    /// Resolve what `plugin` gets: each capability it asked for that `policy` also grants.
    ///
    /// # Errors
    /// [`LoadError::Invalid`] for a gate-only plugin that asks for capabilities or a mount whose
    /// host directory is missing; [`LoadError::Unenforceable`] for a grant this runtime cannot
    /// enforce (it is refused, never silently dropped).
    pub fn resolve(
        plugin: &PluginId,
        kinds: &[Kind],
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        protected: &fs::Protected,
    ) -> Result<Grants, LoadError> {
        let invalid = |message: String| LoadError::Invalid {
            plugin: plugin.clone(),
            message,
        };
        let gate_only = kinds.iter().all(|k| *k == Kind::Gate);
        if gate_only && FACTORS.iter().any(|f| f.asked(asked)) {
            return Err(invalid(
                "a gate gets no filesystem, environment, network, processes or memory (it must \
                 be a pure function of the action); remove [capabilities] from plugin.toml"
                    .into(),
            ));
        }
        let grants =
            Grants::intersect(asked, policy, protected).map_err(|e| invalid(e.to_string()))?;
        grants.check_enforceable(plugin)?;
        Ok(grants)
    }

    /// Each capability asked for AND granted, without judging whether the runtime can enforce
    /// it (the audit shows these as they are; [`Grants::resolve`] then refuses the rest).
    ///
    /// # Errors
    /// A mount whose host directory is missing, or that would expose one of `protected` (the
    /// daemon's own files: [`fs::default_protected`] and the places the runtime was given).
    pub fn intersect(
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        protected: &fs::Protected,
    ) -> Result<Grants, GrantRefused> {
        let mut grants = Grants {
            confine: policy.confine,
            ..Grants::default()
        };
        for factor in FACTORS {
            factor.resolve(asked, policy, &mut grants)?;
        }
        fs::check_mounts_not_protected(&grants.fs, protected)?;
        Ok(grants)
    }

    /// Refuse grants this runtime cannot enforce.
    ///
    /// # Errors
    /// [`LoadError::Unenforceable`] naming the grant and why.
    pub fn check_enforceable(&self, plugin: &PluginId) -> Result<(), LoadError> {
        match FACTORS.iter().find_map(|f| f.unenforceable(self)) {
            Some((grant, why)) => Err(LoadError::Unenforceable {
                plugin: plugin.clone(),
                grant,
                why: why.into(),
            }),
            None => Ok(()),
        }
    }
}

/// The items of `asked` that `granted` also holds.
pub(crate) fn intersect(asked: &[String], granted: &[String]) -> Vec<String> {
    asked
        .iter()
        .filter(|a| granted.contains(a))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_grants_that_write_reach_out_or_run_programs_can_change_the_world() {
        let mount = |access| Mount {
            guest: "/w".into(),
            host: "/tmp".into(),
            access,
            resolved: "/tmp".into(),
        };
        let none = Grants::default();
        assert!(!none.can_change_the_world());
        let read = Grants {
            fs: vec![mount(super::super::manifest::Access::ReadOnly)],
            memory: MemoryAccess::Read,
            ..Grants::default()
        };
        assert!(!read.can_change_the_world());
        for g in [
            Grants {
                fs: vec![mount(super::super::manifest::Access::ReadWrite)],
                ..Grants::default()
            },
            Grants {
                net: vec!["example.com".into()],
                ..Grants::default()
            },
            Grants {
                process: vec!["ls".into()],
                ..Grants::default()
            },
            Grants {
                memory: MemoryAccess::ReadWrite,
                ..Grants::default()
            },
        ] {
            assert!(g.can_change_the_world(), "{g:?}");
            let narrowed = g.read_only();
            assert!(!narrowed.can_change_the_world(), "{narrowed:?}");
        }
        // What could only be read stays readable.
        assert_eq!(read.read_only(), read);
    }
}
