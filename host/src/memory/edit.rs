//! Writes to the store: a changed headline and each of its ancestors become new nodes (path
//! copying); everything else is shared with the previous root.

use rusqlite::params;

use super::node::NodeKind;
use super::store;
use super::{Memory, MemoryError};

impl Memory {
    /// Set property `key` of headline `id` to `value` (an `ID` sets the headline's ID and marks
    /// it as no longer derived). Returns the new root hash. The files are not touched.
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when no headline has that ID; [`MemoryError::Refused`] for an
    /// empty key or a key or value with a newline.
    pub fn set_property(&self, id: &str, key: &str, value: &str) -> Result<String, MemoryError> {
        let key = key.trim();
        if key.is_empty() || key.contains(['\n', ':', ' ']) || value.contains('\n') {
            return Err(MemoryError::Refused(format!(
                "property {key:?} = {value:?}: a key is one word without `:`, and neither may \
                 hold a newline"
            )));
        }
        let _writer = self.db.write_lock();
        let path = self.path_to(id)?;
        let Some((leaf_hash, ancestors)) = path.split_last() else {
            return Err(MemoryError::NotFound(format!("no headline with ID {id}")));
        };
        let mut node = (*self.db.node(leaf_hash)?).clone();
        match node
            .properties
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
        {
            Some(slot) => slot.1 = value.to_owned(),
            None => node.properties.push((key.to_owned(), value.to_owned())),
        }
        if key.eq_ignore_ascii_case("ID") {
            node.id = value.to_owned();
            node.derived_id = false;
        }
        let mut written = Vec::new();
        let mut old = leaf_hash.clone();
        let mut new = node.hash();
        written.push((new.clone(), node));
        for anc in ancestors.iter().rev() {
            let mut parent = (*self.db.node(anc)?).clone();
            for c in parent.children.iter_mut().filter(|c| **c == old) {
                *c = new.clone();
            }
            old = anc.clone();
            new = parent.hash();
            written.push((new.clone(), parent));
        }
        {
            let mut conn = self.db.conn();
            let tx = conn.transaction()?;
            for (hash, node) in &written {
                store::insert(&tx, hash, node)?;
            }
            tx.execute(
                "UPDATE memory_head SET root = ?1 WHERE one = 1",
                params![new],
            )?;
            tx.commit()?;
        }
        if key.eq_ignore_ascii_case("ID") {
            let mut lines = self.db.lines.write().unwrap_or_else(|p| p.into_inner());
            if let Some(line) = lines.get(id).copied() {
                lines.insert(value.to_owned(), line);
            }
        }
        self.db.cache_nodes(written);
        self.db.set_head_cached(new.clone());
        Ok(new)
    }

    /// Hashes from the root down to the headline with `id` (root first), or empty.
    fn path_to(&self, id: &str) -> Result<Vec<String>, MemoryError> {
        let mut path = vec![self.root()];
        if self.descend(id, &mut path)? {
            Ok(path)
        } else {
            Err(MemoryError::NotFound(format!("no headline with ID {id}")))
        }
    }

    fn descend(&self, id: &str, path: &mut Vec<String>) -> Result<bool, MemoryError> {
        let Some(last) = path.last() else {
            return Ok(false);
        };
        let node = self.db.node(last)?;
        if node.kind == NodeKind::Headline && node.id == id {
            return Ok(true);
        }
        for child in &node.children {
            path.push(child.clone());
            if self.descend(id, path)? {
                return Ok(true);
            }
            path.pop();
        }
        Ok(false)
    }
}
