//! Indexes of the tree at the head: headlines by ID, tag, TODO keyword and property, and their
//! text lowercased once. Built by one walk the first time the store is queried; when the head
//! moves (an edit, an ingest, a snapshot restored), the index follows it by comparing the two
//! trees, which share every node the move did not touch (Merkle hashes): a move that changes
//! a few headlines costs a few updates, whatever the store's size. Snapshot and rollback stay
//! one row each. Only a move that adds or removes nodes is indexed anew by a walk.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use super::node::{Node, NodeKind};
use super::query::Query;
use super::{Memory, MemoryError};

/// One node of the tree in file order, with what a hit needs.
pub(crate) struct Entry {
    /// The node's hash.
    pub(crate) hash: String,
    /// The node.
    pub(crate) node: Arc<Node>,
    /// Its parent headline's ID, if any.
    pub(crate) parent: Option<Arc<str>>,
    /// Entries in its subtree, itself included (a subtree is contiguous in file order).
    size: usize,
}

/// The indexes of one root. Positions are into `entries`, in file order; every list of
/// positions is sorted.
pub(crate) struct Index {
    root: String,
    entries: Vec<Entry>,
    by_id: HashMap<String, Vec<usize>>,
    by_tag: HashMap<String, Vec<usize>>,
    by_todo: HashMap<String, Vec<usize>>,
    by_property: HashMap<(String, String), Vec<usize>>,
    /// Every entry's title and body, lowercased, each followed by a NUL: one haystack the text
    /// query scans at memory speed. `starts[i]` is where entry `i`'s text begins.
    text: Vec<u8>,
    starts: Vec<usize>,
}

/// Ends a title and a body in [`Index::text`], so that no match spans two of them.
const END: u8 = 0;

/// The index of the head, if one was built.
#[derive(Default)]
pub(crate) struct Indexes(RwLock<Option<Index>>);

/// The keys a node is indexed under: (ID if a headline, tags, TODO, properties).
type Keys = (
    Option<String>,
    Vec<String>,
    Option<String>,
    Vec<(String, String)>,
);

fn keys(node: &Node) -> Keys {
    let id = (node.kind == NodeKind::Headline).then(|| node.id.clone());
    let mut tags: Vec<String> = node.tags.iter().map(|t| t.to_ascii_lowercase()).collect();
    tags.sort();
    tags.dedup();
    // As `Node::property` answers: the first value of each key, keys in any case.
    let mut properties: Vec<(String, String)> = Vec::new();
    for (key, value) in &node.properties {
        let key = key.to_ascii_lowercase();
        if !properties.iter().any(|(k, _)| *k == key) {
            properties.push((key, value.clone()));
        }
    }
    (id, tags, node.todo.clone(), properties)
}

fn haystack_of(node: &Node) -> Vec<u8> {
    let mut text = Vec::with_capacity(node.title.len() + node.body.len() + 2);
    for part in [&node.title, &node.body] {
        text.extend_from_slice(part.to_lowercase().as_bytes());
        text.push(END);
    }
    text
}

/// Put `at` into the sorted `list`.
fn insert_sorted(list: &mut Vec<usize>, at: usize) {
    if let Err(i) = list.binary_search(&at) {
        list.insert(i, at);
    }
}

/// Take `at` out of the list under `key`, dropping the list when it empties.
fn remove_sorted<K: std::hash::Hash + Eq>(map: &mut HashMap<K, Vec<usize>>, key: &K, at: usize) {
    if let Some(list) = map.get_mut(key) {
        if let Ok(i) = list.binary_search(&at) {
            list.remove(i);
        }
        if list.is_empty() {
            map.remove(key);
        }
    }
}

impl Index {
    /// Index the tree at `root` of `memory` (one walk).
    fn build(memory: &Memory, root: &str) -> Result<Index, MemoryError> {
        let mut index = Index {
            root: root.to_owned(),
            entries: Vec::new(),
            by_id: HashMap::new(),
            by_tag: HashMap::new(),
            by_todo: HashMap::new(),
            by_property: HashMap::new(),
            text: Vec::new(),
            starts: Vec::new(),
        };
        memory.walk_from(root, |node, hash, parent| {
            index.push(node, hash, parent);
            true
        })?;
        index.size_subtrees();
        Ok(index)
    }

    fn push(&mut self, node: &Arc<Node>, hash: &str, parent: Option<&Arc<str>>) {
        let at = self.entries.len();
        self.index_keys(&keys(node), at);
        self.starts.push(self.text.len());
        self.text.extend_from_slice(&haystack_of(node));
        self.entries.push(Entry {
            hash: hash.to_owned(),
            node: node.clone(),
            parent: parent.cloned(),
            size: 1,
        });
    }

    /// Every entry's subtree size, from the children lists (in reverse file order, so a node's
    /// children are sized before it).
    fn size_subtrees(&mut self) {
        for at in (0..self.entries.len()).rev() {
            let mut size = 1;
            for _ in 0..self.entries[at].node.children.len() {
                size += self.entries[at + size].size;
            }
            self.entries[at].size = size;
        }
    }

    fn index_keys(&mut self, (id, tags, todo, properties): &Keys, at: usize) {
        if let Some(id) = id {
            insert_sorted(self.by_id.entry(id.clone()).or_default(), at);
        }
        for tag in tags {
            insert_sorted(self.by_tag.entry(tag.clone()).or_default(), at);
        }
        if let Some(todo) = todo {
            insert_sorted(self.by_todo.entry(todo.clone()).or_default(), at);
        }
        for kv in properties {
            insert_sorted(self.by_property.entry(kv.clone()).or_default(), at);
        }
    }

    fn unindex_keys(&mut self, (id, tags, todo, properties): &Keys, at: usize) {
        if let Some(id) = id {
            remove_sorted(&mut self.by_id, id, at);
        }
        for tag in tags {
            remove_sorted(&mut self.by_tag, tag, at);
        }
        if let Some(todo) = todo {
            remove_sorted(&mut self.by_todo, todo, at);
        }
        for kv in properties {
            remove_sorted(&mut self.by_property, kv, at);
        }
    }

    /// Follow the head to `root`. `Ok(false)` when the trees differ in shape (nodes added or
    /// removed somewhere): the index is then half moved and must be rebuilt.
    fn move_to(&mut self, memory: &Memory, root: &str) -> Result<bool, MemoryError> {
        let old = memory.node(&self.root)?;
        let new = memory.node(root)?;
        let moved = self.follow(memory, &old, &new, 0, None)?;
        self.root = root.to_owned();
        Ok(moved)
    }

    /// Bring the children of `new` (which replaces `old`) up to date, the first of them at
    /// entry `at`, their parent headline being `parent`.
    fn follow(
        &mut self,
        memory: &Memory,
        old: &Node,
        new: &Node,
        mut at: usize,
        parent: Option<&Arc<str>>,
    ) -> Result<bool, MemoryError> {
        if old.children.len() != new.children.len() {
            return Ok(false);
        }
        for (old_hash, new_hash) in old.children.iter().zip(&new.children) {
            if at >= self.entries.len() {
                return Ok(false);
            }
            let size = self.entries[at].size;
            if old_hash != new_hash {
                let node = memory.node(new_hash)?;
                let was = self.replace(at, &node, new_hash, parent);
                let me: Option<Arc<str>> =
                    (node.kind == NodeKind::Headline).then(|| Arc::from(node.id.as_str()));
                if !self.follow(memory, &was, &node, at + 1, me.as_ref())? {
                    return Ok(false);
                }
            } else if self.entries[at].parent.as_deref() != parent.map(|p| &**p) {
                // The same subtree under a parent whose ID changed.
                self.entries[at].parent = parent.cloned();
            }
            at += size;
        }
        Ok(true)
    }

    /// Put `node` at entry `at` in place of the node there; returns the node it replaced.
    fn replace(
        &mut self,
        at: usize,
        node: &Arc<Node>,
        hash: &str,
        parent: Option<&Arc<str>>,
    ) -> Arc<Node> {
        let was = self.entries[at].node.clone();
        self.unindex_keys(&keys(&was), at);
        self.index_keys(&keys(node), at);
        let end = self.starts.get(at + 1).copied().unwrap_or(self.text.len());
        let text = haystack_of(node);
        let grown = text.len().wrapping_sub(end - self.starts[at]);
        self.text.splice(self.starts[at]..end, text);
        for start in &mut self.starts[at + 1..] {
            *start = start.wrapping_add(grown);
        }
        let entry = &mut self.entries[at];
        entry.node = node.clone();
        entry.hash = hash.to_owned();
        entry.parent = parent.cloned();
        was
    }

    /// Every headline with ID `id`, in file order (more than one: the ID is ambiguous).
    pub(crate) fn all(&self, id: &str) -> Vec<&Entry> {
        self.by_id
            .get(id)
            .map(|l| l.iter().map(|&at| &self.entries[at]).collect())
            .unwrap_or_default()
    }

    /// The IDs more than one headline has, each with those headlines in file order; sorted by
    /// the position of their first headline.
    pub(crate) fn shared(&self) -> Vec<(&str, Vec<&Entry>)> {
        let mut shared: Vec<(&str, &[usize])> = self
            .by_id
            .iter()
            .filter(|(_, l)| l.len() > 1)
            .map(|(id, l)| (id.as_str(), l.as_slice()))
            .collect();
        shared.sort_by_key(|(_, l)| l.first().copied());
        shared
            .into_iter()
            .map(|(id, l)| (id, l.iter().map(|&at| &self.entries[at]).collect()))
            .collect()
    }

    /// The entries matching `q`, in file order, at most `limit`: from the shortest index list
    /// the query's fields select (every entry when it names none), each checked in full.
    pub(crate) fn query(&self, q: &Query, limit: usize) -> Vec<&Entry> {
        const NONE: &[usize] = &[];
        let mut lists: Vec<&[usize]> = Vec::new();
        if let Some(tag) = &q.tag {
            lists.push(
                self.by_tag
                    .get(&tag.to_ascii_lowercase())
                    .map_or(NONE, Vec::as_slice),
            );
        }
        if let Some(todo) = &q.todo {
            lists.push(self.by_todo.get(todo).map_or(NONE, Vec::as_slice));
        }
        if let Some((key, value)) = &q.property {
            lists.push(
                self.by_property
                    .get(&(key.to_ascii_lowercase(), value.clone()))
                    .map_or(NONE, Vec::as_slice),
            );
        }
        let rest = Query {
            text: None,
            ..q.clone()
        };
        let list = lists.into_iter().min_by_key(|l| l.len());
        // An empty text is in every title (as `str::contains` has it): no text filter.
        let needle = q
            .text
            .as_deref()
            .map(str::to_lowercase)
            .filter(|t| !t.is_empty());
        match needle {
            // A text no title or body can hold.
            Some(t) if t.as_bytes().contains(&END) => Vec::new(),
            // No index list: scan the one haystack, jumping to the next entry at each match.
            Some(t) if list.is_none() => {
                let finder = memchr::memmem::Finder::new(t.as_bytes());
                let mut out = Vec::new();
                let mut from = 0;
                while out.len() < limit {
                    let Some(found) = finder.find(&self.text[from..]) else {
                        break;
                    };
                    let at = self.starts.partition_point(|&s| s <= from + found) - 1;
                    let e = &self.entries[at];
                    if rest.matches(&e.node) {
                        out.push(e);
                    }
                    from = self.starts.get(at + 1).copied().unwrap_or(self.text.len());
                }
                out
            }
            needle => {
                let finder = needle
                    .as_deref()
                    .map(|t| memchr::memmem::Finder::new(t.as_bytes()));
                let candidates: Box<dyn Iterator<Item = usize>> = match list {
                    Some(list) => Box::new(list.iter().copied()),
                    None => Box::new(0..self.entries.len()),
                };
                candidates
                    .filter(|&at| {
                        rest.matches(&self.entries[at].node)
                            && finder
                                .as_ref()
                                .is_none_or(|f| f.find(self.haystack(at)).is_some())
                    })
                    .take(limit)
                    .map(|at| &self.entries[at])
                    .collect()
            }
        }
    }

    /// Entry `at`'s lowercased title and body.
    fn haystack(&self, at: usize) -> &[u8] {
        let end = self.starts.get(at + 1).copied().unwrap_or(self.text.len());
        &self.text[self.starts[at]..end]
    }
}

impl Memory {
    /// Where each of `entries` (the headlines with ID `id`, in file order) is: its file and its
    /// line (0 when unknown).
    pub(crate) fn places(&self, id: &str, entries: &[&Entry]) -> Vec<(String, u32)> {
        // The lines of a file version are keyed by each ID's occurrence in it.
        let mut nth: HashMap<&str, u32> = HashMap::new();
        entries
            .iter()
            .map(|e| {
                let n = nth.entry(e.node.file.as_str()).or_insert(0);
                *n += 1;
                let line = self.db.line(&e.node.file, &super::lines::key(id, *n));
                (e.node.file.clone(), line)
            })
            .collect()
    }

    /// The one headline with ID `id`, if any, from `index`.
    ///
    /// # Errors
    /// [`MemoryError::Ambiguous`] when several headlines have that ID.
    pub(crate) fn the_one<'i>(
        &self,
        index: &'i Index,
        id: &str,
    ) -> Result<Option<&'i Entry>, MemoryError> {
        match index.all(id).as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(MemoryError::ambiguous(id, self.places(id, many))),
        }
    }

    /// Run `f` on the index of the head, built or moved there first if the head moved.
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub(crate) fn with_index<R>(&self, f: impl FnOnce(&Index) -> R) -> Result<R, MemoryError> {
        loop {
            let root = self.root();
            {
                let index = self.indexes.0.read().unwrap_or_else(|p| p.into_inner());
                if let Some(index) = index.as_ref().filter(|i| i.root == root) {
                    return Ok(f(index));
                }
            }
            let mut index = self.indexes.0.write().unwrap_or_else(|p| p.into_inner());
            // A move that fails (a node of the old root collected since, say) rebuilds too.
            let moved = match index.as_mut() {
                Some(i) if i.root == root => true,
                Some(i) => i.move_to(self, &root).unwrap_or(false),
                None => false,
            };
            if !moved {
                match Index::build(self, &root) {
                    Ok(built) => *index = Some(built),
                    Err(e) => {
                        *index = None;
                        return Err(e);
                    }
                }
            }
            // Read it under the shared lock (the head may have moved again meanwhile).
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::memory::{Hit, IngestOptions, MemoryConfig};

    /// An Org file from `heads`: (level 1–3, todo, tags, property value, title word, id).
    fn org(heads: &[(u8, u8, u8, u8, u8, bool)]) -> String {
        let mut text = String::new();
        for (i, &(level, todo, tags, prop, word, id)) in heads.iter().enumerate() {
            let stars = "*".repeat(usize::from(level % 3) + 1);
            let todo = ["", "TODO ", "DONE ", "NEXT "][usize::from(todo % 4)];
            let tags = [":a:", ":b:", ":A:b:", ""][usize::from(tags % 4)];
            let word = ["Alpha", "beta", "Gamma delta", "ÉTÉ"][usize::from(word % 4)];
            text.push_str(&format!("{stars} {todo}{word} {i} {tags}\n"));
            text.push_str(":PROPERTIES:\n");
            if id {
                // Repeated IDs on purpose: `get` must refuse them, naming each.
                text.push_str(&format!(":ID: id-{}\n", i % 5));
            }
            text.push_str(&format!(":Owner: o{}\n:OWNER: second\n:END:\n", prop % 3));
            text.push_str(&format!("Body {word} text.\n"));
        }
        text
    }

    /// What a plain walk answers (the behaviour before the indexes).
    fn walked(m: &Memory, q: &Query, limit: usize) -> Vec<Hit> {
        let mut hits = Vec::new();
        m.walk(|node, hash, parent| {
            if q.matches(node) {
                hits.push(m.hit(node, hash, parent));
            }
            hits.len() < limit
        })
        .expect("walk");
        hits
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn indexed_answers_are_the_walks_answers(
            heads in prop::collection::vec((0u8..3, 0u8..4, 0u8..4, 0u8..3, 0u8..4, any::<bool>()), 0..40),
            tag in prop::option::of(prop::sample::select(vec!["a", "A", "b", "c"])),
            todo in prop::option::of(prop::sample::select(vec!["TODO", "DONE", "todo"])),
            owner in prop::option::of(prop::sample::select(vec!["o0", "o1", "second"])),
            text in prop::option::of(prop::sample::select(vec!["alpha", "GAMMA", "été", "body", "zzz", ""])),
            limit in 1usize..8,
        ) {
            let dir = tempfile::tempdir().expect("dir");
            std::fs::write(dir.path().join("a.org"), org(&heads)).expect("write");
            let m = Memory::in_memory(MemoryConfig::default()).expect("memory");
            m.ingest(dir.path(), &IngestOptions::default()).expect("ingest");
            let q = Query {
                tag: tag.map(Into::into),
                todo: todo.map(Into::into),
                property: owner.map(|o| ("owner".to_owned(), o.to_owned())),
                text: text.map(Into::into),
                limit: Some(limit),
                ..Query::default()
            };
            prop_assert_eq!(m.query(&q).expect("query"), walked(&m, &q, limit));
            let all = walked(&m, &Query::default(), usize::MAX);
            for i in 0..6 {
                get_agrees(&m, &all, &format!("id-{i}"))?;
            }
        }
    }

    /// `get` answers as a walk does: the one headline with `id`, or none; when several have it,
    /// an error naming where each is (the first at its line), never one of them.
    fn get_agrees(m: &Memory, all: &[Hit], id: &str) -> Result<(), TestCaseError> {
        let found: Vec<&Hit> = all.iter().filter(|h| h.id == id).collect();
        match (m.get(id), found.as_slice()) {
            (Ok(got), []) => prop_assert_eq!(got, None),
            (Ok(got), [one]) => prop_assert_eq!(got, Some((*one).clone())),
            (Err(MemoryError::Ambiguous { places, .. }), many) if many.len() > 1 => {
                let named = crate::memory::MAX_PLACES_NAMED;
                prop_assert_eq!(
                    places.len(),
                    many.len().min(named) + usize::from(many.len() > named)
                );
                prop_assert_eq!(&places[0], &format!("{}:{}", many[0].file, many[0].line));
            }
            (got, _) => prop_assert!(false, "{got:?} for {} headlines", found.len()),
        }
        Ok(())
    }

    /// The index answers as a walk does.
    fn agree(m: &Memory) -> Result<(), TestCaseError> {
        for q in [
            Query::default(),
            Query {
                tag: Some("A".into()),
                ..Query::default()
            },
            Query {
                todo: Some("TODO".into()),
                ..Query::default()
            },
            Query {
                property: Some(("owner".into(), "o1".into())),
                ..Query::default()
            },
            Query {
                property: Some(("OWNER".into(), "edited".into())),
                ..Query::default()
            },
            Query {
                text: Some("alpha".into()),
                ..Query::default()
            },
            Query {
                text: Some(String::new()),
                ..Query::default()
            },
        ] {
            prop_assert_eq!(m.query(&q).expect("query"), walked(m, &q, 100));
        }
        let all = walked(m, &Query::default(), usize::MAX);
        for id in ["id-0", "id-1", "id-2", "new-id", "moved"] {
            get_agrees(m, &all, id)?;
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        /// Whatever moves the head (edits of any property, the ID included; restores of
        /// earlier snapshots; ingests that add or drop headlines), the index follows it.
        #[test]
        fn the_index_follows_every_move_of_the_head(
            heads in prop::collection::vec((0u8..3, 0u8..4, 0u8..4, 0u8..3, 0u8..4, any::<bool>()), 1..25),
            steps in prop::collection::vec((0u8..5, 0u8..6, 0u8..4), 1..12),
        ) {
            let dir = tempfile::tempdir().expect("dir");
            let file = dir.path().join("a.org");
            std::fs::write(&file, org(&heads)).expect("write");
            let m = Memory::in_memory(MemoryConfig::default()).expect("memory");
            m.ingest(dir.path(), &IngestOptions::default()).expect("ingest");
            let mut snapshots = vec![m.snapshot("start").expect("snapshot")];
            agree(&m)?;
            for (what, which, value) in steps {
                let id = ["id-0", "id-1", "id-2", "new-id", "moved", "id-3"][usize::from(which)];
                let value = ["edited", "o1", "o2", "x"][usize::from(value)];
                match what {
                    0 => { let _ = m.set_property(id, "OWNER", value); }
                    1 => { let _ = m.set_property(id, "Todo", value); }
                    2 => { let _ = m.set_property(id, "ID", if value == "x" { "moved" } else { "new-id" }); }
                    3 => {
                        snapshots.push(m.snapshot("step").expect("snapshot"));
                        let back = &snapshots[usize::from(which) % snapshots.len()];
                        m.restore(back).expect("restore");
                    }
                    _ => {
                        let cut = usize::from(which) % heads.len() + 1;
                        std::fs::write(&file, org(&heads[..cut])).expect("write");
                        m.ingest(dir.path(), &IngestOptions::default()).expect("ingest");
                    }
                }
                agree(&m)?;
            }
        }
    }

    #[test]
    fn a_moved_head_is_indexed_anew_and_a_recent_root_is_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("a.org");
        std::fs::write(&file, "* TODO One :a:\n:PROPERTIES:\n:ID: one\n:END:\n").expect("write");
        let m = Memory::in_memory(MemoryConfig::default()).expect("memory");
        m.ingest(dir.path(), &IngestOptions::default())
            .expect("ingest");
        let before = m.snapshot("test").expect("snapshot");
        assert!(m.get("one").expect("get").is_some());
        std::fs::write(&file, "* TODO Two :a:\n:PROPERTIES:\n:ID: two\n:END:\n").expect("write");
        m.ingest(dir.path(), &IngestOptions::default())
            .expect("ingest");
        assert!(m.get("one").expect("get").is_none(), "the new root's index");
        assert!(m.get("two").expect("get").is_some());
        m.restore(&before).expect("restore");
        assert!(m.get("one").expect("get").is_some(), "back to the old root");
        assert!(m.get("two").expect("get").is_none());
    }
}
