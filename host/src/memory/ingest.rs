//! Ingesting Org files and directories: parse, hash bottom-up, write every new node, the new
//! root and the head in ONE transaction (a failure leaves the store as it was).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rusqlite::params;
use serde::Serialize;

use super::files::{
    Fingerprint, WriteBack, collect_files, gone_or_linked, read_regular, write_atomically_if,
};
use super::node::{Node, NodeKind};
use super::org::{self, ParsedFile, ParsedHeadline, Warning};
use super::store;
use super::{Memory, MemoryError};

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
    /// Each headline's line, keyed as the lines table keeps them ([`super::lines::key`]).
    lines: Vec<(String, u32)>,
    headlines: usize,
    /// IDs to write into the file once the store has committed.
    pending: Option<PendingIds>,
}

/// IDs to write into a file once the store has committed (`--write-ids`).
struct PendingIds {
    /// The file, as it was read (not through a link).
    file: PathBuf,
    /// Its text with the IDs in.
    text: String,
    /// How many IDs that is.
    count: usize,
    /// What the file was when it was read: it is written only if it still is.
    read: Fingerprint,
}

impl Memory {
    /// Ingest a file or a directory (recursively, `*.org` files, symlinked directories not
    /// followed). Unchanged files change nothing; the root moves only when content did, and
    /// then the previous root is kept as a snapshot (in the same transaction).
    ///
    /// # Errors
    /// `path` does not exist, or the database failed (then nothing was written).
    pub fn ingest(&self, path: &Path, opts: &IngestOptions) -> Result<IngestReport, MemoryError> {
        self.ingest_then(path, opts, |_| {})
    }

    /// As [`Memory::ingest`], calling `before_write_back(file)` just before the IDs of
    /// `--write-ids` are written into each file: where a test edits a file, as a person may
    /// while the ingest runs.
    fn ingest_then(
        &self,
        path: &Path,
        opts: &IngestOptions,
        mut before_write_back: impl FnMut(&Path),
    ) -> Result<IngestReport, MemoryError> {
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
        self.warn_lost_ids(&built, &overrides, &mut report.warnings);
        let nodes: Vec<BuiltNodes<'_>> = built.iter().map(|b| b.nodes.as_slice()).collect();
        let vectors = self.embed_new(&nodes, &mut report);
        let pending: Vec<PendingIds> = built.iter_mut().filter_map(|b| b.pending.take()).collect();
        report.root_after = self.commit(
            built,
            vectors,
            under.as_deref(),
            &mut report.new_nodes,
            &mut report.removed_files,
        )?;
        // The files change only once the store holds what they will say, and only if nobody
        // changed them since they were read.
        let mut not_written = Vec::new();
        for p in pending {
            before_write_back(&p.file);
            let message = match write_atomically_if(&p.file, p.text.as_bytes(), Some(&p.read)) {
                Ok(WriteBack::Written) => {
                    report.ids_written += p.count;
                    continue;
                }
                Ok(WriteBack::Changed(how)) => format!(
                    "changed since it was read ({how}): its {} ID(s) are not written, so that \
                     the edit stays; the next `memory ingest --write-ids` writes them",
                    p.count
                ),
                Err(e) => e.to_string(),
            };
            report.warnings.push(Warning {
                file: p.file.display().to_string(),
                line: 0,
                message,
            });
            not_written.push(p.file);
        }
        // The store took those files with the IDs (and the line numbers) they did not get:
        // read them again as they are now.
        for file in not_written {
            match self.ingest(&file, &IngestOptions::default()) {
                Ok(again) => {
                    report.warnings.extend(again.warnings);
                    report.new_nodes += again.new_nodes;
                    report.root_after = again.root_after;
                }
                Err(e) => report.warnings.push(Warning {
                    file: file.display().to_string(),
                    line: 0,
                    message: format!(
                        "could not be read again ({e}): until the next ingest, the store holds \
                         it with the IDs that were not written"
                    ),
                }),
            }
        }
        // Only when something changed: an unchanged store (an auto-save with nothing new)
        // warned already, and looking builds the index (a walk of the whole store).
        if report.root_after != report.root_before {
            self.warn_shared_ids(&mut report.warnings);
        }
        Ok(report)
    }

    /// Warn, file by file, when derived IDs the store had are gone from a changed file (a title
    /// above them changed, or the headlines were deleted): whatever referred to them now points
    /// at nothing. Likewise, by name, for IDs set in the store (`memory-assign-id`,
    /// [`Memory::set_property`]): such a setting is kept under the headline's derived ID, so a
    /// headline whose derived ID changed loses it.
    fn warn_lost_ids(
        &self,
        built: &[Built],
        overrides: &super::edit::Overrides,
        warnings: &mut Vec<Warning>,
    ) {
        let Some(before) = self.db.file_versions(&self.root()) else {
            return;
        };
        // The IDs set in the store: the value of every `ID` setting.
        let assigned: HashSet<&str> = overrides
            .values()
            .flatten()
            .filter(|(key, _)| key == "ID")
            .map(|(_, value)| value.as_str())
            .collect();
        for b in built {
            let Some(old) = before.get(&b.path).filter(|old| **old != b.file_hash) else {
                continue;
            };
            // Every ID the file has now: a derived ID written into the file (`--write-ids`)
            // is the same ID.
            let now: HashSet<&str> = b.nodes.iter().map(|(_, n)| n.id.as_str()).collect();
            let mut lost = 0;
            let mut lost_assigned = Vec::new();
            let mut stack = vec![old.clone()];
            while let Some(h) = stack.pop() {
                let Ok(n) = self.db.node(&h) else { continue };
                if n.kind == NodeKind::Headline && !now.contains(n.id.as_str()) {
                    if n.derived_id {
                        lost += 1;
                    } else if assigned.contains(n.id.as_str()) {
                        lost_assigned.push(n.id.clone());
                    }
                }
                stack.extend(n.children.iter().cloned());
            }
            if !lost_assigned.is_empty() {
                lost_assigned.sort();
                warnings.push(Warning {
                    file: b.path.clone(),
                    line: 0,
                    message: format!(
                        "{} ID(s) set in the store (by `memory-assign-id` or a plugin's \
                         set-property) are no longer on any headline: {}. Such an ID is kept \
                         under the headline's derived ID and holds only while the titles above \
                         the headline stay as they were (a title above it changed, or it was \
                         deleted). To have one back, write it into the file as that headline's \
                         `:ID:`; `memory ingest --write-ids` puts the IDs memory-assign-id gives \
                         into the files, where no edit of a title loses them",
                        lost_assigned.len(),
                        named(&lost_assigned, 10)
                    ),
                });
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

    /// Warn of every ID more than one headline of the store has, naming the places: `get`,
    /// the focus and property writes refuse such an ID ([`MemoryError::Ambiguous`]). At most
    /// [`MAX_SHARED_WARNINGS`] of them, then how many more.
    fn warn_shared_ids(&self, warnings: &mut Vec<Warning>) {
        let shared = self.with_index(|index| {
            let all = index.shared();
            let total = all.len();
            let named: Vec<(String, Vec<(String, u32)>)> = all
                .into_iter()
                .take(MAX_SHARED_WARNINGS)
                .map(|(id, entries)| (id.to_owned(), self.places(id, &entries)))
                .collect();
            (total, named)
        });
        let (total, named) = match shared {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("memory: shared IDs not looked for: {e}");
                return;
            }
        };
        for (id, places) in &named {
            let Some(((file, line), others)) = places.split_first() else {
                continue;
            };
            let others: Vec<String> = others.iter().map(|(f, l)| place(f, *l)).collect();
            warnings.push(Warning {
                file: file.clone(),
                line: *line,
                message: format!(
                    "ID {id:?} is also the ID of the headline(s) at {}: memory cannot tell them \
                     apart, so reading, focusing on or writing that ID is refused until one of \
                     them has another `:ID:`",
                    others.join(" and ")
                ),
            });
        }
        if total > named.len() {
            warnings.push(Warning {
                file: String::from("(memory)"),
                line: 0,
                message: format!(
                    "and {} more IDs shared by several headlines",
                    total - named.len()
                ),
            });
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
        let (bytes, modified) = match read_regular(file, self.config.max_file_mib) {
            Ok(read) => read,
            Err(message) => return skip(warnings, message),
        };
        // Only a file IDs may be written into needs its fingerprint.
        let fingerprint = opts.write_ids.then(|| Fingerprint::of(&bytes, modified));
        let Some(Decoded {
            text,
            lossy,
            mut parsed,
        }) = read_org(&name, &bytes, keywords, warnings)
        else {
            return Ok(None);
        };
        drop(bytes);
        let mut pending = None;
        if let Some(read) = fingerprint {
            let mut ids = BTreeMap::new();
            let mut left = Vec::new();
            missing_ids(&parsed.headlines, overrides, &mut ids, &mut left);
            for (line, why) in &left {
                warnings.push(Warning {
                    file: name.clone(),
                    line: *line,
                    message: why.message(),
                });
            }
            if !ids.is_empty() && lossy {
                warnings.push(Warning {
                    file: name.clone(),
                    line: 0,
                    message: "not valid UTF-8: IDs are not written into it (that would replace \
                              the bad bytes on disk)"
                        .into(),
                });
            } else if !ids.is_empty() {
                // Into the text as read, line breaks and all (the line numbers agree: see
                // `org::write_ids`).
                let updated = org::write_ids(&text, &ids);
                let mut again = Vec::new();
                let reparsed = org::parse(&name, &updated, keywords, &mut again);
                // Every ID written must read back as the headline's own: else the next run
                // would write it again.
                let mut again_missing = BTreeMap::new();
                missing_ids(
                    &reparsed.headlines,
                    overrides,
                    &mut again_missing,
                    &mut Vec::new(),
                );
                if !again_missing.is_empty() {
                    warnings.push(Warning {
                        file: name.clone(),
                        line: 0,
                        message: "the :ID: lines written would not all be read back as IDs; \
                                  none are written into this file"
                            .into(),
                    });
                } else {
                    parsed = reparsed;
                    // Written only after the store committed (see `ingest`), to this very path:
                    // it was read as a regular file, not through a link, and
                    // `write_atomically_if` writes through none either.
                    pending = Some(PendingIds {
                        file: file.to_owned(),
                        text: updated,
                        count: ids.len(),
                        read,
                    });
                }
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
                        && gone_or_linked(Path::new(path));
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

/// A file's text and what it parsed to.
struct Decoded {
    /// The text, line breaks as written (what `--write-ids` edits).
    text: String,
    /// The bytes were not valid UTF-8 (`text` has U+FFFD in their place).
    lossy: bool,
    /// The headlines.
    parsed: ParsedFile,
}

/// Decode and parse `bytes` (the contents of `name`); `None`, with a warning, when its shape
/// would cost the parser more than its bounds ([`super::shape`]: headlines or lists nested too
/// deep, multi-line elements rescanned too long).
fn read_org(
    name: &str,
    bytes: &[u8],
    keywords: &org::TodoKeywords,
    warnings: &mut Vec<Warning>,
) -> Option<Decoded> {
    let lossy = std::str::from_utf8(bytes).is_err();
    let text = decode(name, bytes, warnings);
    let parsed = {
        // Lines as the parser reads them: a lone `\r` ends a line for it too.
        let lines = org::normalize_line_breaks(&text);
        if let Err(e) = super::shape::check(&lines) {
            warnings.push(Warning {
                file: name.into(),
                line: e.line,
                message: e.why,
            });
            return None;
        }
        org::parse(name, &lines, keywords, warnings)
    };
    Some(Decoded {
        text,
        lossy,
        parsed,
    })
}

/// Turn a parsed file into nodes, children before parents.
fn build(path: &str, parsed: ParsedFile) -> Built {
    let mut nodes = Vec::new();
    let mut lines = FileLines::default();
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
        lines: lines.keyed,
        headlines,
        pending: None,
    }
}

/// The line of each headline of one file, keyed as the lines table keeps them: the first
/// headline with an ID by the ID, the next ones with it by [`super::lines::key`].
#[derive(Default)]
struct FileLines {
    keyed: Vec<(String, u32)>,
    /// How many headlines had each ID so far.
    seen: HashMap<String, u32>,
}

impl FileLines {
    fn push(&mut self, id: &str, line: u32) {
        let n = self.seen.entry(id.to_owned()).or_insert(0);
        *n += 1;
        self.keyed.push((super::lines::key(id, *n), line));
    }
}

fn build_headline(
    path: &str,
    h: ParsedHeadline,
    nodes: &mut Vec<(String, Node)>,
    lines: &mut FileLines,
    count: &mut usize,
) -> String {
    *count += 1;
    lines.push(&h.id, h.line);
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

/// The headlines whose file gives them no `:ID:`: by line, those an ID can be written for
/// (`out`), and the lines of those whose property drawer Org reads as text (`text_drawers`: an
/// `:ID:` written into it would not count either).
fn missing_ids(
    headlines: &[ParsedHeadline],
    overrides: &super::edit::Overrides,
    out: &mut BTreeMap<u32, String>,
    left: &mut Vec<(u32, Leave)>,
) {
    for h in headlines {
        if h.derived_id {
            // `memory-assign-id` assigns the derived ID itself: that one is written.
            let assigned = overrides
                .get(&h.id)
                .and_then(|settings| settings.iter().find(|(k, _)| k.eq_ignore_ascii_case("ID")))
                .filter(|(_, id)| *id != h.id);
            if h.drawer_is_text {
                left.push((h.line, Leave::DrawerIsText));
            } else if let Some((_, id)) = assigned {
                left.push((h.line, Leave::Assigned(id.clone())));
            } else {
                out.insert(h.line, h.id.clone());
            }
        }
        missing_ids(&h.children, overrides, out, left);
    }
}

/// Why `--write-ids` leaves a headline without an `:ID:`.
enum Leave {
    /// Org reads its property drawer as text: an `:ID:` written there would not count.
    DrawerIsText,
    /// The store holds another ID for it (set as a property), kept under its derived ID:
    /// writing the derived one would hide it.
    Assigned(String),
}

impl Leave {
    fn message(&self) -> String {
        match self {
            Leave::DrawerIsText => "no :ID: written for this headline: Org reads its property \
                                    drawer as text (a line in it is not a property, or it never \
                                    closes), so an :ID: in it would not count. Fix the drawer, \
                                    then run `--write-ids` again"
                .into(),
            Leave::Assigned(id) => format!(
                "no :ID: written for this headline: the store gave it the ID {id}, which \
                 writing its derived ID would hide; it keeps {id}"
            ),
        }
    }
}

/// Most IDs shared by several headlines one ingest warns of by name.
const MAX_SHARED_WARNINGS: usize = 100;

/// `file:line`, or `file` when the line is not known (0).
pub(crate) fn place(file: &str, line: u32) -> String {
    if line == 0 {
        file.to_owned()
    } else {
        format!("{file}:{line}")
    }
}

/// The first `max` of `names`, quoted and joined, then how many more.
fn named(names: &[String], max: usize) -> String {
    let mut out: Vec<String> = names.iter().take(max).map(|n| format!("{n:?}")).collect();
    if names.len() > max {
        out.push(format!("and {} more", names.len() - max));
    }
    out.join(", ")
}

/// UTF-8, or lossy UTF-8 with a warning at the first bad byte's line.
fn decode(file: &str, bytes: &[u8], warnings: &mut Vec<Warning>) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_owned(),
        Err(e) => {
            let at = e.valid_up_to();
            // Counted as the parser counts lines: a lone `\r` ends one too.
            let breaks = bytes[..at].iter().enumerate().filter(|(i, b)| {
                **b == b'\n' || (**b == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
            });
            let line = breaks.count() + 1;
            warnings.push(Warning {
                file: file.into(),
                line: u32::try_from(line).unwrap_or(u32::MAX),
                message: "invalid UTF-8 (replaced with U+FFFD)".into(),
            });
            String::from_utf8_lossy(bytes).into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryConfig;
    use crate::memory::files::write_atomically;

    fn store() -> Memory {
        Memory::in_memory(MemoryConfig::default()).expect("store")
    }

    /// Every headline's ID at the head.
    fn headline_ids(m: &Memory) -> Vec<String> {
        headline_nodes(m)
            .into_iter()
            .map(|n| n.id.clone())
            .collect()
    }

    /// Every headline node at the head.
    fn headline_nodes(m: &Memory) -> Vec<std::sync::Arc<Node>> {
        let mut nodes = Vec::new();
        m.walk(|node, _, _| {
            if node.kind == NodeKind::Headline {
                nodes.push(node.clone());
            }
            true
        })
        .expect("walk");
        nodes
    }

    fn headline_titles(m: &Memory) -> Vec<String> {
        headline_nodes(m)
            .into_iter()
            .map(|n| n.title.clone())
            .collect()
    }

    /// An ID set in the store (`Memory::set_property`) is kept under the headline's derived
    /// ID. `--write-ids` wrote that derived ID into the file, which then hid the one set:
    /// whatever referred to it pointed at nothing. Such a headline is left alone, with a
    /// warning, and keeps its ID; one given its own derived ID (what `memory-assign-id` does)
    /// gets that written.
    #[test]
    fn write_ids_keeps_an_id_assigned_in_the_store() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("n.org");
        std::fs::write(&file, "* A\n* B\n").expect("write");
        let m = store();
        m.ingest(dir.path(), &IngestOptions::default())
            .expect("ingest");
        let a = headline_nodes(&m)
            .into_iter()
            .find(|n| n.title == "A")
            .expect("A");
        m.set_property(&a.id, "ID", "chosen-id").expect("assign");
        let b = headline_nodes(&m)
            .into_iter()
            .find(|n| n.title == "B")
            .expect("B");
        m.set_property(&b.id, "ID", &b.id)
            .expect("memory-assign-id");
        let r = m
            .ingest(dir.path(), &IngestOptions { write_ids: true })
            .expect("ingest");
        assert_eq!(r.ids_written, 1, "B's only: {:?}", r.warnings);
        let text = std::fs::read_to_string(&file).expect("read");
        assert!(text.starts_with("* A\n* B\n:PROPERTIES:\n:ID:"), "{text}");
        let hit = m
            .get("chosen-id")
            .expect("get")
            .expect("the assigned ID still finds A");
        assert_eq!(hit.title, "A");
        assert!(
            r.warnings
                .iter()
                .any(|w| w.line == 1 && w.message.contains("chosen-id")),
            "{:?}",
            r.warnings
        );
        // Nothing left to do: a second run writes nothing and changes nothing.
        let r = m
            .ingest(dir.path(), &IngestOptions { write_ids: true })
            .expect("ingest");
        assert_eq!((r.ids_written, r.root_after == r.root_before), (0, true));
    }

    /// A megabyte title over 20,000 children: a copy of the title path per headline, kept
    /// until the file was parsed, was 20 GB.
    #[test]
    fn a_megabyte_title_over_20000_children_is_read_in_bounded_memory() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut text = format!("* {}\n", "x".repeat(1 << 20));
        for i in 0..20_000 {
            text.push_str(&format!("** c{i}\n"));
        }
        std::fs::write(dir.path().join("wide.org"), &text).expect("write");
        let m = store();
        let r = m
            .ingest(dir.path(), &IngestOptions::default())
            .expect("ingest");
        assert_eq!((r.files, r.headlines), (1, 20_001), "{:?}", r.warnings);
        let ids: HashSet<String> = headline_ids(&m).into_iter().collect();
        assert_eq!(ids.len(), 20_001);
    }

    /// `* a\r** a\r*** a\r…`: the parser reads a lone `\r` as a line break, so the depth check
    /// must too; otherwise the parser recurses once per level and overflows the stack.
    #[test]
    fn levels_joined_by_lone_crs_are_refused_not_overflowing_the_stack() {
        let mut text = String::new();
        for level in 1..=10_000 {
            text.push_str(&"*".repeat(level));
            text.push_str(" a\r");
        }
        let worker = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let mut warnings = Vec::new();
                let keywords = org::TodoKeywords::default();
                let read = read_org("deep.org", text.as_bytes(), &keywords, &mut warnings);
                (read.is_some(), warnings)
            })
            .expect("spawn");
        let (read, warnings) = worker.join().expect("the parse returns");
        assert!(!read, "a file nested that deep is skipped");
        assert!(
            warnings.iter().any(|w| usize::try_from(w.line)
                == Ok(super::super::shape::MAX_LEVEL + 1)
                && w.message.contains("nested more than")),
            "{warnings:?}"
        );
    }

    /// `k.org -> ../outside/id_rsa`: neither read into the store (and so to the model) nor
    /// written through with `--write-ids`; one read before it became a link leaves the store.
    #[cfg(unix)]
    #[test]
    fn a_symlinked_org_file_is_not_read_nor_written_through() {
        let notes = tempfile::tempdir().expect("temp dir");
        let outside = tempfile::tempdir().expect("temp dir");
        let secret = outside.path().join("id_rsa");
        let key = "* secret headline\nPRIVATE KEY\n";
        std::fs::write(&secret, key).expect("write");
        let link = notes.path().join("k.org");
        std::fs::write(&link, "* Old k\n").expect("write");
        std::fs::write(notes.path().join("real.org"), "* Real\n").expect("write");
        let m = store();
        let first = m
            .ingest(notes.path(), &IngestOptions::default())
            .expect("ingest");
        assert_eq!(first.files, 2);

        std::fs::remove_file(&link).expect("remove");
        std::os::unix::fs::symlink(&secret, &link).expect("symlink");
        let r = m
            .ingest(notes.path(), &IngestOptions { write_ids: true })
            .expect("ingest");
        assert_eq!((r.files, r.ids_written), (1, 1), "{:?}", r.warnings);
        assert!(
            r.warnings
                .iter()
                .any(|w| w.file.ends_with("k.org")
                    && w.message.contains("symlinked file not followed")),
            "{:?}",
            r.warnings
        );
        assert!(
            r.removed_files.iter().any(|f| f.ends_with("k.org")),
            "{:?}",
            r.removed_files
        );
        assert_eq!(std::fs::read_to_string(&secret).expect("read"), key);
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("stat")
                .file_type()
                .is_symlink()
        );
        let mut leaked = false;
        m.walk(|node, _, _| {
            leaked |= node.title.contains("secret") || node.body.contains("PRIVATE");
            true
        })
        .expect("walk");
        assert!(!leaked, "the link's target is in the store");

        // Nor when a file is named directly, or turns into a link between read and write.
        let read = read_regular(&link, 64).expect_err("a link is not read");
        assert!(read.contains("symbolic link"), "{read}");
        let write = write_atomically(&link, b"* overwritten\n").expect_err("nor written");
        assert!(write.to_string().contains("symbolic link"), "{write}");
        assert_eq!(std::fs::read_to_string(&secret).expect("read"), key);
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("stat")
                .file_type()
                .is_symlink(),
            "the link itself is left as it was"
        );
    }

    /// The write-back replaces the file whole and keeps its permissions.
    #[cfg(unix)]
    /// An edit saved while `--write-ids` runs (between the read and the write-back, where the
    /// embeddings may take minutes) survives: the file is left as edited, with a warning, and
    /// the IDs go in on the next run. A same-size edit with the old modification time too (the
    /// bytes are compared).
    #[test]
    fn an_edit_made_while_ids_are_written_survives() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("n.org");
        std::fs::write(&file, "* A\n* B\n").expect("write");
        let edited = "* X\n* Y\n";
        let m = store();
        let r = m
            .ingest_then(dir.path(), &IngestOptions { write_ids: true }, |f| {
                let then = std::fs::metadata(f)
                    .and_then(|m| m.modified())
                    .expect("mtime");
                std::fs::write(f, edited).expect("the person's edit");
                std::fs::File::options()
                    .write(true)
                    .open(f)
                    .and_then(|h| h.set_modified(then))
                    .expect("the old mtime back");
            })
            .expect("ingest");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), edited);
        assert_eq!(r.ids_written, 0);
        // The store holds the file as it is, not the IDs and line numbers it would have had.
        assert_eq!(headline_titles(&m), ["X", "Y"]);
        assert!(
            headline_nodes(&m).iter().all(|n| n.derived_id),
            "no ID the file does not have"
        );
        assert!(
            r.warnings.iter().any(|w| w.file.ends_with("n.org")
                && w.message.contains("changed since it was read")
                && w.message.contains("the edit stays")),
            "{:?}",
            r.warnings
        );
        let r = m
            .ingest(dir.path(), &IngestOptions { write_ids: true })
            .expect("ingest");
        assert_eq!(r.ids_written, 2, "{:?}", r.warnings);
        let text = std::fs::read_to_string(&file).expect("read");
        assert!(text.starts_with("* X\n:PROPERTIES:\n:ID:"), "{text}");
        assert!(text.contains("* Y\n"), "{text}");
        // Unchanged since it was read: written, as before.
        let r = m
            .ingest_then(dir.path(), &IngestOptions { write_ids: true }, |_| {})
            .expect("ingest");
        assert_eq!(r.ids_written, 0, "nothing left to write");
    }

    /// A drawer Org reads as text (a note in it, or no `:END:`): an `:ID:` written into it would
    /// not count, so every run added another. Such headlines are left alone, with a warning;
    /// the others get theirs once, and the second run changes nothing.
    #[test]
    fn write_ids_leaves_headlines_whose_drawer_is_text_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("d.org");
        let text = "* C\n:PROPERTIES:\nnote\n:END:\n* D\n:PROPERTIES:\n:X: 1\n* E\n";
        std::fs::write(&file, text).expect("write");
        let m = store();
        let first = m
            .ingest(dir.path(), &IngestOptions { write_ids: true })
            .expect("ingest");
        assert_eq!(first.ids_written, 1, "E only: {:?}", first.warnings);
        for line in [1, 5] {
            assert!(
                first
                    .warnings
                    .iter()
                    .any(|w| w.line == line && w.message.contains("no :ID: written")),
                "line {line}: {:?}",
                first.warnings
            );
        }
        let after_first = std::fs::read_to_string(&file).expect("read");
        assert_eq!(after_first.matches(":ID:").count(), 1, "{after_first}");
        let second = m
            .ingest(dir.path(), &IngestOptions { write_ids: true })
            .expect("ingest");
        assert_eq!(second.ids_written, 0);
        assert_eq!(std::fs::read_to_string(&file).expect("read"), after_first);
    }

    /// `a\xff.org` and `a\xfe.org` both read as `a\u{fffd}.org`: one vanished behind the
    /// other. Names that are not UTF-8 are skipped, each named with its bytes escaped.
    #[cfg(unix)]
    #[test]
    fn file_names_that_are_not_utf8_are_skipped_and_named() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().expect("temp dir");
        for name in [b"a\xff.org".as_slice(), b"a\xfe.org".as_slice()] {
            let path = dir.path().join(std::ffi::OsStr::from_bytes(name));
            if std::fs::write(&path, "* Hidden\n").is_err() {
                // A file system that refuses such names has nothing to skip.
                return;
            }
        }
        std::fs::write(dir.path().join("plain.org"), "* Plain\n").expect("write");
        let m = store();
        let r = m
            .ingest(dir.path(), &IngestOptions::default())
            .expect("ingest");
        assert_eq!((r.files, r.headlines), (1, 1), "{:?}", r.warnings);
        let named: Vec<String> = r
            .warnings
            .iter()
            .filter(|w| w.message.contains("not UTF-8"))
            .map(|w| w.file.to_lowercase())
            .collect();
        assert_eq!(named.len(), 2, "{:?}", r.warnings);
        assert!(named.iter().any(|f| f.contains("a\\xff.org")), "{named:?}");
        assert!(named.iter().any(|f| f.contains("a\\xfe.org")), "{named:?}");
    }
}
