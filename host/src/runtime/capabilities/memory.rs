//! The `memory` capability: read-only queries on the Org store with a `read` grant; queries
//! and property writes with `read-write`. Without a grant the interface is not linked at all.

use std::sync::Arc;

use crate::memory::{Hit, Memory, Query};
use crate::runtime::bindings::memory_api as api;
use crate::runtime::manifest::MemoryAccess;
use crate::runtime::state::ToolData;

/// What one call may do with the store.
pub struct MemoryCtx {
    /// The store.
    pub store: Arc<Memory>,
    /// `Read` or `ReadWrite`.
    pub access: MemoryAccess,
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

impl ToolData {
    fn memory(&self) -> Result<&MemoryCtx, String> {
        self.memory
            .as_ref()
            .ok_or_else(|| "this plugin is granted no memory access".to_owned())
    }
}

/// Most results one query returns to a plugin.
const MAX_RESULTS: u32 = 1000;

impl api::Host for ToolData {
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
                self.common.plugin
            ));
        }
        // A write commits to SQLite: off the async worker.
        let root = crate::blocking::in_place(|| m.store.set_property(&id, &key, &value))
            .map_err(|e| e.to_string())?;
        tracing::info!(plugin = %self.common.plugin, %id, %key, %root, "memory property set");
        Ok(root)
    }
}
