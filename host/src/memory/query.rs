//! The context API (seed: "peripheral vision"): queries by kind, tag, TODO state, property and
//! text; active projects; recently completed; sparse trees; the bounded awareness outline that
//! `think` puts in the prompt. Queries answer in file order, from the head's indexes.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::node::{Node, NodeKind};
use super::{Memory, MemoryError};

/// Default result limit.
pub const DEFAULT_LIMIT: usize = 100;

/// What to look for; unset fields match everything. Only headlines match unless `kind` says
/// `file`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Query {
    /// Has this tag (case-insensitive).
    #[serde(default)]
    pub tag: Option<String>,
    /// Has this TODO keyword (exact).
    #[serde(default)]
    pub todo: Option<String>,
    /// `headline` (default) or `file`.
    #[serde(default)]
    pub kind: Option<NodeKind>,
    /// Has this property with this value (key case-insensitive).
    #[serde(default)]
    pub property: Option<(String, String)>,
    /// Title or body contains this (case-insensitive).
    #[serde(default)]
    pub text: Option<String>,
    /// Only headlines whose file has no `:ID:` for them.
    #[serde(default)]
    pub missing_id: bool,
    /// At most this many (default 100).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Query {
    /// Whether `node` matches.
    pub fn matches(&self, node: &Node) -> bool {
        let kind = self.kind.unwrap_or(NodeKind::Headline);
        node.kind == kind
            && self.tag.as_deref().is_none_or(|t| node.has_tag(t))
            && self
                .todo
                .as_deref()
                .is_none_or(|t| node.todo.as_deref() == Some(t))
            && self
                .property
                .as_ref()
                .is_none_or(|(k, v)| node.property(k) == Some(v.as_str()))
            && self.text.as_deref().is_none_or(|t| {
                let t = t.to_lowercase();
                node.title.to_lowercase().contains(&t) || node.body.to_lowercase().contains(&t)
            })
            && (!self.missing_id || node.derived_id)
    }
}

/// A node as queries return it: its fields plus where it sits.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Hit {
    /// Headline ID (files: the path).
    pub id: String,
    /// `headline` or `file`.
    pub kind: NodeKind,
    /// The ID was derived (the file has no `:ID:`).
    pub derived_id: bool,
    /// Parent headline's ID; none at the top of a file.
    pub parent: Option<String>,
    /// The file.
    pub file: String,
    /// Line in the file (0 when unknown).
    pub line: u32,
    /// Outline level.
    pub level: u32,
    /// Title.
    pub title: String,
    /// TODO keyword.
    pub todo: Option<String>,
    /// The keyword is a done one in its file.
    pub done: bool,
    /// Tags.
    pub tags: Vec<String>,
    /// Properties.
    pub properties: Vec<(String, String)>,
    /// CLOSED timestamp.
    pub closed: Option<String>,
    /// Body.
    pub body: String,
    /// Merkle hash.
    pub hash: String,
}

impl Memory {
    /// Walk the tree from the head in file order: `visit(node, hash, parent headline id)`.
    /// Return `false` from `visit` to stop.
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn walk(
        &self,
        mut visit: impl FnMut(&Arc<Node>, &str, Option<&str>) -> bool,
    ) -> Result<(), MemoryError> {
        self.walk_from(&self.root(), |node, hash, parent| {
            visit(node, hash, parent.map(|p| &**p))
        })
    }

    /// As [`Memory::walk`], from `root`.
    pub(crate) fn walk_from(
        &self,
        root: &str,
        mut visit: impl FnMut(&Arc<Node>, &str, Option<&Arc<str>>) -> bool,
    ) -> Result<(), MemoryError> {
        let root = self.db.node(root)?;
        // (hash, parent headline id); reversed so that pops come out in file order.
        let mut stack: Vec<(String, Option<Arc<str>>)> = root
            .children
            .iter()
            .rev()
            .map(|h| (h.clone(), None))
            .collect();
        while let Some((hash, parent)) = stack.pop() {
            let node = self.db.node(&hash)?;
            if !visit(&node, &hash, parent.as_ref()) {
                break;
            }
            let me: Option<Arc<str>> = match node.kind {
                NodeKind::Headline => Some(Arc::from(node.id.as_str())),
                _ => None,
            };
            stack.extend(node.children.iter().rev().map(|h| (h.clone(), me.clone())));
        }
        Ok(())
    }

    /// Nodes matching `q`, in file order, at most `q.limit`. Answered from the head's indexes
    /// ([`super::index`]), which follow the head when it moves.
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn query(&self, q: &Query) -> Result<Vec<Hit>, MemoryError> {
        let limit = q.limit.unwrap_or(DEFAULT_LIMIT);
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.with_index(|index| {
            index
                .query(q, limit)
                .into_iter()
                .map(|e| self.hit(&e.node, &e.hash, e.parent.as_deref()))
                .collect()
        })
    }

    /// The headline with ID `id`.
    ///
    /// # Errors
    /// [`MemoryError::Ambiguous`] naming where they are when several headlines have that ID
    /// (which one is meant cannot be told: another file's `:ID:` must not stand in for the
    /// headline asked for); a node the tree refers to is missing.
    pub fn get(&self, id: &str) -> Result<Option<Hit>, MemoryError> {
        self.with_index(|index| -> Result<Option<Hit>, MemoryError> {
            Ok(self
                .the_one(index, id)?
                .map(|e| self.hit(&e.node, &e.hash, e.parent.as_deref())))
        })?
    }

    /// Headlines tagged `project` that are not done (seed: context-get-active-projects).
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn active_projects(&self) -> Result<Vec<Hit>, MemoryError> {
        let q = Query {
            tag: Some("project".into()),
            limit: Some(usize::MAX),
            ..Query::default()
        };
        Ok(self.query(&q)?.into_iter().filter(|h| !h.done).collect())
    }

    /// Done headlines, most recently closed first (those without a CLOSED time last).
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn recently_completed(&self, limit: usize) -> Result<Vec<Hit>, MemoryError> {
        let mut done = Vec::new();
        self.walk(|node, hash, parent| {
            if node.kind == NodeKind::Headline && node.is_done() {
                done.push(self.hit(node, hash, parent));
            }
            true
        })?;
        // Org timestamps `[2026-11-01 Sun 10:00]` sort as text by date and time.
        done.sort_by(|a, b| b.closed.cmp(&a.closed));
        done.truncate(limit);
        Ok(done)
    }

    /// The sparse tree: every node matching `q` and its ancestors, as an Org outline (seed:
    /// context-filter-sparse-tree). Files with no match are left out.
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn sparse_tree(&self, q: &Query) -> Result<String, MemoryError> {
        let root = self.db.node(&self.root())?;
        let mut out = String::new();
        for file in &root.children {
            let node = self.db.node(file)?;
            let mut lines = Vec::new();
            for child in &node.children {
                self.sparse(child, q, &mut lines)?;
            }
            if !lines.is_empty() {
                out.push_str(&format!("# {}\n", node.id));
                for l in lines {
                    out.push_str(&l);
                    out.push('\n');
                }
            }
        }
        Ok(out)
    }

    fn sparse(&self, hash: &str, q: &Query, out: &mut Vec<String>) -> Result<bool, MemoryError> {
        let node = self.db.node(hash)?;
        let at = out.len();
        out.push(outline_line(&node));
        let mut any = q.matches(&node);
        for child in &node.children {
            any |= self.sparse(child, q, out)?;
        }
        if !any {
            out.truncate(at);
        }
        Ok(any)
    }

    /// The outline `think` puts under CONTEXT: active projects with their open tasks, at most
    /// `max_bytes` (seed: context-assemble-global-awareness).
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn awareness(&self, max_bytes: usize) -> Result<String, MemoryError> {
        let root = self.root();
        if let Some((r, m, text)) = &*self.outline.lock().unwrap_or_else(|p| p.into_inner())
            && *r == root
            && *m == max_bytes
        {
            return Ok(text.clone());
        }
        let text = self.awareness_uncached(max_bytes)?;
        *self.outline.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((root, max_bytes, text.clone()));
        Ok(text)
    }

    fn awareness_uncached(&self, max_bytes: usize) -> Result<String, MemoryError> {
        let mut out = String::from(
            "Active projects and their open tasks, from the memory store (Org notes):\n",
        );
        let projects = self.active_projects()?;
        if projects.is_empty() {
            out.push_str("No active projects found.\n");
            return Ok(cut(out, max_bytes));
        }
        for (i, p) in projects.iter().enumerate() {
            let mut block = format!(
                "- PROJECT: {}{} (ID: {})\n",
                p.todo
                    .as_deref()
                    .map(|t| format!("{t} "))
                    .unwrap_or_default(),
                p.title,
                p.id
            );
            let node = self.db.node(&p.hash)?;
            for child in &node.children {
                let c = self.db.node(child)?;
                if c.todo.is_some() && !c.is_done() {
                    block.push_str(&format!(
                        "  - {} {} (ID: {})\n",
                        c.todo.as_deref().unwrap_or(""),
                        c.title,
                        c.id
                    ));
                }
            }
            if out.len() + block.len() > max_bytes {
                out.push_str(&format!("... and {} more projects\n", projects.len() - i));
                return Ok(cut(out, max_bytes));
            }
            out.push_str(&block);
        }
        Ok(out)
    }

    /// The headline with ID `id` as the model's CONTEXT opens with it when a request is about
    /// it (seed: the foveal focus): its outline line, body and child headlines, at most
    /// `max_bytes`; `None` when no headline has that ID.
    ///
    /// # Errors
    /// [`MemoryError::Ambiguous`] when several headlines have that ID; a node the tree refers
    /// to is missing.
    pub fn focus(&self, id: &str, max_bytes: usize) -> Result<Option<String>, MemoryError> {
        let Some(hit) = self.get(id)? else {
            return Ok(None);
        };
        let node = self.db.node(&hit.hash)?;
        let mut out = format!("{} (ID: {})\n", outline_line(&node), node.id);
        for line in node.body.lines().filter(|l| !l.trim().is_empty()) {
            out.push_str(&format!("  {line}\n"));
        }
        for child in &node.children {
            let c = self.db.node(child)?;
            if c.kind == NodeKind::Headline {
                out.push_str(&format!("  - {} (ID: {})\n", outline_line(&c), c.id));
            }
            if out.len() > max_bytes {
                break;
            }
        }
        Ok(Some(cut(out, max_bytes)))
    }

    pub(crate) fn hit(&self, node: &Node, hash: &str, parent: Option<&str>) -> Hit {
        let line = self.db.line(&node.file, &node.id);
        Hit {
            id: node.id.clone(),
            kind: node.kind,
            derived_id: node.derived_id,
            parent: parent.map(str::to_owned),
            file: node.file.clone(),
            line,
            level: node.level,
            title: node.title.clone(),
            todo: node.todo.clone(),
            done: node.done,
            tags: node.tags.clone(),
            properties: node.properties.clone(),
            closed: node.closed.clone(),
            body: node.body.clone(),
            hash: hash.to_owned(),
        }
    }
}

/// `** TODO Title :a:b:`
fn outline_line(node: &Node) -> String {
    let mut s = "*".repeat(node.level.max(1) as usize);
    if let Some(t) = &node.todo {
        s.push(' ');
        s.push_str(t);
    }
    s.push(' ');
    s.push_str(&node.title);
    if !node.tags.is_empty() {
        s.push_str(&format!(" :{}:", node.tags.join(":")));
    }
    s
}

/// Cut `text` to at most `max` bytes on a line (or char) boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    if let Some(nl) = text[..at].rfind('\n') {
        at = nl + 1;
    }
    text.truncate(at);
    text
}
