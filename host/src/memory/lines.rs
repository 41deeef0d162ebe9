//! Line numbers of headlines, kept by the version of the file they were read from (its node's
//! hash) rather than in the nodes: a line that moves (a blank line added above) changes no
//! node, and a rollback, which moves the head back to older file versions, finds their lines
//! with them. Read lazily, one file version at a time, so a rollback stays one row written.

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, Transaction, params};

use super::MemoryError;
use super::store::{Db, load_node, read_head};

/// The table, and what replaces the older one keyed by headline ID alone.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS memory_file_lines (file_hash TEXT NOT NULL, id TEXT NOT NULL,
    line INTEGER NOT NULL, PRIMARY KEY (file_hash, id)) WITHOUT ROWID;
";

/// What the database keeps in memory of lines.
#[derive(Default)]
pub(crate) struct LineCache {
    /// File version (node hash) → headline ID → line.
    by_file: HashMap<String, Arc<HashMap<String, u32>>>,
    /// The head these paths are of, and each file's path → its version at that head.
    files: Option<(String, HashMap<String, String>)>,
}

/// Move the lines of a database made before lines were kept by file version (`memory_lines`,
/// headline ID → line) to the versions of the head's files, then drop the old table.
pub(crate) fn migrate(conn: &mut Connection) -> Result<(), MemoryError> {
    let Some(tx) = super::store::migrating(conn, "memory_lines")? else {
        return Ok(());
    };
    let root = load_node(&tx, &read_head(&tx)?)?;
    for file_hash in &root.children {
        let file = load_node(&tx, file_hash)?;
        tx.execute(
            "INSERT OR IGNORE INTO memory_file_lines (file_hash, id, line)
             SELECT ?1, id, line FROM memory_lines WHERE file = ?2",
            params![file_hash, file.id],
        )?;
    }
    tx.execute_batch("DROP TABLE IF EXISTS memory_lines")?;
    tx.commit()?;
    Ok(())
}

/// The key in the lines table of the `n`th headline (1-based, in file order) with ID `id` in
/// one version of a file: the first by its ID, as a lookup by ID finds it; each next one by the
/// ID, a line break and `n`, so that an error naming two headlines with one ID can say where
/// each is. An ID holds no line break (it is one line of a drawer, and a property set in the
/// store holds none either), so no ID is such a key.
pub(crate) fn key(id: &str, n: u32) -> String {
    if n <= 1 {
        id.to_owned()
    } else {
        format!("{id}\n{n}")
    }
}

/// Record the lines of the file version `file_hash`, keyed by [`key`].
pub(crate) fn record(
    tx: &Transaction<'_>,
    file_hash: &str,
    lines: &[(String, u32)],
) -> Result<(), MemoryError> {
    // A version's lines are replaced whole (a blank line added above keeps the version).
    tx.execute(
        "DELETE FROM memory_file_lines WHERE file_hash = ?1",
        params![file_hash],
    )?;
    let mut ins = tx.prepare(
        "INSERT OR IGNORE INTO memory_file_lines (file_hash, id, line) VALUES (?1, ?2, ?3)",
    )?;
    for (id, line) in lines {
        ins.execute(params![file_hash, id, line])?;
    }
    Ok(())
}

/// The lines of file version `from` are those of `to` too (a property set in the store makes a
/// new version of the file, at the same lines), with headline `renamed.0` now `renamed.1`.
pub(crate) fn carry(
    tx: &Transaction<'_>,
    from: &str,
    to: &str,
    renamed: Option<(&str, &str)>,
) -> Result<(), MemoryError> {
    let (old, new) = renamed.unwrap_or(("", ""));
    tx.execute(
        "INSERT OR REPLACE INTO memory_file_lines (file_hash, id, line)
         SELECT ?2, CASE WHEN ?3 <> '' AND id = ?3 THEN ?4 ELSE id END, line
         FROM memory_file_lines WHERE file_hash = ?1",
        params![from, to, old, new],
    )?;
    Ok(())
}

/// Forget the lines of file versions no node is left for (after a garbage collection).
pub(crate) fn collect(tx: &Transaction<'_>) -> Result<(), MemoryError> {
    tx.execute(
        "DELETE FROM memory_file_lines WHERE file_hash NOT IN (SELECT hash FROM memory_nodes)",
        [],
    )?;
    Ok(())
}

impl Db {
    /// The line of headline `id` in `file` at the head, 0 when unknown.
    pub(crate) fn line(&self, file: &str, id: &str) -> u32 {
        self.file_version(file)
            .and_then(|v| self.lines_of(&v).ok())
            .and_then(|lines| lines.get(id).copied())
            .unwrap_or(0)
    }

    /// The lines just recorded for file version `file_hash` (after their transaction).
    pub(crate) fn cache_lines(&self, file_hash: &str, lines: &[(String, u32)]) {
        let mut first = HashMap::new();
        for (id, line) in lines {
            first.entry(id.clone()).or_insert(*line);
        }
        self.line_cache()
            .by_file
            .insert(file_hash.to_owned(), Arc::new(first));
    }

    /// Forget every cached line (another process wrote the database).
    pub(crate) fn forget_lines(&self) {
        *self.line_cache() = LineCache::default();
    }

    /// Forget cached lines of versions the collection removed.
    pub(crate) fn retain_lines(&self, live: &std::collections::HashSet<String>) {
        self.line_cache().by_file.retain(|h, _| live.contains(h));
    }

    fn line_cache(&self) -> std::sync::MutexGuard<'_, LineCache> {
        self.lines.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Each file's path → its version (node hash) under `root`; a file node that cannot be read
    /// is left out. `None` when the root itself cannot be read.
    pub(crate) fn file_versions(&self, root: &str) -> Option<HashMap<String, String>> {
        let root = self.node(root).ok()?;
        let mut files = HashMap::new();
        for hash in &root.children {
            if let Ok(node) = self.node(hash) {
                files.insert(node.id.clone(), hash.clone());
            }
        }
        Some(files)
    }

    /// The version of `file` at the head (the paths are re-read when the head moves: one node
    /// per file, from the cache).
    fn file_version(&self, file: &str) -> Option<String> {
        // The head as last read: the query asking already re-read it once.
        let head = self.cached_head();
        if let Some((at, files)) = &self.line_cache().files
            && *at == head
        {
            return files.get(file).cloned();
        }
        let files = self.file_versions(&head)?;
        let found = files.get(file).cloned();
        self.line_cache().files = Some((head, files));
        found
    }

    fn lines_of(&self, version: &str) -> Result<Arc<HashMap<String, u32>>, MemoryError> {
        if let Some(lines) = self.line_cache().by_file.get(version) {
            return Ok(Arc::clone(lines));
        }
        let lines: HashMap<String, u32> = {
            let conn = self.conn();
            let mut stmt =
                conn.prepare("SELECT id, line FROM memory_file_lines WHERE file_hash = ?1")?;
            let rows = stmt.query_map(params![version], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?))
            })?;
            rows.collect::<Result<_, _>>()?
        };
        let lines = Arc::new(lines);
        // None yet (another process is still writing them): asked again next time.
        if !lines.is_empty() {
            self.line_cache()
                .by_file
                .insert(version.to_owned(), Arc::clone(&lines));
        }
        Ok(lines)
    }
}
