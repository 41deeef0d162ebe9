//! `passepartout memory ingest | query | snapshot | snapshots | rollback | similar | gc`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Subcommand;
use passepartout::memory::{IngestOptions, Memory, NodeKind, Query};

use super::Common;

/// The memory subcommands.
#[derive(Subcommand)]
pub enum MemoryCommand {
    /// Read Org files (a file or a directory, recursively) into the store. Unchanged files
    /// change nothing; a snapshot of the previous root is kept when anything changed.
    Ingest {
        /// A `.org` file or a directory.
        path: PathBuf,
        /// Write an `:ID:` property into the files for headlines that have none.
        #[arg(long)]
        write_ids: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Headlines matching every filter given, in file order.
    Query {
        /// Has this tag.
        #[arg(long)]
        tag: Option<String>,
        /// Has this TODO keyword (TODO, NEXT, DONE...).
        #[arg(long)]
        todo: Option<String>,
        /// `headline` (default) or `file`.
        #[arg(long = "type", value_parser = parse_kind)]
        kind: Option<NodeKind>,
        /// Has property KEY=VALUE.
        #[arg(long, value_name = "KEY=VALUE")]
        property: Option<String>,
        /// Title or body contains this text.
        #[arg(long)]
        text: Option<String>,
        /// Only headlines without an :ID: in their file.
        #[arg(long)]
        missing_id: bool,
        /// Only active projects (tagged project, not done).
        #[arg(long, conflicts_with_all = ["tag", "todo", "kind", "property", "text", "missing_id", "sparse"])]
        active_projects: bool,
        /// Print the sparse tree (matches and their ancestors) as an outline.
        #[arg(long)]
        sparse: bool,
        /// At most this many results.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The outline the model gets as context: active projects and their open tasks.
    Outline {
        /// At most this many bytes.
        #[arg(long, default_value_t = 4000)]
        max_bytes: usize,
    },
    /// Keep the current root as a snapshot, with NOTE as its reason. Snapshots a person
    /// takes, and those before an ingest or a rollback, are pruned only after every automatic
    /// one (taken before a tool runs).
    Snapshot {
        /// Why: shown by `snapshots`.
        #[arg(default_value = "manual")]
        note: String,
    },
    /// The kept snapshots, newest first, and the current root.
    Snapshots {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Move the store back to a snapshot (its number, or a prefix of its root hash). The
    /// current root is kept as a snapshot first, so this can be undone. Files are not
    /// touched: a file deleted from disk is back in memory only until the next ingest of its
    /// directory, unless it is written back.
    Rollback {
        /// The snapshot: `#12`, `12`, or at least 6 hex digits of its root.
        snapshot: String,
    },
    /// The embedded headlines (`:EMBED: t`) most similar to TEXT (needs [memory.embeddings]).
    Similar {
        /// What to compare with.
        text: String,
        /// How many.
        #[arg(long, default_value_t = 5)]
        k: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Delete nodes no kept snapshot and not the current root reach.
    Gc,
}

fn parse_kind(s: &str) -> Result<NodeKind, String> {
    match s {
        "headline" => Ok(NodeKind::Headline),
        "file" => Ok(NodeKind::File),
        other => Err(format!("{other:?}: the types are `headline` and `file`")),
    }
}

/// Open the memory store in the database named by `--db` (or the default).
pub fn open(common: &Common) -> anyhow::Result<Arc<Memory>> {
    let places = common.places();
    Ok(places.memory(&places.settings()?)?)
}

/// Run one memory subcommand.
pub fn run(common: &Common, command: &MemoryCommand) -> anyhow::Result<ExitCode> {
    let memory = open(common)?;
    match command {
        MemoryCommand::Ingest {
            path,
            write_ids,
            json,
        } => {
            let before = memory.root();
            let report = memory.ingest(
                path,
                &IngestOptions {
                    write_ids: *write_ids,
                },
            )?;
            if report.root_after != before {
                memory.collect_garbage()?;
            }
            if *json {
                outln!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                for w in &report.warnings {
                    errln!("warning: {w}");
                }
                for f in &report.removed_files {
                    outln!(
                        "removed {f}: gone from disk. `passepartout memory rollback` shows its \
                         headlines again only until the next ingest of its directory; write the \
                         file back (from a backup or version control) to keep it"
                    );
                }
                outln!(
                    "{} files, {} headlines, {} new nodes{}{}\nroot {}{}",
                    report.files,
                    report.headlines,
                    report.new_nodes,
                    if report.ids_written > 0 {
                        format!(", {} IDs written", report.ids_written)
                    } else {
                        String::new()
                    },
                    if report.embedded > 0 {
                        format!(", {} embedded", report.embedded)
                    } else {
                        String::new()
                    },
                    report.root_after,
                    if report.root_after == report.root_before {
                        " (unchanged)"
                    } else {
                        ""
                    }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Query {
            tag,
            todo,
            kind,
            property,
            text,
            missing_id,
            active_projects,
            sparse,
            limit,
            json,
        } => {
            let property = match property {
                Some(p) => Some(
                    p.split_once('=')
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .context("--property takes KEY=VALUE")?,
                ),
                None => None,
            };
            let q = Query {
                tag: tag.clone(),
                todo: todo.clone(),
                kind: *kind,
                property,
                text: text.clone(),
                missing_id: *missing_id,
                limit: Some(*limit),
            };
            if *sparse {
                out!("{}", memory.sparse_tree(&q)?);
                return Ok(ExitCode::SUCCESS);
            }
            let mut hits = if *active_projects {
                memory.active_projects()?
            } else {
                memory.query(&q)?
            };
            hits.truncate(*limit);
            if *json {
                outln!("{}", serde_json::to_string_pretty(&hits)?);
            } else {
                for h in &hits {
                    let tags = if h.tags.is_empty() {
                        String::new()
                    } else {
                        format!(" :{}:", h.tags.join(":"))
                    };
                    outln!(
                        "{}{} {}{tags}  ({}:{}, ID {})",
                        "*".repeat(h.level.max(1) as usize),
                        h.todo
                            .as_deref()
                            .map(|t| format!(" {t}"))
                            .unwrap_or_default(),
                        h.title,
                        h.file,
                        h.line,
                        h.id
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Outline { max_bytes } => {
            out!("{}", memory.awareness(*max_bytes)?);
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Snapshots { json } => {
            let snaps = memory.snapshots()?;
            if *json {
                let snaps: Vec<serde_json::Value> = snaps
                    .iter()
                    .map(|s| {
                        let mut v = serde_json::json!(s);
                        v["at"] = passepartout::clock::rfc3339(s.at as f64).into();
                        v["at_epoch"] = s.at.into();
                        v
                    })
                    .collect();
                outln!(
                    "{}",
                    serde_json::to_string_pretty(
                        &serde_json::json!({ "root": memory.root(), "snapshots": snaps })
                    )?
                );
            } else {
                outln!("current root {}", memory.root());
                for s in snaps {
                    outln!(
                        "#{:<5} {}  {}  {}",
                        s.seq,
                        passepartout::clock::rfc3339(s.at as f64),
                        s.root.get(..16).unwrap_or(&s.root),
                        s.reason
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Snapshot { note } => {
            let s = memory.snapshot(note)?;
            outln!("snapshot #{} of root {}", s.seq, s.root);
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Rollback { snapshot } => {
            let s = memory.rollback(snapshot)?;
            outln!("rolled back to #{} ({}): root {}", s.seq, s.reason, s.root);
            for f in memory.files_not_on_disk()? {
                outln!(
                    "note: {f} is not on disk: its headlines are in memory again, but the next \
                     ingest of its directory (the daemon's auto-save too) removes them again. \
                     Write the file back (from a backup or version control) to keep it"
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Similar { text, k, json } => {
            let found = memory.similar(text, *k)?;
            if *json {
                outln!("{}", serde_json::to_string_pretty(&found)?);
            } else {
                for s in found {
                    outln!("{:.3}  {}  (ID {})", s.score, s.hit.title, s.hit.id);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        MemoryCommand::Gc => {
            outln!("{} unreachable nodes deleted", memory.collect_garbage()?);
            Ok(ExitCode::SUCCESS)
        }
    }
}
