//! Writes to the store: a changed headline and each of its ancestors become new nodes (path
//! copying); everything else is shared with the previous root.
//!
//! A property set here is also kept as a setting, laid over every later ingest of the
//! unchanged file. The settings are versioned with the root: each write makes a new version on
//! top of the one in force, the head and every snapshot name theirs, and a rollback moves back
//! to the snapshot's, one row as for the root. A version holds only what its write changed,
//! above its parent; after 64 versions (or as many as there are settings, if more) the
//! next write folds the chain into a new base that holds them all, so that reading the
//! settings never walks a long chain and folding costs, spread over the writes, a constant.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, OptionalExtension, params};

use super::node::NodeKind;
use super::org::ParsedHeadline;
use super::store;
use super::{Memory, MemoryError};

/// The versions of the settings. A base (no parent) holds every setting in force at it; any
/// other version holds what changed above its parent. `depth`: versions above the base;
/// `base`: how many settings the base holds. AUTOINCREMENT: a collected version's number is
/// never given to another, so a snapshot held in memory never names the wrong settings.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS memory_override_versions (ver INTEGER PRIMARY KEY AUTOINCREMENT,
    parent INTEGER, depth INTEGER NOT NULL, base INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS memory_override_values (ver INTEGER NOT NULL, id TEXT NOT NULL,
    key TEXT NOT NULL, value TEXT, PRIMARY KEY (ver, id, key)) WITHOUT ROWID;
";

/// Versions a chain may grow above its base before a write folds it (see the module's doc).
const FOLD_AFTER: i64 = 64;

/// The settings in force at one version: (headline ID, upper-case key) → value.
pub(crate) type Settings = BTreeMap<(String, String), String>;

/// The longest property key [`Memory::set_property`] takes, in bytes.
pub const MAX_KEY_BYTES: usize = 128;

/// The longest property value [`Memory::set_property`] takes, in bytes: a setting is laid
/// over every later ingest and copied into every query's answer.
pub const MAX_VALUE_BYTES: usize = 64 << 10;

impl Memory {
    /// Set property `key` of headline `id` to `value` (an `ID` sets the headline's ID and marks
    /// it as no longer derived). Returns the new root hash. The files are not touched; the
    /// setting is kept and laid over later ingests for as long as the file does not set that
    /// property itself (an `ID`: as long as the headline has none in its file), until a
    /// rollback to a snapshot taken before it or [`Memory::forget_property`].
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when no headline has that ID; [`MemoryError::Ambiguous`] when
    /// several have it; [`MemoryError::Refused`] for an empty key, a key or value with a
    /// newline, a key over [`MAX_KEY_BYTES`] or a value over [`MAX_VALUE_BYTES`], or an `ID`
    /// that another headline already has.
    pub fn set_property(&self, id: &str, key: &str, value: &str) -> Result<String, MemoryError> {
        let key = key.trim();
        check_setting(key, value)?;
        let key_upper = key.to_ascii_uppercase();
        let _writer = self.db.write_lock();
        self.check_target(id, (&key_upper, value))?;
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
            let head = store::read_head_row(&tx)?;
            if head.root != path[0] {
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
            // Kept, so that the next ingest of the unchanged file does not undo it; in a new
            // version of the settings, so that a rollback does.
            let settings = record_setting(&tx, head.overrides, id, &key_upper, Some(value))?;
            tx.execute(
                "UPDATE memory_head SET root = ?1, overrides = ?2 WHERE one = 1",
                params![new, settings],
            )?;
            tx.commit()?;
        }
        self.db.cache_nodes(written);
        self.db.set_head_cached(new.clone());
        self.db.windows.count_write();
        Ok(new)
    }

    /// Stop laying the setting of property `key` of headline `id` (made by
    /// [`Memory::set_property`]; `key` in any case) over later ingests. The head is left as it
    /// is: the next ingest of the headline's file reads the property as the file has it. A
    /// write like any other: a rollback to a snapshot taken before brings the setting back.
    /// Returns whether such a setting was in force.
    ///
    /// # Errors
    /// The database failed.
    pub fn forget_property(&self, id: &str, key: &str) -> Result<bool, MemoryError> {
        let key = key.trim().to_ascii_uppercase();
        let _writer = self.db.write_lock();
        let mut conn = self.db.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let head = store::read_head_row(&tx)?;
        if !settings_at(&tx, head.overrides)?.contains_key(&(id.to_owned(), key.clone())) {
            return Ok(false);
        }
        let settings = record_setting(&tx, head.overrides, id, &key, None)?;
        // `root = root`: the root is not changed, but the write is counted like any other.
        tx.execute(
            "UPDATE memory_head SET root = root, overrides = ?1 WHERE one = 1",
            params![settings],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// The property settings in force ([`Memory::set_property`]): (headline ID, upper-case
    /// key, value), sorted by ID and key.
    ///
    /// # Errors
    /// The database failed.
    pub fn property_settings(&self) -> Result<Vec<(String, String, String)>, MemoryError> {
        let conn = self.db.conn();
        let head = store::read_head_row(&conn)?;
        Ok(settings_at(&conn, head.overrides)?
            .into_iter()
            .map(|((id, key), value)| (id, key, value))
            .collect())
    }

    /// Refuse a write to `id` when several headlines have it (which one is meant cannot be
    /// told), and a `(key, value)` that would give headline `id` an `ID` another headline has
    /// (the two could no longer be told apart).
    ///
    /// # Errors
    /// [`MemoryError::Ambiguous`] or [`MemoryError::Refused`], naming the headlines.
    fn check_target(&self, id: &str, (key, value): (&str, &str)) -> Result<(), MemoryError> {
        self.with_index(|index| -> Result<(), MemoryError> {
            self.the_one(index, id)?;
            if key != "ID" || value == id {
                return Ok(());
            }
            let taken = index.all(value);
            if taken.is_empty() {
                return Ok(());
            }
            let places: Vec<String> = self
                .places(value, &taken)
                .into_iter()
                .map(|(file, line)| super::ingest::place(&file, line))
                .collect();
            Err(MemoryError::Refused(format!(
                "the ID {value:?} is already the headline's at {}: two headlines with one ID \
                 cannot be told apart; choose another",
                places.join(" and ")
            )))
        })?
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

/// Refuse a property setting no file could hold, or too large to copy into every answer.
///
/// # Errors
/// [`MemoryError::Refused`] saying what is wrong.
fn check_setting(key: &str, value: &str) -> Result<(), MemoryError> {
    if key.len() > MAX_KEY_BYTES || value.len() > MAX_VALUE_BYTES {
        return Err(MemoryError::Refused(format!(
            "a property key may have at most {MAX_KEY_BYTES} bytes (this one has {}) and a \
             value at most {} KiB (this one has {} bytes)",
            key.len(),
            MAX_VALUE_BYTES >> 10,
            value.len()
        )));
    }
    if key.is_empty() || key.contains(['\n', ':', ' ']) || value.contains('\n') {
        return Err(MemoryError::Refused(format!(
            "property {key:?} = {value:?}: a key is one word without `:`, and neither may hold \
             a newline"
        )));
    }
    Ok(())
}

/// Property settings made through [`Memory::set_property`], by headline ID.
pub(crate) type Overrides = std::collections::HashMap<String, Vec<(String, String)>>;

impl Memory {
    /// The property settings in force at the head, each headline's sorted by key.
    pub(crate) fn overrides(&self) -> Result<Overrides, MemoryError> {
        let conn = self.db.conn();
        let head = store::read_head_row(&conn)?;
        let mut map = Overrides::new();
        for ((id, key), value) in settings_at(&conn, head.overrides)? {
            map.entry(id).or_default().push((key, value));
        }
        Ok(map)
    }
}

/// The settings in force at version `ver` (0: none).
///
/// # Errors
/// [`MemoryError::NotFound`] when a version of the chain was collected;
/// [`MemoryError::Corrupt`] when a version names a later one as its parent.
pub(crate) fn settings_at(conn: &Connection, ver: i64) -> Result<Settings, MemoryError> {
    let mut parent_of =
        conn.prepare_cached("SELECT parent FROM memory_override_versions WHERE ver = ?1")?;
    let mut values_of =
        conn.prepare_cached("SELECT id, key, value FROM memory_override_values WHERE ver = ?1")?;
    // Nearest version first: what it says of a setting wins over its parents.
    let mut seen: BTreeMap<(String, String), Option<String>> = BTreeMap::new();
    let mut at = ver;
    while at != 0 {
        let parent: Option<i64> = parent_of
            .query_row(params![at], |r| r.get(0))
            .optional()?
            .ok_or_else(|| {
                MemoryError::NotFound(format!("property settings version {at} was collected"))
            })?;
        let rows = values_of.query_map(params![at], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        for row in rows {
            let (id, key, value) = row?;
            seen.entry((id, key)).or_insert(value);
        }
        at = match parent {
            Some(p) if p >= at => {
                return Err(MemoryError::Corrupt(format!(
                    "property settings version {at} names a later one, {p}, as its parent"
                )));
            }
            Some(p) => p,
            None => 0,
        };
    }
    Ok(seen
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect())
}

/// Whether version `ver` of the settings is there (0, none, always is).
pub(crate) fn version_exists(conn: &Connection, ver: i64) -> Result<bool, MemoryError> {
    if ver == 0 {
        return Ok(true);
    }
    Ok(conn
        .prepare_cached("SELECT 1 FROM memory_override_versions WHERE ver = ?1")?
        .exists(params![ver])?)
}

/// Record setting `key` of headline `id` to `value` (`None`: no longer set) on top of version
/// `parent`. Returns the new version: one row and a value, or, when the chain is long, a new
/// base with every setting (see the module's doc).
pub(crate) fn record_setting(
    conn: &Connection,
    parent: i64,
    id: &str,
    key: &str,
    value: Option<&str>,
) -> Result<i64, MemoryError> {
    let above: Option<(i64, i64)> = if parent == 0 {
        None
    } else {
        conn.prepare_cached("SELECT depth, base FROM memory_override_versions WHERE ver = ?1")?
            .query_row(params![parent], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
    };
    let mut insert = conn.prepare_cached(
        "INSERT INTO memory_override_values (ver, id, key, value) VALUES (?1, ?2, ?3, ?4)",
    )?;
    match above {
        Some((depth, base)) if depth < FOLD_AFTER.max(base) => {
            conn.prepare_cached(
                "INSERT INTO memory_override_versions (parent, depth, base) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![parent, depth + 1, base])?;
            let ver = conn.last_insert_rowid();
            insert.execute(params![ver, id, key, value])?;
            Ok(ver)
        }
        // A new base: the first setting, a long chain, or a parent that is gone (then
        // `settings_at` says so).
        _ => {
            let mut all = settings_at(conn, parent)?;
            let slot = (id.to_owned(), key.to_owned());
            match value {
                Some(v) => all.insert(slot, v.to_owned()),
                None => all.remove(&slot),
            };
            let size = i64::try_from(all.len()).unwrap_or(i64::MAX);
            conn.prepare_cached(
                "INSERT INTO memory_override_versions (parent, depth, base) VALUES (NULL, 0, ?1)",
            )?
            .execute(params![size])?;
            let ver = conn.last_insert_rowid();
            for ((id, key), value) in &all {
                insert.execute(params![ver, id, key, value])?;
            }
            Ok(ver)
        }
    }
}

/// Delete the versions of the settings that none of `live` is, nor is built on. Returns how
/// many.
pub(crate) fn collect(conn: &Connection, live: &[i64]) -> Result<usize, MemoryError> {
    let parents: HashMap<i64, Option<i64>> = {
        let mut stmt = conn.prepare("SELECT ver, parent FROM memory_override_versions")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    let mut keep = HashSet::new();
    for &ver in live {
        let mut at = Some(ver);
        while let Some(v) = at {
            if v == 0 || !keep.insert(v) {
                break;
            }
            at = parents.get(&v).copied().flatten();
        }
    }
    let mut removed = 0;
    let mut versions = conn.prepare("DELETE FROM memory_override_versions WHERE ver = ?1")?;
    let mut values = conn.prepare("DELETE FROM memory_override_values WHERE ver = ?1")?;
    for ver in parents.keys().filter(|v| !keep.contains(*v)) {
        versions.execute(params![ver])?;
        values.execute(params![ver])?;
        removed += 1;
    }
    Ok(removed)
}

/// Move the settings of a database made before they were versioned (`memory_overrides`, one
/// row per setting, never undone) into one base version, in force at the head and at every
/// snapshot (they were, as far as anyone can tell), then drop the old table.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), MemoryError> {
    let Some(tx) = store::migrating(conn, "memory_overrides")? else {
        return Ok(());
    };
    let rows: Vec<(String, String, String)> = {
        let mut stmt = tx.prepare("SELECT id, key, value FROM memory_overrides")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    if !rows.is_empty() {
        let size = i64::try_from(rows.len()).unwrap_or(i64::MAX);
        tx.execute(
            "INSERT INTO memory_override_versions (parent, depth, base) VALUES (NULL, 0, ?1)",
            params![size],
        )?;
        let ver = tx.last_insert_rowid();
        {
            let mut insert = tx.prepare(
                "INSERT OR REPLACE INTO memory_override_values (ver, id, key, value)
                 VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (id, key, value) in &rows {
                insert.execute(params![ver, id, key, value])?;
            }
        }
        tx.execute(
            "UPDATE memory_head SET overrides = ?1 WHERE one = 1",
            params![ver],
        )?;
        tx.execute("UPDATE memory_snapshots SET overrides = ?1", params![ver])?;
    }
    tx.execute_batch("DROP TABLE memory_overrides")?;
    tx.commit()?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryConfig;

    /// Past 64 versions a write folds the chain into a new base: every version still reads as
    /// the settings written up to it (removals too), and a collection keeps only the chain of
    /// the version in use.
    #[test]
    fn settings_fold_and_every_version_reads_as_written() {
        let m = Memory::in_memory(MemoryConfig::default()).expect("store");
        let conn = m.db.conn();
        let mut ver = 0;
        let mut expected = Settings::new();
        let mut versions = Vec::new();
        for i in 0..300 {
            let id = format!("h{}", i % 7);
            let key = format!("K{}", i % 3);
            let value = (i % 11 != 0).then(|| i.to_string());
            ver = record_setting(&conn, ver, &id, &key, value.as_deref()).expect("record");
            match value {
                Some(v) => {
                    expected.insert((id, key), v);
                }
                None => {
                    expected.remove(&(id, key));
                }
            }
            versions.push((ver, expected.clone()));
        }
        for (ver, settings) in &versions {
            assert_eq!(&settings_at(&conn, *ver).expect("read"), settings);
        }
        let depth: i64 = conn
            .query_row(
                "SELECT depth FROM memory_override_versions WHERE ver = ?1",
                params![ver],
                |r| r.get(0),
            )
            .expect("depth");
        assert!(depth <= FOLD_AFTER, "a chain of {depth}");
        let (last, settings) = versions.last().cloned().expect("written");
        assert!(collect(&conn, &[last]).expect("collect") > 0);
        assert_eq!(settings_at(&conn, last).expect("read"), settings);
        assert!(settings_at(&conn, versions[0].0).is_err(), "collected");
    }

    /// A key over 128 bytes or a value over 64 KiB is refused, and nothing is written; at the
    /// limits, the setting is made.
    #[test]
    fn keys_over_128_bytes_and_values_over_64_kib_are_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("a.org"),
            "* A\n:PROPERTIES:\n:ID: a\n:END:\n",
        )
        .expect("write");
        let m = Memory::in_memory(MemoryConfig::default()).expect("store");
        m.ingest(dir.path(), &crate::memory::IngestOptions::default())
            .expect("ingest");
        let root = m.root();
        let long_key = "k".repeat(MAX_KEY_BYTES + 1);
        let long_value = "v".repeat(MAX_VALUE_BYTES + 1);
        for (key, value) in [(long_key.as_str(), "v"), ("K", long_value.as_str())] {
            let err = m.set_property("a", key, value).expect_err("refused");
            assert!(
                matches!(&err, MemoryError::Refused(why) if why.contains("at most 128 bytes")),
                "{err}"
            );
            assert!(
                err.to_string().len() < 1024,
                "the value is not quoted whole"
            );
        }
        assert_eq!(m.root(), root, "nothing written");
        assert!(m.property_settings().expect("settings").is_empty());
        m.set_property(
            "a",
            &"k".repeat(MAX_KEY_BYTES),
            &"v".repeat(MAX_VALUE_BYTES),
        )
        .expect("at the limits");
    }
}
