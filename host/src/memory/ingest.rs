//! Ingesting Org files and directories: parse, hash bottom-up, write every new node, the new
//! root and the head in ONE transaction (a failure leaves the store as it was).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rusqlite::params;
use serde::Serialize;

use super::node::{Node, NodeKind};
use super::org::{self, ParsedFile, ParsedHeadline, Warning};
use super::store;
use super::{Memory, MemoryError};

/// Deepest headline level read; deeper files are skipped (the parser and the tree walks
/// recurse once per level).
const MAX_LEVEL: usize = 256;

/// The line of the first headline deeper than [`MAX_LEVEL`], if any.
fn too_deep(bytes: &[u8]) -> Option<u32> {
    bytes
        .split(|b| *b == b'\n')
        .position(|line| {
            let stars = line.iter().take_while(|b| **b == b'*').count();
            stars > MAX_LEVEL && line.get(stars).is_some_and(|b| *b == b' ')
        })
        .map(|i| u32::try_from(i + 1).unwrap_or(u32::MAX))
}

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
    /// Files the store held under the ingested directory that are gone from disk: removed from
    /// the store (the snapshot taken before the ingest still has them).
    pub removed_files: Vec<String>,
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
    /// Each node of `nodes` as stored, serialised on the ingest's worker threads.
    json: Vec<String>,
    lines: Vec<(String, u32)>,
    headlines: usize,
    /// IDs to write into the file once the store has committed: (file, new text, how many).
    pending: Option<(PathBuf, String, usize)>,
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
        // A directory's files that are gone leave the store with this ingest.
        let under = std::fs::canonicalize(path).ok().filter(|p| p.is_dir());
        let overrides = self.overrides()?;
        let keywords = self.config.keywords();
        // Files are read, parsed and hashed on every core (rayon keeps their order); only the
        // commit below is one writer.
        let results: Vec<_> = files
            .par_iter()
            .map(|file| {
                let mut warnings = Vec::new();
                let built = self.build_file(file, opts, (&overrides, &keywords), &mut warnings);
                (built, warnings)
            })
            .collect();
        let mut built = Vec::new();
        for (result, warnings) in results {
            report.warnings.extend(warnings);
            if let Some(b) = result? {
                built.push(b);
            }
        }
        report.files = built.len();
        report.headlines = built.iter().map(|b| b.headlines).sum();
        self.warn_lost_derived_ids(&built, &mut report.warnings);
        let nodes: Vec<BuiltNodes<'_>> = built.iter().map(|b| b.nodes.as_slice()).collect();
        let vectors = self.embed_new(&nodes, &mut report);
        let pending: Vec<(PathBuf, String, usize)> =
            built.iter_mut().filter_map(|b| b.pending.take()).collect();
        report.root_after = self.commit(
            built,
            vectors,
            under.as_deref(),
            &mut report.new_nodes,
            &mut report.removed_files,
        )?;
        // The files change only once the store holds what they will say.
        for (file, text, n) in pending {
            match write_atomically(&file, text.as_bytes()) {
                Ok(()) => report.ids_written += n,
                Err(e) => report.warnings.push(Warning {
                    file: file.display().to_string(),
                    line: 0,
                    message: e.to_string(),
                }),
            }
        }
        Ok(report)
    }

    /// Warn, file by file, when derived IDs the store had are gone from a changed file (a title
    /// above them changed, or the headlines were deleted): whatever referred to them now points
    /// at nothing.
    fn warn_lost_derived_ids(&self, built: &[Built], warnings: &mut Vec<Warning>) {
        let Some(before) = self.db.file_versions(&self.root()) else {
            return;
        };
        for b in built {
            let Some(old) = before.get(&b.path).filter(|old| **old != b.file_hash) else {
                continue;
            };
            // Every ID the file has now: a derived ID written into the file (`--write-ids`)
            // is the same ID.
            let now: HashSet<&str> = b.nodes.iter().map(|(_, n)| n.id.as_str()).collect();
            let mut lost = 0;
            let mut stack = vec![old.clone()];
            while let Some(h) = stack.pop() {
                let Ok(n) = self.db.node(&h) else { continue };
                if n.derived_id && !now.contains(n.id.as_str()) {
                    lost += 1;
                }
                stack.extend(n.children.iter().cloned());
            }
            if lost > 0 {
                warnings.push(Warning {
                    file: b.path.clone(),
                    line: 0,
                    message: format!(
                        "{lost} derived ID(s) are no longer in the file (a title above those \
                         headlines changed, or they were deleted): what refers to the old ones \
                         (the journal, notes, tool calls) now points at nothing. `passepartout \
                         memory ingest --write-ids` gives headlines IDs of their own, which no \
                         edit of a title changes"
                    ),
                });
            }
        }
    }

    fn build_file(
        &self,
        file: &Path,
        opts: &IngestOptions,
        (overrides, keywords): (&super::edit::Overrides, &org::TodoKeywords),
        warnings: &mut Vec<Warning>,
    ) -> Result<Option<Built>, MemoryError> {
        let name = file.display().to_string();
        let skip = |warnings: &mut Vec<Warning>, message: String| {
            warnings.push(Warning {
                file: name.clone(),
                line: 0,
                message,
            });
            Ok(None)
        };
        let max = self.config.max_file_mib.saturating_mul(1 << 20);
        match std::fs::metadata(file) {
            // A FIFO or a device named *.org would block the read or never end.
            Ok(m) if !m.is_file() => return skip(warnings, "not a regular file; skipped".into()),
            Ok(m) if m.len() > max => {
                return skip(
                    warnings,
                    format!(
                        "{} MiB is over the {} MiB limit ([memory] max_file_mib); skipped",
                        m.len() >> 20,
                        self.config.max_file_mib
                    ),
                );
            }
            Ok(_) => {}
            Err(e) => return skip(warnings, format!("cannot read: {e}; skipped")),
        }
        let mut bytes = Vec::new();
        let read = std::fs::File::open(file).and_then(|f| {
            std::io::Read::read_to_end(&mut std::io::Read::take(f, max + 1), &mut bytes)
        });
        if let Err(e) = read {
            return skip(warnings, format!("cannot read: {e}; skipped"));
        }
        if bytes.len() as u64 > max {
            return skip(
                warnings,
                "grew past the size limit while being read; skipped".into(),
            );
        }
        if let Some(line) = too_deep(&bytes) {
            warnings.push(Warning {
                file: name,
                line,
                message: format!(
                    "headlines nested more than {MAX_LEVEL} levels deep; file skipped"
                ),
            });
            return Ok(None);
        }
        let lossy = std::str::from_utf8(&bytes).is_err();
        let text = decode(&name, &bytes, warnings);
        let mut parsed = org::parse(&name, &text, keywords, warnings);
        let mut pending = None;
        if opts.write_ids {
            let mut ids = BTreeMap::new();
            missing_ids(&parsed.headlines, &mut ids);
            if !ids.is_empty() && lossy {
                warnings.push(Warning {
                    file: name.clone(),
                    line: 0,
                    message: "not valid UTF-8: IDs are not written into it (that would replace \
                              the bad bytes on disk)"
                        .into(),
                });
            } else if !ids.is_empty() {
                let updated = org::write_ids(&text, &ids);
                let mut again = Vec::new();
                parsed = org::parse(&name, &updated, keywords, &mut again);
                // Written only after the store committed (see `ingest`), to the real file
                // behind any symlink.
                let target = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned());
                pending = Some((target, updated, ids.len()));
            }
        }
        super::edit::apply_overrides(&mut parsed.headlines, overrides);
        let mut built = build(&name, parsed);
        built.pending = pending;
        built.json = built
            .nodes
            .iter()
            .map(|(_, n)| store::to_json(n))
            .collect::<Result<_, _>>()?;
        Ok(Some(built))
    }

    /// Write the built files' nodes, a new root and the head, in one transaction.
    fn commit(
        &self,
        built: Vec<Built>,
        vectors: Vec<(String, String, Vec<u8>)>,
        under: Option<&Path>,
        new_nodes: &mut usize,
        removed: &mut Vec<String>,
    ) -> Result<String, MemoryError> {
        let _writer = self.db.write_lock();
        let mut written = Vec::new();
        let mut conn = self.db.conn();
        let (new_hash, new_root) = store::with_ingest_cache(&mut conn, |conn| {
            // IMMEDIATE: the head is read and moved in one write transaction, so a second
            // process (the CLI beside the daemon) cannot build on the same root meanwhile.
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let before = store::read_head(&tx)?;
            let root = store::load_node(&tx, &before)?;
            let mut files: BTreeMap<String, String> = BTreeMap::new();
            for h in &root.children {
                let id = match self.db.cached(h) {
                    Some(n) => n.id.clone(),
                    None => store::load_node(&tx, h)?.id,
                };
                files.insert(id, h.clone());
            }
            // Only files no longer on disk: one skipped (too big, unreadable) or beyond a walk
            // that stopped early stays as it was.
            // A path stored lossily (a name that is not UTF-8) cannot be looked up again: kept.
            let built_paths: HashSet<&str> = built.iter().map(|b| b.path.as_str()).collect();
            if let Some(dir) = under {
                files.retain(|path, _| {
                    let gone = Path::new(path).starts_with(dir)
                        && !path.contains(char::REPLACEMENT_CHARACTER)
                        && !built_paths.contains(path.as_str())
                        && std::fs::symlink_metadata(path)
                            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
                    if gone {
                        removed.push(path.clone());
                    }
                    !gone
                });
            }
            for b in &built {
                files.insert(b.path.clone(), b.file_hash.clone());
            }
            let mut new_root = store::empty_root();
            new_root.children = files.into_values().collect();
            let new_hash = new_root.hash();
            for b in &built {
                for ((hash, _), json) in b.nodes.iter().zip(&b.json) {
                    if store::insert_json(&tx, hash, json)? {
                        *new_nodes += 1;
                    }
                }
                super::lines::record(&tx, &b.file_hash, &b.lines)?;
            }
            for (key, model, blob) in &vectors {
                tx.execute(
                    "INSERT OR REPLACE INTO memory_vectors (key, model, vector) VALUES (?1, ?2, ?3)",
                    params![key, model, blob],
                )?;
            }
            if new_hash != before {
                // The state before this ingest stays reachable: it can be rolled back to.
                store::record_snapshot(
                    &tx,
                    &before,
                    "before ingest",
                    self.config.keep_snapshots,
                    store::SnapshotKind::Kept,
                )?;
                store::insert(&tx, &new_hash, &new_root)?;
                tx.execute(
                    "UPDATE memory_head SET root = ?1 WHERE one = 1",
                    params![new_hash],
                )?;
            }
            tx.commit()?;
            Ok((new_hash, new_root))
        })?;
        drop(conn);
        for b in &built {
            self.db.cache_lines(&b.file_hash, &b.lines);
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
        done: false,
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
        json: Vec::new(),
        lines,
        headlines,
        pending: None,
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
        done: h.done,
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
