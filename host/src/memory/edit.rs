//! Writes to the store: a changed headline and each of its ancestors become new nodes (path
//! copying); everything else is shared with the previous root.

use rusqlite::params;

use super::node::NodeKind;
use super::org::ParsedHeadline;
use super::store;
use super::{Memory, MemoryError};

impl Memory {
    /// Set property `key` of headline `id` to `value` (an `ID` sets the headline's ID and marks
    /// it as no longer derived). Returns the new root hash. The files are not touched; the
    /// setting is kept and laid over later ingests for as long as the file does not set that
    /// property itself (an `ID`: as long as the headline has none in its file).
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
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            if store::read_head(&tx)? != path[0] {
                return Err(MemoryError::Refused(
                    "memory changed while the property was being set (another process wrote \
                     it); try again"
                        .into(),
                ));
            }
            for (hash, node) in &written {
                store::insert(&tx, hash, node)?;
            }
            // The new version of the file is at the lines of the old one.
            if let (Some(old_file), [.., (new_file, _), _root]) = (path.get(1), written.as_slice())
            {
                let renamed = key.eq_ignore_ascii_case("ID").then_some((id, value));
                super::lines::carry(&tx, old_file, new_file, renamed)?;
            }
            // Kept, so that the next ingest of the unchanged file does not undo it.
            tx.execute(
                "INSERT OR REPLACE INTO memory_overrides (id, key, value) VALUES (?1, ?2, ?3)",
                params![id, key.to_ascii_uppercase(), value],
            )?;
            tx.execute(
                "UPDATE memory_head SET root = ?1 WHERE one = 1",
                params![new],
            )?;
            tx.commit()?;
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

/// Property settings made through [`Memory::set_property`], by headline ID.
pub(crate) type Overrides = std::collections::HashMap<String, Vec<(String, String)>>;

impl Memory {
    /// The kept property settings.
    pub(crate) fn overrides(&self) -> Result<Overrides, MemoryError> {
        let conn = self.db.conn();
        let mut stmt = conn.prepare("SELECT id, key, value FROM memory_overrides")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
            ))
        })?;
        let mut map = Overrides::new();
        for row in rows {
            let (id, key, value) = row?;
            map.entry(id).or_default().push((key, value));
        }
        Ok(map)
    }
}

/// Lay the kept settings over freshly parsed headlines: a property the file does not set, and
/// an ID for a headline whose file gives it none.
pub(crate) fn apply_overrides(headlines: &mut [ParsedHeadline], overrides: &Overrides) {
    if overrides.is_empty() {
        return;
    }
    for h in headlines {
        if let Some(settings) = overrides.get(&h.id) {
            for (key, value) in settings {
                let in_file = h
                    .properties
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case(key));
                if in_file {
                    continue;
                }
                h.properties.push((key.clone(), value.clone()));
                if key == "ID" && h.derived_id {
                    h.id = value.clone();
                    h.derived_id = false;
                }
            }
        }
        apply_overrides(&mut h.children, overrides);
    }
}
