//! Memory: an object store of Org headlines (seed 003, "The Object Store" and "Peripheral
//! Vision").
//!
//! Files are parsed with `orgize` ([`org`]); every headline becomes an immutable [`Node`] whose
//! Merkle hash covers its fields and its children's hashes ([`node`]); nodes are stored by hash in
//! SQLite ([`store`]), so the whole store is named by its root hash. A snapshot records a root
//! hash and a rollback moves the head back to one: both write one row, whatever the store's size
//! (the seed deep-copied the store on every cycle). The property settings laid over later
//! ingests ([`edit`]) are versioned with the root: a rollback takes them back too. Nodes no
//! kept root reaches are collected.
//! Queries ([`query`]) answer from indexes of the head's tree, built by one walk per root; [`embed`] adds similarity search when an
//! embeddings endpoint is configured.

pub mod edit;
pub mod embed;
mod files;
mod index;
pub mod ingest;
mod lines;
pub mod node;
pub mod org;
pub mod query;
mod shape;
pub mod store;

use std::path::Path;

use serde::Deserialize;

pub use embed::EmbeddingsConfig;
pub use ingest::{IngestOptions, IngestReport};
pub use node::{Node, NodeKind};
pub use org::Warning;
pub use query::{Hit, Query};
pub use store::{Snapshot, SnapshotKind};

use node::Node as N;
use store::Db;

/// `[memory]` of `passepartout.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// How many snapshots to keep (the seed kept 20).
    #[serde(default = "default_keep")]
    pub keep_snapshots: usize,
    /// Files larger than this many MiB are skipped with a warning.
    #[serde(default = "default_max_file_mib")]
    pub max_file_mib: u64,
    /// Org files or directories the daemon ingests at start and on every auto-save.
    #[serde(default)]
    pub paths: Vec<std::path::PathBuf>,
    /// `[memory.embeddings]`: an OpenAI-compatible embeddings endpoint. Off when absent.
    #[serde(default)]
    pub embeddings: Option<EmbeddingsConfig>,
    /// The TODO keywords of files without a `#+TODO:` line, written as in one:
    /// `"TODO NEXT | DONE CANCELLED"`. Org's default (`TODO | DONE`) when unset; a file's own
    /// `#+TODO:` lines replace it for that file.
    #[serde(default)]
    pub todo_keywords: Option<String>,
}

impl MemoryConfig {
    /// The TODO keywords of a file that declares none ([`MemoryConfig::todo_keywords`]).
    pub fn keywords(&self) -> org::TodoKeywords {
        self.todo_keywords
            .as_deref()
            .map_or_else(org::TodoKeywords::default, org::TodoKeywords::parse)
    }
}

fn default_keep() -> usize {
    20
}

fn default_max_file_mib() -> u64 {
    64
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            keep_snapshots: default_keep(),
            max_file_mib: default_max_file_mib(),
            paths: vec![],
            embeddings: None,
            todo_keywords: None,
        }
    }
}

/// What can go wrong in the memory store.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// The database failed.
    #[error("memory database: {0}")]
    Db(#[from] rusqlite::Error),
    /// A file or directory could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// What happened.
        message: String,
    },
    /// No headline, snapshot or root by that name.
    #[error("not found: {0}")]
    NotFound(String),
    /// A node a root refers to is gone (the database was edited by hand or is damaged).
    #[error(
        "memory node {0} is missing from the database; run `passepartout memory rollback` to a snapshot that is intact"
    )]
    Missing(String),
    /// A stored node does not parse.
    #[error("memory store corrupt: {0}")]
    Corrupt(String),
    /// Embeddings are not configured, or the endpoint failed.
    #[error("embeddings: {0}")]
    Embeddings(String),
    /// A write was asked of a read-only grant or with bad arguments.
    #[error("{0}")]
    Refused(String),
    /// Several headlines have the ID asked for: which one is meant cannot be told.
    #[error("ambiguous ID {id:?}: headlines in {}; give one of them another ID", .places.join(" and "))]
    Ambiguous {
        /// The ID.
        id: String,
        /// Where the headlines are (`file:line`), in file order; at most
        /// [`MAX_PLACES_NAMED`], then how many more.
        places: Vec<String>,
    },
}

/// Most places an [`MemoryError::Ambiguous`] names.
pub const MAX_PLACES_NAMED: usize = 5;

impl MemoryError {
    /// The error for ID `id`, which the headlines at `places` (file, line; 0 when unknown)
    /// all have.
    pub(crate) fn ambiguous(id: &str, places: Vec<(String, u32)>) -> MemoryError {
        let total = places.len();
        let mut named: Vec<String> = places
            .into_iter()
            .take(MAX_PLACES_NAMED)
            .map(|(file, line)| ingest::place(&file, line))
            .collect();
        if total > MAX_PLACES_NAMED {
            named.push(format!("{} more", total - MAX_PLACES_NAMED));
        }
        MemoryError::Ambiguous {
            id: id.to_owned(),
            places: named,
        }
    }
}

/// The memory store. Cheap to share behind an `Arc`; every method takes `&self`.
pub struct Memory {
    db: Db,
    config: MemoryConfig,
    /// The last awareness outline, by root hash and size: the prompt asks for it on every
    /// model call, and it only changes when the root does.
    outline: std::sync::Mutex<Option<(String, usize, String)>>,
    /// The indexes of the roots queried last.
    indexes: index::Indexes,
}

impl std::fmt::Debug for Memory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memory")
            .field("root", &self.root())
            .finish()
    }
}

impl Memory {
    /// Open (creating if needed) the store in the SQLite database at `path`.
    ///
    /// # Errors
    /// The database cannot be opened or its tables created.
    pub fn open(path: &Path, config: MemoryConfig) -> Result<Memory, MemoryError> {
        Ok(Memory {
            db: Db::open(Some(path))?,
            config,
            outline: std::sync::Mutex::new(None),
            indexes: index::Indexes::default(),
        })
    }

    /// A store in memory (tests, dry runs).
    ///
    /// # Errors
    /// As for [`Memory::open`].
    pub fn in_memory(config: MemoryConfig) -> Result<Memory, MemoryError> {
        Ok(Memory {
            db: Db::open(None)?,
            config,
            outline: std::sync::Mutex::new(None),
            indexes: index::Indexes::default(),
        })
    }

    /// The configuration it was opened with.
    pub fn config(&self) -> &MemoryConfig {
        &self.config
    }

    /// The root hash: the fingerprint of everything in the store.
    pub fn root(&self) -> String {
        self.db.head()
    }

    /// The node stored under `hash`.
    ///
    /// # Errors
    /// [`MemoryError::Missing`] when no node has that hash.
    pub fn node(&self, hash: &str) -> Result<std::sync::Arc<N>, MemoryError> {
        self.db.node(hash)
    }

    /// Record the current root as a kept snapshot (a person's; one row). Beyond
    /// `keep_snapshots`, the oldest automatic snapshots go first ([`store::record_snapshot`]).
    ///
    /// # Errors
    /// The database failed.
    pub fn snapshot(&self, reason: &str) -> Result<Snapshot, MemoryError> {
        self.db
            .snapshot(reason, self.config.keep_snapshots, SnapshotKind::Kept)
    }

    /// The pipeline's undo point: as [`Memory::snapshot`], but nothing new when the newest
    /// snapshot already holds the current root and settings, and pruned before any kept one.
    /// The snapshot returned also records which writes came before it, for
    /// [`Memory::restore_if`]; hold it (or a copy) while the tool it is taken for runs.
    ///
    /// # Errors
    /// The database failed.
    pub fn undo_point(&self, reason: &str) -> Result<Snapshot, MemoryError> {
        // Under the writer lock: the write counts it records are read together.
        let _writer = self.db.write_lock();
        self.db
            .snapshot(reason, self.config.keep_snapshots, SnapshotKind::Automatic)
    }

    /// The kept snapshots, newest first.
    ///
    /// # Errors
    /// The database failed.
    pub fn snapshots(&self) -> Result<Vec<Snapshot>, MemoryError> {
        self.db.snapshots()
    }

    /// Move the head back to a snapshot, named by its number or by a prefix (≥ 6 hex digits) of
    /// its root hash. The current root is snapshotted first, so a rollback can be undone.
    /// Returns the snapshot rolled back to.
    ///
    /// # Errors
    /// [`MemoryError::NotFound`] when no kept snapshot matches (or the prefix is ambiguous).
    pub fn rollback(&self, target: &str) -> Result<Snapshot, MemoryError> {
        let snapshots = self.snapshots()?;
        let by_seq = target
            .trim_start_matches('#')
            .parse::<i64>()
            .ok()
            .and_then(|seq| snapshots.iter().find(|s| s.seq == seq));
        let mut found: Vec<&Snapshot> = match by_seq {
            Some(s) => vec![s],
            None if target.len() >= 6 => snapshots
                .iter()
                .filter(|s| s.root.starts_with(target))
                .collect(),
            None => vec![],
        };
        found.dedup_by(|a, b| a.root == b.root);
        let snap = match found.as_slice() {
            [one] => (*one).clone(),
            [] => {
                return Err(MemoryError::NotFound(format!(
                    "no kept snapshot {target}; `passepartout memory snapshots` lists them"
                )));
            }
            _ => {
                return Err(MemoryError::NotFound(format!(
                    "{target} matches several snapshots; give more of the hash"
                )));
            }
        };
        let _writer = self.db.write_lock();
        self.snapshot(&format!("before rollback to #{}", snap.seq))?;
        self.db.move_head(&snap)?;
        tracing::info!(seq = snap.seq, root = %snap.root, "memory rolled back");
        Ok(snap)
    }

    /// Move the head to the root and the property settings of `snapshot` without recording
    /// anything. One row written.
    ///
    /// # Errors
    /// The snapshot's root or settings are not in the store.
    pub fn restore(&self, snapshot: &Snapshot) -> Result<(), MemoryError> {
        let _writer = self.db.write_lock();
        self.db.move_head(snapshot)
    }

    /// The pipeline's undo of a tool: as [`Memory::restore`], in one transaction that first
    /// checks that nothing but the tool wrote. The head moves only if its root is still
    /// `expected` (the root the tool left) and, for an undo point ([`Memory::undo_point`])
    /// still held, every write since it was handed out, by any process, was a
    /// [`Memory::set_property`] through this handle made while no other undo point of this
    /// handle was held, which is to say by the tool the undo point was taken for (if nothing
    /// outside a tool's undo point writes through this handle). An ingest (auto-save), a
    /// rollback, another process's write (the CLI) or another tool's write made while both
    /// ran leaves memory as it is. For any other snapshot, only the root is compared.
    /// Returns whether memory is at `snapshot` now (it may have been already).
    ///
    /// # Errors
    /// The snapshot's root or settings are not in the store, or the database failed.
    pub fn restore_if(&self, snapshot: &Snapshot, expected: &str) -> Result<bool, MemoryError> {
        let _writer = self.db.write_lock();
        self.db.restore_if(snapshot, expected)
    }

    /// The files the head holds that are not on disk: deleted since they were ingested, and
    /// brought back into memory by a rollback. The store keeps their headlines, not their text:
    /// the next ingest of a directory holding one (the daemon's auto-save of `paths` too)
    /// removes it again, so such a file must be written back (from a backup, version control)
    /// to be kept. Each is named as stored.
    ///
    /// # Errors
    /// A node the tree refers to is missing.
    pub fn files_not_on_disk(&self) -> Result<Vec<String>, MemoryError> {
        let root = self.db.node(&self.root())?;
        let mut gone = Vec::new();
        for hash in &root.children {
            let file = self.db.node(hash)?;
            // Ambient authority: a look at the file's own path, nothing read.
            let missing = std::fs::symlink_metadata(&file.id)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
            if missing {
                gone.push(file.id.clone());
            }
        }
        Ok(gone)
    }

    /// Write everything to the main database file (a WAL checkpoint): what auto-save and
    /// shutdown call.
    ///
    /// # Errors
    /// The database failed.
    pub fn checkpoint(&self) -> Result<(), MemoryError> {
        self.db
            .conn()
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Delete nodes that neither the head nor any kept snapshot reaches. Returns how many.
    ///
    /// # Errors
    /// The database failed.
    pub fn collect_garbage(&self) -> Result<usize, MemoryError> {
        self.db.collect()
    }
}
