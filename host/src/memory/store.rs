//! The SQLite side: content-addressed nodes, the head (current root, the version of the
//! property settings in force, and a count of the head's moves), snapshots, garbage collection,
//! and an in-memory cache of nodes by hash (nodes never change, so the cache never goes stale;
//! it only grows until the next collection).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::MemoryError;
use super::node::{Node, NodeKind};

/// One kept snapshot: a root hash and when and why it was taken.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// Its number (increasing).
    pub seq: i64,
    /// The root hash it keeps.
    pub root: String,
    /// Unix seconds.
    pub at: i64,
    /// Why it was taken (`before tool write-file`, `manual`, ...).
    pub reason: String,
    /// The version of the property settings in force when it was taken ([`super::edit`]):
    /// restoring the snapshot restores them with the root.
    #[serde(skip)]
    pub(crate) overrides: i64,
    /// An undo point's: what was written before it, for [`Db::restore_if`].
    #[serde(skip)]
    pub(crate) window: Option<UndoWindow>,
}

/// The undo points of one handle that are still held, and how many property writes this
/// handle made while exactly one of them was held. A tool that writes memory runs while its
/// undo point is held (from before the tool until its cycle ends); a write made while no other
/// undo point was held is that tool's. A write made while two were held could be either
/// tool's, and so is neither's.
#[derive(Debug, Default)]
pub(crate) struct Windows(Mutex<WindowCount>);

#[derive(Debug, Default)]
struct WindowCount {
    /// Undo points held.
    open: usize,
    /// Property writes made while exactly one was held.
    own: i64,
}

impl Windows {
    fn lock(&self) -> MutexGuard<'_, WindowCount> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Count a property write of this handle (under the writer lock, after its commit).
    pub(crate) fn count_write(&self) {
        let mut count = self.lock();
        if count.open == 1 {
            count.own += 1;
        }
    }
}

/// An undo point's hold on [`Windows`], released when the last copy of its snapshot goes.
#[derive(Debug)]
pub(crate) struct OpenWindow(Arc<Windows>);

impl Drop for OpenWindow {
    fn drop(&mut self) {
        let mut count = self.0.lock();
        count.open = count.open.saturating_sub(1);
    }
}

/// What an undo point knew when it was handed out: the head's write count and this handle's
/// own count ([`Windows`]), read together under the writer lock.
#[derive(Clone, Debug)]
pub(crate) struct UndoWindow {
    writes: i64,
    own: i64,
    _open: Arc<OpenWindow>,
}

/// Not part of what a snapshot is: two copies of one snapshot are equal whoever holds them.
impl PartialEq for UndoWindow {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for UndoWindow {}

/// The head row.
pub(crate) struct Head {
    /// The root hash.
    pub(crate) root: String,
    /// The version of the property settings in force (0: none).
    pub(crate) overrides: i64,
    /// How many times the root was written: every statement that sets it counts, whichever
    /// process or version of this code ran it (a trigger counts them).
    pub(crate) writes: i64,
}

/// The store's SQLite connection and caches.
pub(crate) struct Db {
    conn: Mutex<Connection>,
    cache: RwLock<HashMap<String, Arc<Node>>>,
    head: RwLock<String>,
    /// SQLite's `data_version` when `head` was last read: it changes when another process
    /// (the CLI beside a running daemon) writes the database.
    version: std::sync::atomic::AtomicI64,
    /// Lines of headlines by file version ([`super::lines`]).
    pub(crate) lines: Mutex<super::lines::LineCache>,
    /// Held across every read-modify-write of the head (ingest, set-property, rollback), so
    /// that two writers never both build on the same root and one loses the other's change.
    pub(crate) writer: Mutex<()>,
    /// The undo points handed out and the property writes that are theirs.
    pub(crate) windows: Arc<Windows>,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS memory_nodes (hash TEXT PRIMARY KEY, node TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS memory_head (one INTEGER PRIMARY KEY CHECK (one = 1), root TEXT NOT NULL,
    overrides INTEGER NOT NULL DEFAULT 0, writes INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS memory_snapshots (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, root TEXT NOT NULL, at INTEGER NOT NULL,
    reason TEXT NOT NULL, auto INTEGER NOT NULL DEFAULT 0, overrides INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS memory_vectors (key TEXT PRIMARY KEY, model TEXT NOT NULL,
    vector BLOB NOT NULL) WITHOUT ROWID;
";

pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The root of an empty store.
pub(crate) fn empty_root() -> Node {
    Node {
        kind: NodeKind::Root,
        id: String::new(),
        derived_id: false,
        file: String::new(),
        level: 0,
        title: String::new(),
        todo: None,
        done: false,
        tags: vec![],
        properties: vec![],
        closed: None,
        body: String::new(),
        children: vec![],
    }
}

impl Db {
    pub(crate) fn open(path: Option<&Path>) -> Result<Db, MemoryError> {
        let conn = match path {
            Some(p) => {
                // The notes of whoever runs it: no other user of the machine reads them.
                if let Some(dir) = p.parent() {
                    crate::dirs::create_private_dir(dir).map_err(|e| MemoryError::Io {
                        path: dir.display().to_string(),
                        message: e.to_string(),
                    })?;
                }
                crate::dirs::create_private_file(p);
                Connection::open(p)?
            }
            None => Connection::open_in_memory()?,
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.execute_batch(SCHEMA)?;
        conn.execute_batch(super::lines::SCHEMA)?;
        conn.execute_batch(super::edit::SCHEMA)?;
        // Databases made before snapshots had a kind: theirs all count as kept. Those made
        // before the settings were versioned get their settings as one version below.
        add_column(
            &conn,
            "memory_snapshots",
            "auto",
            "INTEGER NOT NULL DEFAULT 0",
        )?;
        add_column(
            &conn,
            "memory_snapshots",
            "overrides",
            "INTEGER NOT NULL DEFAULT 0",
        )?;
        add_column(
            &conn,
            "memory_head",
            "overrides",
            "INTEGER NOT NULL DEFAULT 0",
        )?;
        add_column(&conn, "memory_head", "writes", "INTEGER NOT NULL DEFAULT 0")?;
        // Every statement that sets the root counts, an older ingest's or another process's
        // too: an undo point compares the count ([`Db::restore_if`]).
        conn.execute_batch(
            "CREATE TRIGGER IF NOT EXISTS memory_head_writes AFTER UPDATE OF root ON memory_head
             BEGIN UPDATE memory_head SET writes = writes + 1 WHERE one = 1; END;",
        )?;
        // Two processes may create the database at once: whoever comes second keeps the head.
        let root = empty_root();
        let hash = root.hash();
        insert(&conn, &hash, &root)?;
        conn.execute(
            "INSERT OR IGNORE INTO memory_head (one, root) VALUES (1, ?1)",
            params![hash],
        )?;
        let head = read_head(&conn)?;
        let mut conn = conn;
        super::lines::migrate(&mut conn)?;
        super::edit::migrate(&mut conn)?;
        let version = data_version(&conn)?;
        Ok(Db {
            conn: Mutex::new(conn),
            cache: RwLock::new(HashMap::new()),
            head: RwLock::new(head),
            version: std::sync::atomic::AtomicI64::new(version),
            lines: Mutex::default(),
            writer: Mutex::new(()),
            windows: Arc::default(),
        })
    }

    /// The writer lock (see [`Db::writer`]).
    pub(crate) fn write_lock(&self) -> MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current root hash, re-read when another process changed the database.
    pub(crate) fn head(&self) -> String {
        use std::sync::atomic::Ordering;
        {
            let conn = self.conn();
            if let Ok(v) = data_version(&conn)
                && v != self.version.load(Ordering::Acquire)
                && let Ok(h) = read_head(&conn)
            {
                self.version.store(v, Ordering::Release);
                *self.head.write().unwrap_or_else(|p| p.into_inner()) = h;
                // Another process wrote: lines it recorded may replace what is cached.
                self.forget_lines();
            }
        }
        self.head.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The head as last read, without asking the database whether another process moved it.
    pub(crate) fn cached_head(&self) -> String {
        self.head.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set_head_cached(&self, root: String) {
        *self.head.write().unwrap_or_else(|p| p.into_inner()) = root;
    }

    /// The node with `hash`, from the cache or the database.
    pub(crate) fn node(&self, hash: &str) -> Result<Arc<Node>, MemoryError> {
        if let Some(n) = self.cached(hash) {
            return Ok(n);
        }
        let node = Arc::new(load_node(&self.conn(), hash)?);
        self.cache
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(hash.to_owned(), Arc::clone(&node));
        Ok(node)
    }

    /// The node with `hash` if it is cached (nodes never change, so a cached one is current).
    pub(crate) fn cached(&self, hash: &str) -> Option<Arc<Node>> {
        self.cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(hash)
            .cloned()
    }

    /// Remember nodes just written (after their transaction committed).
    pub(crate) fn cache_nodes(&self, nodes: Vec<(String, Node)>) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        for (hash, node) in nodes {
            cache.entry(hash).or_insert_with(|| Arc::new(node));
        }
    }

    /// Record a snapshot of the head as the database has it (see [`record_snapshot`]). An
    /// automatic one (an undo point) is handed out holding an [`UndoWindow`]: call it under
    /// the writer lock, so that the write counts it holds agree.
    pub(crate) fn snapshot(
        &self,
        reason: &str,
        keep: usize,
        kind: SnapshotKind,
    ) -> Result<Snapshot, MemoryError> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let head = read_head_row(&tx)?;
        let mut snap = record_snapshot(&tx, &head.root, reason, keep, kind)?;
        tx.commit()?;
        if kind == SnapshotKind::Automatic {
            let mut count = self.windows.lock();
            count.open += 1;
            snap.window = Some(UndoWindow {
                writes: head.writes,
                own: count.own,
                _open: Arc::new(OpenWindow(Arc::clone(&self.windows))),
            });
        }
        Ok(snap)
    }

    pub(crate) fn snapshots(&self) -> Result<Vec<Snapshot>, MemoryError> {
        snapshots_in(&self.conn())
    }

    /// Fail unless `snap` can be restored: its root is a stored root node and its settings
    /// version is still there.
    fn restorable(&self, snap: &Snapshot) -> Result<(), MemoryError> {
        let node = self.node(&snap.root)?;
        if node.kind != NodeKind::Root {
            return Err(MemoryError::NotFound(format!(
                "{} is not a root",
                snap.root
            )));
        }
        if !super::edit::version_exists(&self.conn(), snap.overrides)? {
            return Err(MemoryError::NotFound(format!(
                "the property settings of snapshot #{} were collected",
                snap.seq
            )));
        }
        Ok(())
    }

    /// Move the head to `snap`: its root and its property settings. One row written.
    pub(crate) fn move_head(&self, snap: &Snapshot) -> Result<(), MemoryError> {
        self.restorable(snap)?;
        self.conn().execute(
            "UPDATE memory_head SET root = ?1, overrides = ?2 WHERE one = 1",
            params![snap.root, snap.overrides],
        )?;
        self.set_head_cached(snap.root.clone());
        Ok(())
    }

    /// Move the head to `snap` if the root is still `expected` and, for an undo point, every
    /// write since it was handed out was this handle's property write made while no other
    /// undo point was held ([`Windows`]). One transaction checks and moves. Returns whether
    /// the head is at `snap` now (it may have been already). Call it under the writer lock.
    pub(crate) fn restore_if(&self, snap: &Snapshot, expected: &str) -> Result<bool, MemoryError> {
        self.restorable(snap)?;
        let own = self.windows.lock().own;
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let head = read_head_row(&tx)?;
        if head.root == snap.root && head.overrides == snap.overrides {
            return Ok(true);
        }
        if head.root != expected {
            return Ok(false);
        }
        if let Some(w) = &snap.window
            && head.writes - w.writes != own - w.own
        {
            return Ok(false);
        }
        tx.execute(
            "UPDATE memory_head SET root = ?1, overrides = ?2 WHERE one = 1",
            params![snap.root, snap.overrides],
        )?;
        tx.commit()?;
        drop(conn);
        self.set_head_cached(snap.root.clone());
        Ok(true)
    }

    /// Delete every node that neither the head nor a kept snapshot reaches. Returns how many.
    pub(crate) fn collect(&self) -> Result<usize, MemoryError> {
        // No writer may add nodes between the walk and the delete.
        let _writer = self.write_lock();
        let head = self.head();
        let mut roots = vec![head.clone()];
        let snapshots = self.snapshots()?;
        let mut versions: Vec<i64> = snapshots.iter().map(|s| s.overrides).collect();
        roots.extend(snapshots.iter().map(|s| s.root.clone()));
        let mut live: HashSet<String> = HashSet::new();
        let mut stack = roots;
        while let Some(h) = stack.pop() {
            if !live.insert(h.clone()) {
                continue;
            }
            match self.node(&h) {
                Ok(n) => stack.extend(n.children.iter().cloned()),
                Err(MemoryError::Missing(_)) => {}
                Err(e) => return Err(e),
            }
        }
        let mut conn = self.conn();
        // The writer lock keeps out this process's writers only: another process (the CLI
        // beside the daemon) may have moved the head or taken a snapshot since the walk.
        // Checked with the database's write lock held, and then nothing is collected this time
        // rather than what that write made reachable.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if read_head(&tx)? != head || snapshots_in(&tx)? != snapshots {
            return Ok(0);
        }
        let all: Vec<String> = {
            let mut stmt = tx.prepare("SELECT hash FROM memory_nodes")?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<Result<_, _>>()?
        };
        let mut removed = 0;
        {
            let mut del = tx.prepare("DELETE FROM memory_nodes WHERE hash = ?1")?;
            for h in all.iter().filter(|h| !live.contains(*h)) {
                del.execute(params![h])?;
                removed += 1;
            }
        }
        super::lines::collect(&tx)?;
        versions.push(read_head_row(&tx)?.overrides);
        super::edit::collect(&tx, &versions)?;
        tx.commit()?;
        self.retain_lines(&live);
        self.cache
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|h, _| live.contains(h));
        Ok(removed)
    }
}

/// A transaction that moves the data of `table`, a table of an older version of the store, to
/// where this version keeps it: `None` when there is no such table (nothing to move). Two
/// processes may open an old database at once: one migrates, the other finds it done.
pub(crate) fn migrating<'c>(
    conn: &'c mut Connection,
    table: &str,
) -> Result<Option<rusqlite::Transaction<'c>>, MemoryError> {
    let exists = |c: &Connection| -> rusqlite::Result<bool> {
        c.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")?
            .exists([table])
    };
    if !exists(conn)? {
        return Ok(None);
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    Ok(exists(&tx)?.then_some(tx))
}

/// The head as the database has it.
pub(crate) fn read_head(conn: &Connection) -> Result<String, MemoryError> {
    Ok(
        conn.query_row("SELECT root FROM memory_head WHERE one = 1", [], |r| {
            r.get(0)
        })?,
    )
}

/// The whole head row as the database has it.
pub(crate) fn read_head_row(conn: &Connection) -> Result<Head, MemoryError> {
    Ok(conn.query_row(
        "SELECT root, overrides, writes FROM memory_head WHERE one = 1",
        [],
        |r| {
            Ok(Head {
                root: r.get(0)?,
                overrides: r.get(1)?,
                writes: r.get(2)?,
            })
        },
    )?)
}

/// Every snapshot kept, newest first.
fn snapshots_in(conn: &Connection) -> Result<Vec<Snapshot>, MemoryError> {
    let mut stmt = conn.prepare(
        "SELECT seq, root, at, reason, overrides FROM memory_snapshots ORDER BY seq DESC",
    )?;
    let rows = stmt.query_map([], snapshot_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A snapshot from `SELECT seq, root, at, reason, overrides`.
fn snapshot_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Snapshot> {
    Ok(Snapshot {
        seq: r.get(0)?,
        root: r.get(1)?,
        at: r.get(2)?,
        reason: r.get(3)?,
        overrides: r.get(4)?,
        window: None,
    })
}

/// Add `column` to `table` unless it is there (a database made by an older version). Two
/// processes may open such a database at once: the second finds the column added.
fn add_column(conn: &Connection, table: &str, column: &str, decl: &str) -> Result<(), MemoryError> {
    let has = |c: &Connection| -> rusqlite::Result<bool> {
        c.prepare(&format!(
            "SELECT 1 FROM pragma_table_info('{table}') WHERE name = ?1"
        ))?
        .exists(params![column])
    };
    if has(conn)? {
        return Ok(());
    }
    match conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {decl}")) {
        Err(_) if has(conn)? => Ok(()),
        other => other.map_err(MemoryError::from),
    }
}

fn data_version(conn: &Connection) -> Result<i64, MemoryError> {
    Ok(conn.query_row("PRAGMA data_version", [], |r| r.get(0))?)
}

/// The node stored under `hash`, read from the database.
pub(crate) fn load_node(conn: &Connection, hash: &str) -> Result<Node, MemoryError> {
    let text: Option<String> = conn
        .query_row(
            "SELECT node FROM memory_nodes WHERE hash = ?1",
            params![hash],
            |r| r.get(0),
        )
        .optional()?;
    let text = text.ok_or_else(|| MemoryError::Missing(hash.to_owned()))?;
    serde_json::from_str(&text).map_err(|e| MemoryError::Corrupt(format!("node {hash}: {e}")))
}

/// Record `root` as a snapshot and drop those beyond the newest `keep`: two statements, whatever
/// the store's size.
/// Who takes a snapshot, which decides what is pruned first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotKind {
    /// The pipeline's undo point before a tool: not taken when the newest snapshot already
    /// holds the current root, and pruned first.
    Automatic,
    /// A person's (`memory snapshot`), or before an ingest or a rollback: pruned only when
    /// no automatic one is left to prune.
    Kept,
}

/// Record a snapshot of `root`, keeping `keep` snapshots in all: the oldest automatic ones go
/// first, kept ones only when no automatic one is left. An automatic snapshot of the root the
/// newest snapshot already holds is that snapshot (nothing changed since).
pub(crate) fn record_snapshot(
    conn: &Connection,
    root: &str,
    reason: &str,
    keep: usize,
    kind: SnapshotKind,
) -> Result<Snapshot, MemoryError> {
    // The settings in force go with the root: the caller read `root` from this head.
    let overrides: i64 = conn
        .prepare_cached("SELECT overrides FROM memory_head WHERE one = 1")?
        .query_row([], |r| r.get(0))?;
    if kind == SnapshotKind::Automatic {
        let newest = conn
            .prepare_cached(
                "SELECT seq, root, at, reason, overrides FROM memory_snapshots
                 ORDER BY seq DESC LIMIT 1",
            )?
            .query_row([], snapshot_row)
            .optional()?;
        if let Some(newest) = newest.filter(|n| n.root == root && n.overrides == overrides) {
            return Ok(newest);
        }
    }
    let at = now();
    conn.execute(
        "INSERT INTO memory_snapshots (root, at, reason, auto, overrides)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![root, at, reason, kind == SnapshotKind::Automatic, overrides],
    )?;
    let seq = conn.last_insert_rowid();
    let keep = i64::try_from(keep.max(1)).unwrap_or(i64::MAX);
    conn.execute(
        "DELETE FROM memory_snapshots WHERE seq IN (
            SELECT seq FROM memory_snapshots WHERE seq != ?1 ORDER BY auto DESC, seq ASC
            LIMIT max(0, (SELECT COUNT(*) FROM memory_snapshots) - ?2))",
        params![seq, keep],
    )?;
    Ok(Snapshot {
        seq,
        root: root.to_owned(),
        at,
        reason: reason.to_owned(),
        overrides,
        window: None,
    })
}

/// Insert a node unless a node with the same hash is already there. Returns whether it was new.
pub(crate) fn insert(conn: &Connection, hash: &str, node: &Node) -> Result<bool, MemoryError> {
    insert_json(conn, hash, &to_json(node)?)
}

/// A node as it is stored.
pub(crate) fn to_json(node: &Node) -> Result<String, MemoryError> {
    serde_json::to_string(node)
        .map_err(|e| MemoryError::Corrupt(format!("serialising a node: {e}")))
}

/// As [`insert`], for a node already serialised with [`to_json`].
pub(crate) fn insert_json(conn: &Connection, hash: &str, json: &str) -> Result<bool, MemoryError> {
    let n = conn
        .prepare_cached("INSERT OR IGNORE INTO memory_nodes (hash, node) VALUES (?1, ?2)")?
        .execute(params![hash, json])?;
    Ok(n > 0)
}

/// SQLite's page cache in KiB (negative: a size, not a page count) while an ingest writes:
/// with SQLite's default of 2 MiB, an ingest of 100k headlines read its own index pages back
/// through the kernel, page by page (84k headlines/s on disk; with 32 MiB, 113–136k).
const INGEST_CACHE_KIB: i64 = -32_768;

/// SQLite's default page cache, the rest of the time.
const DEFAULT_CACHE_KIB: i64 = -2_000;

/// Run `write` (an ingest's transaction) with [`INGEST_CACHE_KIB`] of pages, then go back to
/// the default and free the pages, so that a daemon that ingested does not keep them.
///
/// # Errors
/// What `write` returns, or the cache could not be resized.
pub(crate) fn with_ingest_cache<T>(
    conn: &mut Connection,
    write: impl FnOnce(&mut Connection) -> Result<T, MemoryError>,
) -> Result<T, MemoryError> {
    conn.pragma_update(None, "cache_size", INGEST_CACHE_KIB)?;
    let written = write(conn);
    let restored = conn
        .pragma_update(None, "cache_size", DEFAULT_CACHE_KIB)
        .and_then(|()| conn.execute_batch("PRAGMA shrink_memory"));
    if let Err(e) = restored {
        tracing::warn!("the memory store's page cache was not shrunk after an ingest: {e}");
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_size(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA cache_size", [], |r| r.get(0))
            .expect("cache_size")
    }

    #[test]
    fn an_ingest_has_the_big_cache_and_gives_it_back_even_when_it_fails() {
        let mut conn = Connection::open_in_memory().expect("sqlite");
        let seen = with_ingest_cache(&mut conn, |c| Ok(cache_size(c))).expect("write");
        assert_eq!(seen, INGEST_CACHE_KIB);
        assert_eq!(cache_size(&conn), DEFAULT_CACHE_KIB);
        let failed: Result<(), MemoryError> =
            with_ingest_cache(&mut conn, |_| Err(MemoryError::NotFound("x".into())));
        assert!(failed.is_err());
        assert_eq!(cache_size(&conn), DEFAULT_CACHE_KIB);
    }
}
