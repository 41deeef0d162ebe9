//! Ingesting Org files and directories: parse, hash bottom-up, write every new node, the new
//! root and the head in ONE transaction (a failure leaves the store as it was).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::params;
use serde::Serialize;

use super::node::{Node, NodeKind};
use super::org::{self, ParsedFile, ParsedHeadline, Warning};
use super::store;
use super::{Memory, MemoryError};

/// Most files one ingest reads.
const MAX_FILES: usize = 100_000;

/// How to ingest.
#[derive(Clone, Debug, Default)]
pub struct IngestOptions {
    /// Write an `:ID:` property into the files for headlines that lack one (the derived ID).
    pub write_ids: bool,
}

/// What an ingest did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IngestReport {
    /// Files read.
    pub files: usize,
    /// Headlines in them.
    pub headlines: usize,
    /// Nodes not already in the store (0 when nothing changed).
    pub new_nodes: usize,
    /// Root before.
    pub root_before: String,
    /// Root after (equal to `root_before` when nothing changed).
    pub root_after: String,
    /// IDs written into files (with `write_ids`).
    pub ids_written: usize,
    /// Headlines embedded.
    pub embedded: usize,
    /// What was odd, by file and line.
    pub warnings: Vec<Warning>,
}

/// The nodes of one built file (for the embedder).
pub(crate) type BuiltNodes<'a> = &'a [(String, Node)];

/// A file turned into nodes, ready to write.
struct Built {
    path: String,
    file_hash: String,
    nodes: Vec<(String, Node)>,
    lines: Vec<(String, u32)>,
    headlines: usize,
}

impl Memory {
    /// Ingest a file or a directory (recursively, `*.org` files, symlinked directories not
    /// followed). Unchanged files change nothing; the root moves only when content did, and
    /// then the previous root is kept as a snapshot (in the same transaction).
    ///
    /// # Errors
    /// `path` does not exist, or the database failed (then nothing was written).
    pub fn ingest(&self, path: &Path, opts: &IngestOptions) -> Result<IngestReport, MemoryError> {
        let mut report = IngestReport {
            root_before: self.root(),
            ..IngestReport::default()
        };
        let files = collect_files(path, &mut report.warnings)?;
        let mut built = Vec::new();
        for file in files {
            if let Some(b) = self.build_file(&file, opts, &mut report)? {
                built.push(b);
            }
        }
        report.files = built.len();
        report.headlines = built.iter().map(|b| b.headlines).sum();
        let nodes: Vec<BuiltNodes<'_>> = built.iter().map(|b| b.nodes.as_slice()).collect();
        let vectors = self.embed_new(&nodes, &mut report);
        report.root_after = self.commit(built, vectors, &mut report.new_nodes)?;
        Ok(report)
    }

    fn build_file(
        &self,
        file: &Path,
        opts: &IngestOptions,
        report: &mut IngestReport,
    ) -> Result<Option<Built>, MemoryError> {
        let name = file.display().to_string();
        let max = self.config.max_file_mib.saturating_mul(1 << 20);
        let len = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
        if len > max {
            report.warnings.push(Warning {
                file: name,
                line: 0,
                message: format!(
                    "{} MiB is over the {} MiB limit ([memory] max_file_mib); skipped",
                    len >> 20,
                    self.config.max_file_mib
                ),
            });
            return Ok(None);
        }
        let bytes = match std::fs::read(file) {
            Ok(b) => b,
            Err(e) => {
                report.warnings.push(Warning {
                    file: name,
                    line: 0,
                    message: format!("cannot read: {e}; skipped"),
                });
                return Ok(None);
            }
        };
        let text = decode(&name, &bytes, &mut report.warnings);
        let mut parsed = org::parse(&name, &text, &mut report.warnings);
        if opts.write_ids {
            let mut ids = BTreeMap::new();
            missing_ids(&parsed.headlines, &mut ids);
            if !ids.is_empty() {
                let updated = org::write_ids(&text, &ids);
                write_atomically(file, updated.as_bytes())?;
                report.ids_written += ids.len();
                let mut again = Vec::new();
                parsed = org::parse(&name, &updated, &mut again);
            }
        }
        Ok(Some(build(&name, parsed)))
    }

    /// Write the built files' nodes, a new root and the head, in one transaction.
    fn commit(
        &self,
        built: Vec<Built>,
        vectors: Vec<(String, String, Vec<u8>)>,
        new_nodes: &mut usize,
    ) -> Result<String, MemoryError> {
        let _writer = self.db.write_lock();
        let before = self.root();
        let root = self.db.node(&before)?;
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for h in &root.children {
            files.insert(self.db.node(h)?.id.clone(), h.clone());
        }
        for b in &built {
            files.insert(b.path.clone(), b.file_hash.clone());
        }
        let mut new_root = store::empty_root();
        new_root.children = files.into_values().collect();
        let new_hash = new_root.hash();
        let mut written = Vec::new();
        {
            let mut conn = self.db.conn();
            let tx = conn.transaction()?;
            for b in &built {
                for (hash, node) in &b.nodes {
                    if store::insert(&tx, hash, node)? {
                        *new_nodes += 1;
                    }
                }
                tx.execute("DELETE FROM memory_lines WHERE file = ?1", params![b.path])?;
                let mut ins = tx.prepare(
                    "INSERT OR REPLACE INTO memory_lines (id, file, line) VALUES (?1, ?2, ?3)",
                )?;
                for (id, line) in &b.lines {
                    ins.execute(params![id, b.path, line])?;
                }
            }
            for (key, model, blob) in &vectors {
                tx.execute(
                    "INSERT OR REPLACE INTO memory_vectors (key, model, vector) VALUES (?1, ?2, ?3)",
                    params![key, model, blob],
                )?;
            }
            if new_hash != before {
                // The state before this ingest stays reachable: it can be rolled back to.
                store::record_snapshot(&tx, &before, "before ingest", self.config.keep_snapshots)?;
                store::insert(&tx, &new_hash, &new_root)?;
                tx.execute(
                    "UPDATE memory_head SET root = ?1 WHERE one = 1",
                    params![new_hash],
                )?;
            }
            tx.commit()?;
        }
        {
            let mut lines = self.db.lines.write().unwrap_or_else(|p| p.into_inner());
            for b in &built {
                lines.extend(b.lines.iter().cloned());
            }
        }
        for b in built {
            written.extend(b.nodes);
        }
        written.push((new_hash.clone(), new_root));
        self.db.cache_nodes(written);
        self.db.set_head_cached(new_hash.clone());
        Ok(new_hash)
    }
}

/// Turn a parsed file into nodes, children before parents.
fn build(path: &str, parsed: ParsedFile) -> Built {
    let mut nodes = Vec::new();
    let mut lines = Vec::new();
    let mut headlines = 0;
    let children = parsed
        .headlines
        .into_iter()
        .map(|h| build_headline(path, h, &mut nodes, &mut lines, &mut headlines))
        .collect();
    let file = Node {
        kind: NodeKind::File,
        id: path.to_owned(),
        derived_id: false,
        file: path.to_owned(),
        level: 0,
        title: parsed.title,
        todo: None,
        tags: vec![],
        properties: vec![],
        closed: None,
        body: parsed.preamble,
        children,
    };
    let file_hash = file.hash();
    nodes.push((file_hash.clone(), file));
    Built {
        path: path.to_owned(),
        file_hash,
        nodes,
        lines,
        headlines,
    }
}

fn build_headline(
    path: &str,
    h: ParsedHeadline,
    nodes: &mut Vec<(String, Node)>,
    lines: &mut Vec<(String, u32)>,
    count: &mut usize,
) -> String {
    *count += 1;
    lines.push((h.id.clone(), h.line));
    let children = h
        .children
        .into_iter()
        .map(|c| build_headline(path, c, nodes, lines, count))
        .collect();
    let node = Node {
        kind: NodeKind::Headline,
        id: h.id,
        derived_id: h.derived_id,
        file: path.to_owned(),
        level: h.level,
        title: h.title,
        todo: h.todo,
        tags: h.tags,
        properties: h.properties,
        closed: h.closed,
        body: h.body,
        children,
    };
    let hash = node.hash();
    nodes.push((hash.clone(), node));
    hash
}

fn missing_ids(headlines: &[ParsedHeadline], out: &mut BTreeMap<u32, String>) {
    for h in headlines {
        if h.derived_id {
            out.insert(h.line, h.id.clone());
        }
        missing_ids(&h.children, out);
    }
}

/// UTF-8, or lossy UTF-8 with a warning at the first bad byte's line.
fn decode(file: &str, bytes: &[u8], warnings: &mut Vec<Warning>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) => {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|b| **b == b'\n').count() + 1;
            warnings.push(Warning {
                file: file.into(),
                line: u32::try_from(line).unwrap_or(u32::MAX),
                message: "invalid UTF-8 (replaced with U+FFFD)".into(),
            });
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

/// The `.org` files under `path`, sorted; symlinked directories are not followed, so a
/// symlink loop cannot trap the walk.
fn collect_files(path: &Path, warnings: &mut Vec<Warning>) -> Result<Vec<PathBuf>, MemoryError> {
    let io = |e: std::io::Error| MemoryError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let path = std::fs::canonicalize(path).map_err(io)?;
    if !path.is_dir() {
        return Ok(vec![path]);
    }
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = vec![path];
    while let Some(dir) = stack.pop() {
        if !seen.insert(dir.clone()) {
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => {
                warnings.push(Warning {
                    file: dir.display().to_string(),
                    line: 0,
                    message: format!("cannot list: {e}; skipped"),
                });
                continue;
            }
        };
        for entry in entries.flatten() {
            let p = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(p);
            } else if kind.is_symlink() && p.is_dir() {
                warnings.push(Warning {
                    file: p.display().to_string(),
                    line: 0,
                    message: "symlinked directory not followed".into(),
                });
            } else if p.extension().is_some_and(|e| e == "org") {
                if files.len() >= MAX_FILES {
                    warnings.push(Warning {
                        file: p.display().to_string(),
                        line: 0,
                        message: format!("more than {MAX_FILES} files; the rest are skipped"),
                    });
                    stack.clear();
                    break;
                }
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn write_atomically(file: &Path, bytes: &[u8]) -> Result<(), MemoryError> {
    let io = |e: std::io::Error| MemoryError::Io {
        path: file.display().to_string(),
        message: format!("cannot write the IDs back: {e}"),
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(io)?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(io)?;
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(file).map_err(|e| io(e.error))?;
    Ok(())
}
