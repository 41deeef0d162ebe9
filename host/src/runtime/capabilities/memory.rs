//! The `memory` capability: read-only queries on the Org store with a `read` grant; queries
//! and property writes with `read-write`. Without a grant the interface is not linked at all.
//! A query hands the plugin at most [`QUERY_BUDGET`] bytes ([`within_budget`]); a call of a
//! tool that declares `memory-write` effects writes only the headlines they name
//! ([`MemoryCall::writes`]).

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
    /// For a call of a tool that declares `memory-write` effects, the IDs this call's effects
    /// name (what the gates judged, [`crate::runtime::effects::memory_binding`]): the only
    /// headlines it may write. None: the tool declares no memory write, and its grant alone
    /// says what it may write.
    pub writes: Option<Vec<String>>,
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
                "host memory interface linked: queries (at most {MAX_RESULTS} results and {} MiB \
                 each); property writes refused",
                QUERY_BUDGET >> 20
            ),
            MemoryAccess::ReadWrite => format!(
                "host memory interface linked: queries (at most {MAX_RESULTS} results and {} MiB \
                 each) and property writes, each logged with the plugin's name; a tool that \
                 declares memory-write effects writes only the headlines its call names",
                QUERY_BUDGET >> 20
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

/// Most bytes of headlines one query hands a plugin: past it, titles, bodies and property
/// values are cut to previews ([`PREVIEW_BYTES`], marked as cut), then headlines left out.
/// `get` returns a headline whole.
pub const QUERY_BUDGET: usize = 4 << 20;

/// What a title, body or property value is cut to when a query's result is over
/// [`QUERY_BUDGET`] (the mark saying so comes on top).
pub const PREVIEW_BYTES: usize = 1024;

/// The bytes `n` takes, as the budget counts them.
fn size(n: &api::Node) -> usize {
    // Room for the record itself (its options, numbers and list headers).
    const RECORD: usize = 64;
    RECORD
        + n.id.len()
        + n.parent.as_ref().map_or(0, String::len)
        + n.file.len()
        + n.title.len()
        + n.todo.as_ref().map_or(0, String::len)
        + n.tags.iter().map(String::len).sum::<usize>()
        + n.properties
            .iter()
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>()
        + n.body.len()
        + n.hash.len()
}

/// `text` cut to at most [`PREVIEW_BYTES`] (on a character boundary), with a mark saying how
/// much was cut and where the whole is; as it is when short enough.
fn preview(text: &mut String) {
    if text.len() <= PREVIEW_BYTES {
        return;
    }
    let mut at = PREVIEW_BYTES;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let cut = text.len() - at;
    text.truncate(at);
    text.push_str(&format!(
        " … [{cut} more bytes cut by the host: this query's result was over its {} MiB \
         budget; `get` returns the headline whole]",
        QUERY_BUDGET >> 20
    ));
}

/// What [`within_budget`] did to a query's result.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Cut {
    /// Titles, bodies and property values were cut to previews.
    pub previews: bool,
    /// Headlines left out at the end, even with previews.
    pub left_out: usize,
}

/// `nodes` in at most `budget` bytes (as `size` counts them): as they are when they fit;
/// else with every title, body and property value cut to a preview (each marked); and if they
/// still do not fit, only the first ones that do.
pub fn within_budget(mut nodes: Vec<api::Node>, budget: usize) -> (Vec<api::Node>, Cut) {
    let mut cut = Cut::default();
    if nodes.iter().map(size).sum::<usize>() <= budget {
        return (nodes, cut);
    }
    cut.previews = true;
    for n in &mut nodes {
        preview(&mut n.title);
        preview(&mut n.body);
        for (_, v) in &mut n.properties {
            preview(v);
        }
    }
    let mut total = 0;
    let fits = nodes
        .iter()
        .take_while(|n| {
            total += size(n);
            total <= budget
        })
        .count();
    cut.left_out = nodes.len() - fits;
    nodes.truncate(fits);
    (nodes, cut)
}

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
        let hits =
            crate::blocking::in_place(|| m.store.query(&query)).map_err(|e| e.to_string())?;
        let (nodes, cut) = within_budget(hits.into_iter().map(node).collect(), QUERY_BUDGET);
        if cut != Cut::default() {
            tracing::warn!(
                plugin = %self.plugin,
                left_out = cut.left_out,
                "a memory query's result was over {} MiB: titles, bodies and property values \
                 cut to previews{}",
                QUERY_BUDGET >> 20,
                if cut.left_out > 0 { ", and the last headlines left out" } else { "" }
            );
        }
        Ok(nodes)
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
        // A tool that declares its memory writes writes what the gates saw it declare.
        if let Some(declared) = &self.writes
            && !declared.contains(&id)
        {
            let named: Vec<String> = declared.iter().map(|d| format!("{d:?}")).collect();
            return Err(format!(
                "{} may not write headline {id:?} in this call: its memory-write effects, which \
                 the gates judged, name {}",
                self.plugin,
                if named.is_empty() {
                    "no headline".to_owned()
                } else {
                    named.join(", ")
                }
            ));
        }
        // A write commits to SQLite: off the async worker.
        let root = crate::blocking::in_place(|| m.store.set_property(&id, &key, &value))
            .map_err(|e| e.to_string())?;
        tracing::info!(plugin = %self.plugin, %id, %key, %root, "memory property set");
        Ok(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{IngestOptions, MemoryConfig};
    use crate::runtime::bindings::memory_api::Host as _;

    /// The per-call state of plugin `notes`, granted read-write memory on `store`, bound to
    /// `writes`.
    fn call_of(store: Arc<Memory>, writes: Option<Vec<String>>) -> MemoryCall {
        MemoryCall {
            plugin: PluginId {
                name: "notes".into(),
                version: "1.0.0".into(),
            },
            ctx: Some(MemoryCtx {
                store,
                access: MemoryAccess::ReadWrite,
            }),
            writes,
        }
    }

    /// A tool declaring `memory-write` on `note` was judged by the gates as writing `note`: it
    /// may not write `other`. One that declares no memory write has its grant alone.
    #[test]
    fn a_tool_declaring_its_memory_writes_writes_only_those() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("n.org"),
            "* Note\n:PROPERTIES:\n:ID: note\n:END:\n* Other\n:PROPERTIES:\n:ID: other\n:END:\n",
        )
        .expect("write");
        let m = Arc::new(Memory::in_memory(MemoryConfig::default()).expect("store"));
        m.ingest(dir.path(), &IngestOptions::default())
            .expect("ingest");
        let root = m.root();
        let mut bound = call_of(m.clone(), Some(vec!["note".into()]));
        let err = bound
            .set_property("other".into(), "STATUS".into(), "x".into())
            .expect_err("not declared");
        assert!(
            err.contains("\"other\"") && err.contains("\"note\"") && err.contains("notes"),
            "{err}"
        );
        assert_eq!(m.root(), root, "nothing written");
        bound
            .set_property("note".into(), "STATUS".into(), "x".into())
            .expect("declared");
        let err = call_of(m.clone(), Some(vec![]))
            .set_property("note".into(), "STATUS".into(), "y".into())
            .expect_err("none declared");
        assert!(err.contains("no headline"), "{err}");
        call_of(m.clone(), None)
            .set_property("other".into(), "STATUS".into(), "z".into())
            .expect("granted, and no memory write declared");
    }

    fn node_of(title: String, body: String) -> api::Node {
        api::Node {
            id: "i".into(),
            derived_id: false,
            parent: None,
            file: "f.org".into(),
            line: 1,
            level: 1,
            title,
            todo: None,
            tags: vec![],
            properties: vec![("K".into(), "v".into())],
            body,
            hash: "h".into(),
        }
    }

    /// Three headlines with 2 MB titles and bodies: the plugin gets previews, each saying it
    /// was cut and where the whole is; a result that fits is as it was; one too long even as
    /// previews keeps the headlines that fit.
    #[test]
    fn a_query_over_its_budget_is_cut_to_previews_then_shortened() {
        let (small, cut) = within_budget(
            (0..3).map(|_| node_of("t".into(), "b".into())).collect(),
            QUERY_BUDGET,
        );
        assert_eq!(cut, Cut::default());
        assert!(small.iter().all(|n| n.title == "t" && n.body == "b"));

        let big = (0..3)
            .map(|_| node_of("x".repeat(2 << 20), "é".repeat(1 << 20)))
            .collect();
        let (cut_nodes, cut) = within_budget(big, QUERY_BUDGET);
        assert_eq!(
            cut,
            Cut {
                previews: true,
                left_out: 0
            }
        );
        assert_eq!(cut_nodes.len(), 3);
        for n in &cut_nodes {
            for text in [&n.title, &n.body] {
                assert!(text.len() < 2 * PREVIEW_BYTES, "{}", text.len());
                assert!(
                    text.contains("more bytes cut by the host")
                        && text.contains("`get` returns the headline whole"),
                    "{text}"
                );
            }
            assert_eq!(n.properties[0].1, "v", "short values stay whole");
        }

        let one = size(&node_of("t".into(), "b".into()));
        let (kept, cut) = within_budget(
            (0..10).map(|_| node_of("t".into(), "b".into())).collect(),
            3 * one,
        );
        assert_eq!((kept.len(), cut.left_out), (3, 7));
    }
}
