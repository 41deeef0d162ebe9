//! The `memory` capability: read-only queries on the Org store with a `read` grant; queries
//! and property writes with `read-write`. Without a grant the interface is not linked at all.

use std::sync::Arc;

use crate::memory::{Hit, Memory, Query};
use crate::runtime::bindings::memory_api as api;
use serde::{Deserialize, Serialize};

use crate::runtime::error::PluginId;
use crate::runtime::manifest::CapabilityRequest;
use crate::runtime::policy::PluginPolicy;

/// Access to Passepartout's memory (the Org object store).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryAccess {
    /// No access: the memory interface is not linked.
    #[default]
    None,
    /// Read-only queries.
    Read,
    /// Queries and writes.
    ReadWrite,
}

/// What one call may do with the store.
pub struct MemoryCtx {
    /// The store.
    pub store: Arc<Memory>,
    /// `Read` or `ReadWrite`.
    pub access: MemoryAccess,
}

/// The memory interface's per-call state: whose call it is and, when the plugin is granted
/// memory, the store and the access.
pub struct MemoryCall {
    /// The plugin (for the log and the refusal).
    pub plugin: PluginId,
    /// None: `memory` is not granted (the interface is not even linked then).
    pub ctx: Option<MemoryCtx>,
}

/// Link the memory interface (only for plugins granted memory).
///
/// # Errors
/// The interface cannot be added (a wasmtime bug).
pub fn link<T: 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut MemoryCall,
) -> wasmtime::Result<()> {
    api::add_to_linker::<T, wasmtime::component::HasSelf<MemoryCall>>(linker, get)
}

/// The memory capability ([`super::Factor`]).
pub struct MemoryFactor;

fn shown(access: MemoryAccess) -> Vec<String> {
    if access == MemoryAccess::None {
        Vec::new()
    } else {
        vec![format!("{access:?}")]
    }
}

impl super::Factor for MemoryFactor {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn what(&self) -> &'static str {
        "the memory store (passepartout:plugin/memory)"
    }
    fn owns(&self, interface: &str) -> bool {
        interface == "passepartout:plugin/memory"
    }
    fn provides(&self, _interface: &str, version: &str) -> bool {
        crate::runtime::plugin::wit_supported(version)
    }
    fn linked_only_when_granted(&self, _interface: &str) -> bool {
        true
    }
    fn asked(&self, asked: &CapabilityRequest) -> bool {
        asked.memory != MemoryAccess::None
    }
    fn resolve(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &mut super::Grants,
    ) -> Result<(), super::GrantRefused> {
        grants.memory = asked.memory.min(policy.memory);
        Ok(())
    }
    fn granted(&self, grants: &super::Grants) -> bool {
        grants.memory != MemoryAccess::None
    }
    fn grant_hint(&self, plugin: &str) -> String {
        format!("grant it under [plugins.{plugin}]: memory = \"read\"")
    }
    fn sides(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &super::Grants,
    ) -> super::Sides {
        super::Sides {
            declared: shown(asked.memory),
            granted: shown(policy.memory),
            effective: shown(grants.memory),
            undeclared: if asked.memory == MemoryAccess::None {
                shown(policy.memory)
            } else {
                Vec::new()
            },
        }
    }
    fn enforced(&self, grants: &super::Grants) -> String {
        match grants.memory {
            MemoryAccess::None => "not linked".into(),
            MemoryAccess::Read => format!(
                "host memory interface linked: queries (at most {MAX_RESULTS} results each); \
                 property writes refused"
            ),
            MemoryAccess::ReadWrite => format!(
                "host memory interface linked: queries (at most {MAX_RESULTS} results each) and \
                 property writes, each logged with the plugin's name"
            ),
        }
    }
}

fn node(h: Hit) -> api::Node {
    api::Node {
        id: h.id,
        derived_id: h.derived_id,
        parent: h.parent,
        file: h.file,
        line: h.line,
        level: h.level,
        title: h.title,
        todo: h.todo,
        tags: h.tags,
        properties: h.properties,
        body: h.body,
        hash: h.hash,
    }
}

impl MemoryCall {
    fn memory(&self) -> Result<&MemoryCtx, String> {
        self.ctx
            .as_ref()
            .ok_or_else(|| "this plugin is granted no memory access".to_owned())
    }
}

/// Most results one query returns to a plugin.
const MAX_RESULTS: u32 = 1000;

impl api::Host for MemoryCall {
    fn query(&mut self, q: api::NodeQuery) -> Result<Vec<api::Node>, String> {
        let m = self.memory()?;
        let query = Query {
            tag: q.tag,
            todo: q.todo,
            kind: None,
            property: q.property,
            text: q.text,
            missing_id: q.missing_id,
            limit: Some(q.limit.unwrap_or(100).min(MAX_RESULTS) as usize),
        };
        // Every call here may read SQLite (the head, an index rebuilt after a change): off the
        // async worker.
        crate::blocking::in_place(|| m.store.query(&query))
            .map(|hits| hits.into_iter().map(node).collect())
            .map_err(|e| e.to_string())
    }

    fn get(&mut self, id: String) -> Result<Option<api::Node>, String> {
        let m = self.memory()?;
        crate::blocking::in_place(|| m.store.get(&id))
            .map(|h| h.map(node))
            .map_err(|e| e.to_string())
    }

    fn awareness(&mut self, max_bytes: u32) -> Result<String, String> {
        let m = self.memory()?;
        crate::blocking::in_place(|| m.store.awareness(max_bytes.min(1 << 20) as usize))
            .map_err(|e| e.to_string())
    }

    fn root(&mut self) -> Result<String, String> {
        let m = self.memory()?;
        Ok(crate::blocking::in_place(|| m.store.root()))
    }

    fn set_property(&mut self, id: String, key: String, value: String) -> Result<String, String> {
        let m = self.memory()?;
        if m.access != MemoryAccess::ReadWrite {
            return Err(format!(
                "{} may only read memory; writes need `memory = \"read-write\"` in policy.toml",
                self.plugin
            ));
        }
        // A write commits to SQLite: off the async worker.
        let root = crate::blocking::in_place(|| m.store.set_property(&id, &key, &value))
            .map_err(|e| e.to_string())?;
        tracing::info!(plugin = %self.plugin, %id, %key, %root, "memory property set");
        Ok(root)
    }
}
