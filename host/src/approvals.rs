//! Human approval: an action a gate flagged waits under a random token until a person approves
//! or denies it, or it expires. Kept in SQLite beside the journal, so it survives a restart.
//!
//! An approval goes `pending` → `running` (approved, its action under way, in the process
//! named by `runner`: a lock it holds while it lives, see `runner.rs`) → `done`; or `pending` →
//! `denied` / `expired`. Each step and its journal record are written in one transaction. A
//! `running` approval whose process is gone (the daemon was killed mid-action) is
//! `interrupted`: listed with the pending ones, never re-run silently, approved again or denied
//! by a person. It waits as long as it first waited, from when it is found interrupted, then
//! expires as a pending one does: nobody approves months later an action whose moment has
//! passed.
//!
//! An approval is bound to the digest of its action (sha256 of its JSON): a decision that
//! names a digest is refused when the stored action does not match it, and so is a stored
//! action edited since it was suspended. It also keeps the identity of the tool the action
//! named (plugin, version, the tool's own name): the pipeline runs an approved action only
//! while its name still leads to that tool, and asks again otherwise.

use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::journal::Journal;
use crate::runtime::effects::ToolIdentity;
use crate::signal::{Action, Conversation, Signal};

mod runner;

/// How long an approval waits by default.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(24 * 3600);
/// Most approvals waiting at once. Past it, an action a gate sends to a person is refused
/// instead of asked: whoever can make actions (a client, the model) cannot bury a real
/// question under decoys, fill the disk with them, or slow every `status` that counts them.
pub const MAX_PENDING: usize = 256;
/// Most of those [`MAX_PENDING`] places that approvals asked on client-key connections
/// ([`crate::signal::Meta::client_key`]) may hold: the rest are kept for the operator (the
/// approver key, the local CLI, the daemon's own sensors), whose questions a holder of the
/// client key cannot crowd out.
pub const CLIENT_PLACES: usize = MAX_PENDING * 3 / 4;
/// Most bytes the approvals waiting at once may take as listed (each action, its signal
/// without the conversation, the reasons, and [`ENTRY_BYTES`] each), so that the list a person
/// is shown always fits one reply frame (16 MiB) and reading it stays cheap: past it, an action
/// a gate sends to a person is refused, saying so. A daemon with a smaller `[daemon] max_frame`
/// takes half its frame instead ([`Approvals::within`]).
pub const MAX_PENDING_BYTES: usize = 8 << 20;
/// What each approval is counted for in [`MAX_PENDING_BYTES`] beyond what it keeps: its token,
/// digest, state and expiry, and the JSON around them as listed.
pub const ENTRY_BYTES: usize = 512;
/// Most bytes the conversations of the model's approvals waiting at once may take: kept apart
/// from the listing (a person is shown the action, not the tool outputs before it; the journal
/// has them) and given back to the model once the action is decided.
pub const MAX_CONVERSATION_BYTES: usize = 256 << 20;
/// Most of [`MAX_PENDING_BYTES`] that approvals asked on client-key connections may take; the
/// rest is kept for the operator, as [`CLIENT_PLACES`] are (three quarters of whatever the
/// listing may take, [`Approvals::within`]; of [`MAX_CONVERSATION_BYTES`] likewise).
pub const CLIENT_BYTES: usize = client_share(MAX_PENDING_BYTES);

/// The client key's share of `most`.
const fn client_share(most: usize) -> usize {
    most / 4 * 3
}

/// How long an approval that ended (ran, was denied, or expired) is remembered, as its token
/// and state only, so that a late decision is told it expired rather than that no such
/// approval was ever asked. Its action and signal are dropped when it ends (the journal keeps
/// them).
pub const ENDED_KEPT: Duration = Duration::from_secs(24 * 3600);

/// A suspended action.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Pending {
    /// The token a person answers with.
    pub token: String,
    /// The action that waits.
    pub action: Action,
    /// sha256 of the action's JSON, lowercase hex: what a decision is bound to.
    pub digest: String,
    /// The signal it answered. As listed, without its conversation with the model, which is
    /// kept apart ([`MAX_CONVERSATION_BYTES`]) and given back when the action is approved.
    pub signal: Signal,
    /// Why the gates asked (one line per gate).
    pub reasons: Vec<String>,
    /// Seconds since the epoch when it expires.
    pub expires_at: f64,
    /// `pending`; `interrupted`: approved, but the process running it ended before it
    /// finished (whether the action took effect is unknown; see the journal); or `running`:
    /// approved and running in a process no one can name (no lock file could be made and
    /// there is no `/proc`), so it may still run: listed so that a person can deny it to
    /// clear it, never approved again.
    pub state: String,
    /// The tool the action named when it was suspended (none for an action that names no
    /// loaded tool, and for approvals from before identities were kept).
    #[serde(default)]
    pub tool: Option<ToolIdentity>,
}

/// Why an approval could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    /// No pending approval has this token (never existed, already decided).
    #[error("no pending approval has the token {0:?} (see `passepartout approvals`)")]
    Unknown(String),
    /// It waited too long.
    #[error("the approval {0:?} expired; ask again")]
    Expired(String),
    /// The action is not the one the person was shown.
    #[error(
        "the action of approval {token:?} is not the one shown (its digest is {stored}, the decision names {shown}): look at it again with `passepartout approvals`"
    )]
    Changed {
        /// The token.
        token: String,
        /// The digest of the action as stored now.
        stored: String,
        /// The digest the decision was made on.
        shown: String,
    },
    /// Its action was approved and may still be running, in a process no one can name.
    #[error(
        "the action approved under {0:?} may still be running (the process running it cannot be named): it is never run again; deny it to clear it"
    )]
    MayBeRunning(String),
    /// The database failed.
    #[error("the approvals database failed: {0}")]
    Db(#[from] rusqlite::Error),
    /// A stored entry could not be read back.
    #[error("the approval {token:?} is stored damaged: {message}")]
    Damaged {
        /// The token.
        token: String,
        /// What could not be parsed.
        message: String,
    },
    /// What would be stored for a person could not be read back (nested past what the
    /// reader takes): kept, it could be neither listed, approved nor denied.
    #[error(
        "this action cannot be kept for a person to decide, since it could not be read back: {message}; nothing was suspended"
    )]
    Unkeepable {
        /// Why it could not be read back.
        message: String,
    },
    /// No randomness for a token.
    #[error("cannot make an approval token: {0}")]
    NoRandomness(String),
    /// As many approvals as may wait already wait ([`MAX_PENDING`]).
    #[error(
        "{waiting} actions already wait for a person, the most that may: this one is refused; decide some (`passepartout approvals`) before more are asked"
    )]
    TooMany {
        /// How many wait.
        waiting: usize,
    },
    /// As many approvals asked on client-key connections as may wait already wait
    /// ([`CLIENT_PLACES`]).
    #[error(
        "{waiting} actions asked with the client key already wait for a person, the most that may ({CLIENT_PLACES} of {MAX_PENDING}; the rest are kept for the operator): this one is refused; the operator decides some (`passepartout approvals`) before more are asked"
    )]
    ClientShareFull {
        /// How many asked with the client key wait.
        waiting: usize,
    },
    /// Kept with the ones that wait, it would take more than may wait
    /// ([`MAX_PENDING_BYTES`] as listed, [`MAX_CONVERSATION_BYTES`] of conversations; three
    /// quarters of either for those asked with the client key).
    #[error(
        "this action would take {bytes} bytes {} to keep for a person, and {waiting} bytes of {} already wait{}: past the {most} bytes that may, it is refused; decide some (`passepartout approvals`), or ask for a smaller action",
        if *conversation { "of conversation with the model" } else { "as listed" },
        if *conversation { "the conversations of actions" } else { "actions" },
        if *client_key { " asked with the client key (the rest is kept for the operator)" } else { "" }
    )]
    TooLarge {
        /// Whether it is the conversations' room ([`MAX_CONVERSATION_BYTES`]) that is full,
        /// not the listing's.
        conversation: bool,
        /// What it would take, in bytes.
        bytes: usize,
        /// What the ones waiting take (those asked with the client key, for such an ask).
        waiting: usize,
        /// The most that may.
        most: usize,
        /// Whether it is the client key's share that has no room.
        client_key: bool,
    },
}

/// Seconds since the epoch, now.
pub(crate) fn epoch() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// The digest an approval is bound to: sha256 of the action's JSON as stored, lowercase hex.
fn digest_of(stored: &str) -> String {
    hex::encode(Sha256::digest(stored.as_bytes()))
}

/// A process as `pid:start`, its start time (clock ticks since boot, from `/proc`) telling a
/// process from a later one that got the same pid.
fn process_identity(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces and parentheses): state is the
    // 3rd field, start time the 22nd.
    let rest = stat.rsplit_once(')')?.1;
    let start = rest.split_whitespace().nth(19)?;
    Some(format!("{pid}:{start}"))
}

/// Whether the process `runner` (from [`process_identity`]) is still alive.
fn alive(runner: &str) -> bool {
    let pid = runner.split(':').next().and_then(|p| p.parse().ok());
    pid.and_then(process_identity).as_deref() == Some(runner)
}

type Row = (
    String,
    String,
    String,
    String,
    f64,
    String,
    String,
    Option<String>,
);

const COLUMNS: &str = "token, action, signal, reasons, expires_at, digest, status, tool";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get::<_, Option<String>>(5)?.unwrap_or_default(),
        r.get(6)?,
        r.get(7)?,
    ))
}

fn parse<T: serde::de::DeserializeOwned>(token: &str, s: &str) -> Result<T, ApprovalError> {
    serde_json::from_str(s).map_err(|e| ApprovalError::Damaged {
        token: token.to_owned(),
        message: e.to_string(),
    })
}

fn pending_of(
    (token, action, signal, reasons, expires_at, digest, state, tool): Row,
) -> Result<Pending, ApprovalError> {
    let digest = if digest.is_empty() {
        digest_of(&action)
    } else {
        digest
    };
    Ok(Pending {
        action: parse(&token, &action)?,
        signal: parse(&token, &signal)?,
        reasons: parse(&token, &reasons)?,
        expires_at,
        digest,
        state,
        tool: match tool {
            Some(t) => Some(parse(&token, &t)?),
            None => None,
        },
        token,
    })
}

/// What the approvals that wait (and run) hold, as counted before another is asked.
struct Held {
    waiting: i64,
    by_clients: i64,
    bytes: i64,
    bytes_by_clients: i64,
    talk: i64,
    talk_by_clients: i64,
}

impl Held {
    /// Why one more, taking `bytes` as listed (of the `listed` that may) and `talk` bytes of
    /// conversation, asked with the client key when `client_key`, may not wait; `None` when
    /// it may.
    fn refusal(
        &self,
        client_key: bool,
        (bytes, listed): (usize, usize),
        talk: usize,
    ) -> Option<ApprovalError> {
        let count = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
        let rooms = [
            (self.bytes, bytes, listed, false, false),
            (
                self.bytes_by_clients,
                bytes,
                client_share(listed),
                true,
                false,
            ),
            (self.talk, talk, MAX_CONVERSATION_BYTES, false, true),
            (
                self.talk_by_clients,
                talk,
                client_share(MAX_CONVERSATION_BYTES),
                true,
                true,
            ),
        ];
        for (held, more, most, client, conversation) in rooms {
            let waiting = count(held);
            if more > 0 && (client_key || !client) && waiting.saturating_add(more) > most {
                return Some(ApprovalError::TooLarge {
                    conversation,
                    bytes: more,
                    waiting,
                    most,
                    client_key: client,
                });
            }
        }
        if count(self.waiting) >= MAX_PENDING {
            return Some(ApprovalError::TooMany {
                waiting: count(self.waiting),
            });
        }
        if client_key && count(self.by_clients) >= CLIENT_PLACES {
            return Some(ApprovalError::ClientShareFull {
                waiting: count(self.by_clients),
            });
        }
        None
    }
}

/// Drop what approvals that ended no longer need: the action, signal, reasons and
/// conversation of one that ran, was denied or expired (the journal keeps them), and, past
/// [`ENDED_KEPT`] after its expiry, the row itself. Only the running ones and those that wait
/// keep theirs, so that what is kept on disk is bounded by what may wait.
fn forget_ended(tx: &rusqlite::Transaction<'_>, now: f64) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE approvals SET action = 'null', signal = 'null', reasons = '[]', tool = NULL, conversation = NULL, bytes = 0, conversation_bytes = 0 WHERE action != 'null' AND (status IN ('done', 'denied', 'expired') OR (status IN ('pending', 'interrupted') AND expires_at < ?1))",
        [now],
    )?;
    tx.execute(
        "DELETE FROM approvals WHERE status != 'running' AND expires_at < ?1",
        [now - ENDED_KEPT.as_secs_f64()],
    )?;
    Ok(())
}

/// A running approval whose runner no one can name (see [`Pending::state`]).
const UNSURE: &str = "(status = 'running' AND runner IS NULL)";

/// The approvals table, in the journal's database.
pub struct Approvals<'a> {
    journal: &'a Journal,
    /// Most bytes the waiting ones may take as listed ([`MAX_PENDING_BYTES`], or less).
    listed: usize,
}

impl<'a> Approvals<'a> {
    /// The approvals kept beside `journal`.
    ///
    /// # Errors
    /// The table cannot be created.
    pub fn new(journal: &'a Journal) -> Result<Approvals<'a>, ApprovalError> {
        journal.with_conn(|c| -> rusqlite::Result<()> {
            c.execute_batch(
                "CREATE TABLE IF NOT EXISTS approvals (
                    token TEXT PRIMARY KEY,
                    action TEXT NOT NULL,
                    signal TEXT NOT NULL,
                    reasons TEXT NOT NULL,
                    expires_at REAL NOT NULL,
                    status TEXT NOT NULL DEFAULT 'pending'
                );",
            )?;
            // Databases from before the digest, the runner, the tool and the wait: add them.
            let columns: Vec<String> = c
                .prepare("SELECT name FROM pragma_table_info('approvals')")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            for (name, kind) in [
                ("digest", "TEXT"),
                ("runner", "TEXT"),
                ("tool", "TEXT"),
                ("wait_secs", "REAL"),
                ("client_key", "INTEGER NOT NULL DEFAULT 0"),
                ("bytes", "INTEGER NOT NULL DEFAULT 0"),
                ("conversation", "TEXT"),
                ("conversation_bytes", "INTEGER NOT NULL DEFAULT 0"),
            ] {
                if !columns.iter().any(|c| c == name) {
                    match c.execute_batch(&format!(
                        "ALTER TABLE approvals ADD COLUMN {name} {kind}"
                    )) {
                        // Another process added it first.
                        Err(e) if e.to_string().contains("duplicate column") => {}
                        other => other?,
                    }
                    if name == "bytes" {
                        // What the ones kept before take, counted once.
                        c.execute(
                            "UPDATE approvals SET bytes = LENGTH(CAST(action AS BLOB)) + LENGTH(CAST(signal AS BLOB)) + LENGTH(CAST(reasons AS BLOB)) + COALESCE(LENGTH(CAST(tool AS BLOB)), 0)",
                            [],
                        )?;
                    }
                    if name == "wait_secs" {
                        // Interrupted before they could expire: a fresh default wait from now,
                        // not gone at once.
                        c.execute(
                            "UPDATE approvals SET expires_at = MAX(expires_at, ?1) WHERE status = 'interrupted'",
                            [epoch() + DEFAULT_EXPIRY.as_secs_f64()],
                        )?;
                    }
                }
            }
            Ok(())
        })?;
        Ok(Approvals {
            journal,
            listed: MAX_PENDING_BYTES,
        })
    }

    /// These approvals, listed by a daemon whose replies take at most `frame` bytes: what
    /// waits may take half of it as listed ([`MAX_PENDING_BYTES`] at most), so that the list
    /// always fits one reply.
    #[must_use]
    pub fn within(self, frame: usize) -> Approvals<'a> {
        Approvals {
            listed: (frame / 2).min(MAX_PENDING_BYTES),
            ..self
        }
    }

    /// Suspend `action`, which names `tool`, until a decision; returns the pending entry with
    /// its token. The entry and its `approval-requested` journal record are written together.
    ///
    /// # Errors
    /// The database refused the write, the system has no randomness for a token, or what would
    /// be stored could not be read back ([`ApprovalError::Unkeepable`]).
    pub fn suspend(
        &self,
        action: &Action,
        signal: &Signal,
        reasons: Vec<String>,
        tool: Option<ToolIdentity>,
        expiry: Duration,
    ) -> Result<Pending, ApprovalError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ApprovalError::NoRandomness(e.to_string()))?;
        let stored = to_json(action);
        let pending = Pending {
            token: hex::encode(bytes),
            action: action.clone(),
            digest: digest_of(&stored),
            signal: signal.clone(),
            reasons,
            expires_at: epoch() + expiry.as_secs_f64(),
            state: "pending".into(),
            tool,
        };
        // The conversation is kept apart: a person is shown the action, and the tool outputs
        // before it would crowd the listing out.
        let mut listed = pending.signal.clone();
        let conversation = listed.payload.conversation.take().map(|c| to_json(&c));
        let signal = to_json(&listed);
        let reasons = to_json(&pending.reasons);
        let tool = pending.tool.as_ref().map(to_json);
        // Read back as it would be listed and run: a row that cannot be would wait for a
        // person no one could show it to, holding a place until it expired.
        let row = (
            pending.token.clone(),
            stored.clone(),
            signal.clone(),
            reasons.clone(),
            pending.expires_at,
            pending.digest.clone(),
            pending.state.clone(),
            tool.clone(),
        );
        let readable = pending_of(row).and_then(|_| {
            conversation.as_deref().map_or(Ok(()), |c| {
                parse::<Conversation>(&pending.token, c).map(drop)
            })
        });
        if let Err(e) = readable {
            let message = match e {
                ApprovalError::Damaged { message, .. } => message,
                other => other.to_string(),
            };
            return Err(ApprovalError::Unkeepable { message });
        }
        // Counted and added in one transaction: concurrent asks cannot pass the bound together.
        let client_key = pending.signal.meta.client_key;
        let bytes = ENTRY_BYTES
            + stored.len()
            + signal.len()
            + reasons.len()
            + tool.as_ref().map_or(0, String::len);
        let talk = conversation.as_ref().map_or(0, String::len);
        let now = epoch();
        let crowded = self.journal.transaction(|tx| {
            forget_ended(tx, now)?;
            let held = tx.query_row(
                // Running ones too: one whose process dies comes back as interrupted.
                "SELECT COUNT(*), COALESCE(SUM(client_key), 0), COALESCE(SUM(bytes), 0) + ?2 * COUNT(*), COALESCE(SUM(CASE WHEN client_key THEN bytes + ?2 ELSE 0 END), 0), COALESCE(SUM(conversation_bytes), 0), COALESCE(SUM(CASE WHEN client_key THEN conversation_bytes ELSE 0 END), 0) FROM approvals WHERE (status IN ('pending', 'interrupted') AND expires_at >= ?1) OR status = 'running'",
                params![now, i64::try_from(ENTRY_BYTES).unwrap_or(0)],
                |r| {
                    Ok(Held {
                        waiting: r.get(0)?,
                        by_clients: r.get(1)?,
                        bytes: r.get(2)?,
                        bytes_by_clients: r.get(3)?,
                        talk: r.get(4)?,
                        talk_by_clients: r.get(5)?,
                    })
                },
            )?;
            if let Some(refused) = held.refusal(client_key, (bytes, self.listed), talk) {
                return Ok(Some(refused));
            }
            tx.execute(
                "INSERT INTO approvals (token, action, signal, reasons, expires_at, digest, tool, wait_secs, client_key, bytes, conversation, conversation_bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![pending.token, stored, signal, reasons, pending.expires_at, pending.digest, tool, expiry.as_secs_f64(), client_key, i64::try_from(bytes).unwrap_or(i64::MAX), conversation, i64::try_from(talk).unwrap_or(i64::MAX)],
            )?;
            self.journal.append_in(
                tx,
                "approval-requested",
                &json!({ "token": pending.token, "action": pending.action, "digest": pending.digest, "reasons": pending.reasons, "tool": pending.tool, "expires_at": pending.expires_at }),
            )?;
            Ok(None)
        })?;
        if let Some(refused) = crowded {
            return Err(refused);
        }
        Ok(pending)
    }

    /// The database file the approvals are kept in (`None` in memory).
    fn database(&self) -> Option<std::path::PathBuf> {
        self.journal.with_conn(|c| {
            c.path()
                .filter(|p| !p.is_empty())
                .map(std::path::PathBuf::from)
        })
    }

    /// Mark `running` approvals whose process is gone as `interrupted`, each waiting for a
    /// person as long as it first waited, from now.
    fn find_interrupted(&self) -> Result<(), ApprovalError> {
        type Running = (String, Option<String>, Option<f64>);
        let running: Vec<Running> = self.journal.with_conn(|c| {
            c.prepare("SELECT token, runner, wait_secs FROM approvals WHERE status = 'running'")?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<rusqlite::Result<_>>()
        })?;
        let db = self.database();
        for (token, runner, wait) in running {
            // A runner no one can name (no lock file and no /proc) is never taken for gone:
            // approved again, its action would run twice.
            let gone = runner
                .as_deref()
                .is_some_and(|r| !runner::alive(db.as_deref(), r).unwrap_or_else(|| alive(r)));
            if !gone {
                continue;
            }
            // A wait that is not a number of seconds (an edited row) is the default one.
            let wait = wait
                .filter(|w| w.is_finite() && *w >= 0.0)
                .unwrap_or(DEFAULT_EXPIRY.as_secs_f64());
            let expires_at = epoch() + wait;
            self.journal.transaction(|tx| {
                if tx.execute(
                    "UPDATE approvals SET status = 'interrupted', expires_at = ?2 WHERE token = ?1 AND status = 'running'",
                    params![&token, expires_at],
                )? == 1
                {
                    self.journal.append_in(
                        tx,
                        "approval-interrupted",
                        &json!({ "token": token, "runner": runner, "expires_at": expires_at, "why": "the process running the approved action ended before it finished" }),
                    )?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Decide the approval `token` (pending, or interrupted): approved, it becomes `running`
    /// in this process and is returned so the caller runs it (then calls
    /// [`Approvals::finish`]); denied, it is dropped. `shown`: the digest of the action the
    /// person decided on, refused if the stored action does not match it. `by`: who decided
    /// (the deciding client's name, [`crate::signal::Meta::via`]). The decision and its
    /// `approval` journal record (with `by`) are written together.
    ///
    /// # Errors
    /// [`ApprovalError::Unknown`], [`ApprovalError::Expired`], [`ApprovalError::Changed`].
    pub fn decide(
        &self,
        token: &str,
        approve: bool,
        shown: Option<&str>,
        by: Option<&str>,
    ) -> Result<Pending, ApprovalError> {
        self.find_interrupted()?;
        let runner = runner::this_process(self.database().as_deref())
            .or_else(|| process_identity(std::process::id()));
        let now = epoch();
        self.journal.transaction(|tx| {
            // One transaction: two deciders racing (two clients, or the CLI beside the daemon)
            // cannot both see it undecided, so an approved action runs at most once.
            let Some(row) = tx
                .query_row(
                    // Pending, interrupted, and (to deny only) unsure.
                    &format!("SELECT {COLUMNS} FROM approvals WHERE token = ?1 AND (status IN ('pending', 'interrupted') OR {UNSURE})"),
                    [token],
                    row,
                )
                .optional()?
            else {
                return Ok(Err(ApprovalError::Unknown(token.to_owned())));
            };
            let (stored, state, expires_at) = (row.5.clone(), row.6.clone(), row.4);
            let actual = digest_of(&row.1);
            // Running in a process no one can name: it may still run; denied, it is cleared.
            let unsure = state == "running";
            if unsure && approve {
                return Ok(Err(ApprovalError::MayBeRunning(token.to_owned())));
            }
            // Pending or interrupted, each waits only so long.
            if !unsure && expires_at < now {
                tx.execute("UPDATE approvals SET status = 'expired' WHERE token = ?1", [token])?;
                return Ok(Err(ApprovalError::Expired(token.to_owned())));
            }
            let mut pending = match pending_of(row) {
                Ok(p) => p,
                Err(e) => return Ok(Err(e)),
            };
            // The conversation kept apart goes back with the action (approvals from before it
            // was kept apart carry theirs in the signal).
            let conversation: Option<String> = tx.query_row(
                "SELECT conversation FROM approvals WHERE token = ?1",
                [token],
                |r| r.get(0),
            )?;
            if let Some(c) = conversation {
                match parse::<Conversation>(token, &c) {
                    Ok(c) => pending.signal.payload.conversation = Some(Box::new(c)),
                    Err(e) => return Ok(Err(e)),
                }
            }
            // The stored action must still be the one suspended (rows from before digests
            // have none), and the one shown.
            let recorded = Some(stored.as_str()).filter(|d| !d.is_empty());
            for claimed in [recorded, shown].into_iter().flatten() {
                if claimed != actual {
                    return Ok(Err(ApprovalError::Changed {
                        token: token.to_owned(),
                        stored: actual,
                        shown: claimed.to_owned(),
                    }));
                }
            }
            let status = if approve { "running" } else { "denied" };
            tx.execute(
                "UPDATE approvals SET status = ?2, runner = ?3 WHERE token = ?1",
                params![token, status, runner],
            )?;
            self.journal.append_in(
                tx,
                "approval",
                &json!({ "token": token, "decision": if approve { "approved" } else { "denied" }, "was": state, "digest": actual, "action": pending.action, "by": by }),
            )?;
            Ok(Ok(pending))
        })?
    }

    /// The approved action `token` has finished (ran, was rejected by its last-mile verify,
    /// or was suspended again): it leaves `running`. `record`: the journal record of how it
    /// ended, written in the same transaction.
    ///
    /// # Errors
    /// The database refused.
    pub fn finish(
        &self,
        token: &str,
        record: Option<(&str, &serde_json::Value)>,
    ) -> Result<(), ApprovalError> {
        self.journal.transaction(|tx| {
            if let Some((kind, body)) = record {
                self.journal.append_in(tx, kind, body)?;
            }
            tx.execute(
                "UPDATE approvals SET status = 'done' WHERE token = ?1 AND status = 'running'",
                [token],
            )
        })?;
        Ok(())
    }

    /// Every approval waiting for a person: pending and interrupted ones, not expired, and
    /// running ones whose runner no one can name (to be denied, see [`Pending::state`]).
    ///
    /// # Errors
    /// The database could not be read.
    pub fn pending(&self) -> Result<Vec<Pending>, ApprovalError> {
        self.find_interrupted()?;
        let rows: Vec<Row> = self.journal.with_conn(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM approvals WHERE (status IN ('pending', 'interrupted') AND expires_at >= ?1) OR {UNSURE} ORDER BY rowid"
            ))?;
            let rows = stmt.query_map([epoch()], row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|r| pending_of(r).ok())
            .collect())
    }

    /// How many approvals [`Approvals::pending`] would list, counted without reading them.
    ///
    /// # Errors
    /// The database could not be read.
    pub fn count(&self) -> Result<usize, ApprovalError> {
        self.find_interrupted()?;
        let n: i64 = self.journal.with_conn(|c| {
            c.query_row(
                &format!("SELECT COUNT(*) FROM approvals WHERE (status IN ('pending', 'interrupted') AND expires_at >= ?1) OR {UNSURE}"),
                [epoch()],
                |r| r.get(0),
            )
        })?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Whether `token` ran out of time unanswered: still pending (or interrupted) past its
    /// expiry, or marked expired (a decision that came too late). Decided, running or unknown:
    /// false.
    ///
    /// # Errors
    /// The database could not be read.
    pub fn has_expired(&self, token: &str) -> Result<bool, ApprovalError> {
        let row: Option<(String, f64)> = self.journal.with_conn(|c| {
            c.query_row(
                "SELECT status, expires_at FROM approvals WHERE token = ?1",
                [token],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
        })?;
        Ok(row.is_some_and(|(status, at)| {
            status == "expired"
                || (matches!(status.as_str(), "pending" | "interrupted") && at < epoch())
        }))
    }
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_could_not_be_read_back_is_never_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        // Past serde_json's 128 levels once stored inside its signal.
        let mut deep = json!(0);
        for _ in 0..125 {
            deep = json!([deep]);
        }
        let mut action = Action::reply("deep");
        action.args.insert("x".into(), deep);
        let signal = Signal::request(action.clone(), Default::default());
        let refused = approvals
            .suspend(&action, &signal, vec!["why".into()], None, DEFAULT_EXPIRY)
            .expect_err("unkeepable");
        assert!(
            matches!(&refused, ApprovalError::Unkeepable { message } if message.contains("recursion")),
            "{refused}"
        );
        let waiting: i64 = journal
            .with_conn(|c| c.query_row("SELECT COUNT(*) FROM approvals", [], |r| r.get(0)))
            .expect("count");
        assert_eq!(waiting, 0, "nothing holds a place");
    }

    /// Suspend decoy `n`, asked with the client key when `client_key`, carrying `pad` bytes
    /// of text.
    fn decoy(
        approvals: &Approvals<'_>,
        n: usize,
        client_key: bool,
        pad: usize,
    ) -> Result<Pending, ApprovalError> {
        let mut action = Action::reply(&format!("decoy {n}"));
        if pad > 0 {
            action.args.insert("text".into(), json!("x".repeat(pad)));
        }
        let meta = crate::signal::Meta {
            client_key,
            ..Default::default()
        };
        let signal = Signal::request(action.clone(), meta);
        approvals.suspend(&action, &signal, vec!["why".into()], None, DEFAULT_EXPIRY)
    }

    #[test]
    fn past_the_most_that_may_wait_an_ask_is_refused_until_one_is_decided() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        let ask = |n: usize| decoy(&approvals, n, false, 0);
        let first = ask(0).expect("asked");
        for n in 1..MAX_PENDING {
            ask(n).expect("asked");
        }
        let refused = ask(MAX_PENDING).expect_err("one too many");
        assert!(
            matches!(refused, ApprovalError::TooMany { waiting } if waiting == MAX_PENDING),
            "{refused}"
        );
        assert!(refused.to_string().contains("passepartout approvals"));
        assert_eq!(approvals.pending().expect("pending").len(), MAX_PENDING);
        // A decision makes room.
        approvals
            .decide(&first.token, false, Some(&first.digest), Some("a test"))
            .expect("denied");
        ask(MAX_PENDING + 1).expect("asked once one was decided");
    }

    #[test]
    fn client_key_asks_hold_at_most_their_share_and_the_operator_the_rest() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        let ask = |n: usize, client_key: bool| decoy(&approvals, n, client_key, 0);
        let first = ask(0, true).expect("asked");
        for n in 1..CLIENT_PLACES {
            ask(n, true).expect("asked");
        }
        let refused = ask(CLIENT_PLACES, true).expect_err("past the share");
        assert!(
            matches!(refused, ApprovalError::ClientShareFull { waiting } if waiting == CLIENT_PLACES),
            "{refused}"
        );
        for n in CLIENT_PLACES..MAX_PENDING {
            ask(n, false).expect("the operator's");
        }
        assert!(matches!(
            ask(MAX_PENDING, false),
            Err(ApprovalError::TooMany { .. })
        ));
        approvals
            .decide(&first.token, false, Some(&first.digest), Some("a test"))
            .expect("denied");
        ask(MAX_PENDING + 1, true).expect("a client's again, once one of theirs was decided");
    }

    #[test]
    fn what_waits_takes_at_most_its_bytes_and_the_client_key_its_share_of_them() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        // ~1.8 MiB kept each: the action, and its signal that carries it again.
        let ask = |n: usize, client_key: bool| decoy(&approvals, n, client_key, 900 << 10);
        for n in 0..3 {
            ask(n, true).expect("within the client key's share");
        }
        let refused = ask(3, true).expect_err("past the share");
        assert!(
            matches!(refused, ApprovalError::TooLarge { most, client_key: true, .. } if most == CLIENT_BYTES),
            "{refused}"
        );
        assert!(
            refused.to_string().contains("kept for the operator"),
            "{refused}"
        );
        let first = ask(4, false).expect("the operator's, in the rest");
        let refused = ask(5, false).expect_err("past every byte");
        assert!(
            matches!(refused, ApprovalError::TooLarge { most, client_key: false, .. } if most == MAX_PENDING_BYTES),
            "{refused}"
        );
        let listed = approvals.pending().expect("pending");
        assert_eq!(listed.len(), 4);
        assert_eq!(approvals.count().expect("count"), 4);
        assert!(serde_json::to_vec(&listed).expect("json").len() < MAX_PENDING_BYTES + (64 << 10));
        approvals
            .decide(&first.token, false, Some(&first.digest), Some("a test"))
            .expect("denied");
        ask(6, false).expect("room again");
    }

    /// Approve `p` in a process that is gone: running, with a runner no process is.
    fn interrupt(journal: &Journal, approvals: &Approvals<'_>, p: &Pending) {
        approvals
            .decide(&p.token, true, Some(&p.digest), Some("a test"))
            .expect("approved");
        journal
            .with_conn(|c| {
                c.execute(
                    "UPDATE approvals SET runner = '4194305:1' WHERE token = ?1",
                    [&p.token],
                )
            })
            .expect("runner");
    }

    /// A running approval is interrupted only when its runner is known to be gone: one this
    /// process runs is not, nor one whose runner no one can name (a NULL runner: approved
    /// again, its action would run twice); one whose lock file is gone is.
    #[test]
    fn only_a_runner_known_to_be_gone_interrupts_its_approval() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        let action = Action::reply("hello");
        let signal = Signal::request(action.clone(), Default::default());
        let status = |token: &str| -> String {
            journal
                .with_conn(|c| {
                    c.query_row(
                        "SELECT status FROM approvals WHERE token = ?1",
                        [token],
                        |r| r.get(0),
                    )
                })
                .expect("status")
        };
        let set_runner = |token: &str, runner: Option<&str>| {
            journal
                .with_conn(|c| {
                    c.execute(
                        "UPDATE approvals SET runner = ?2 WHERE token = ?1",
                        params![token, runner],
                    )
                })
                .expect("runner");
        };
        // Suspended, then approved in this process: running here.
        let approved = || {
            let p = approvals
                .suspend(&action, &signal, vec!["why".into()], None, DEFAULT_EXPIRY)
                .expect("suspended");
            approvals
                .decide(&p.token, true, Some(&p.digest), Some("a test"))
                .expect("approved");
            p
        };
        let p = approved();
        let runner: String = journal
            .with_conn(|c| {
                c.query_row(
                    "SELECT runner FROM approvals WHERE token = ?1",
                    [&p.token],
                    |r| r.get(0),
                )
            })
            .expect("runner");
        assert!(runner.starts_with("lock:"), "{runner}");
        assert!(approvals.pending().expect("pending").is_empty());
        assert_eq!(status(&p.token), "running", "this process runs it");
        set_runner(&p.token, None);
        let listed = approvals.pending().expect("pending");
        assert_eq!(
            listed.iter().map(|p| p.state.as_str()).collect::<Vec<_>>(),
            ["running"],
            "listed, to be denied"
        );
        assert_eq!(status(&p.token), "running", "a runner no one can name");
        let again = approvals.decide(&p.token, true, Some(&p.digest), Some("a test"));
        assert!(
            matches!(again, Err(ApprovalError::MayBeRunning(_))),
            "never approved again: {again:?}"
        );
        assert_eq!(status(&p.token), "running");
        set_runner(&p.token, Some("lock:1-00"));
        assert_eq!(approvals.pending().expect("pending").len(), 1);
        assert_eq!(status(&p.token), "interrupted", "a lock file that is gone");
        // Another, whose runner no one can name, past its expiry: a person denies it to clear it.
        let q = approved();
        set_runner(&q.token, None);
        journal
            .with_conn(|c| {
                c.execute(
                    "UPDATE approvals SET expires_at = 0 WHERE token = ?1",
                    [&q.token],
                )
            })
            .expect("expired");
        assert!(
            approvals
                .pending()
                .expect("pending")
                .iter()
                .any(|p| p.token == q.token && p.state == "running")
        );
        approvals
            .decide(&q.token, false, Some(&q.digest), Some("a test"))
            .expect("denied");
        assert_eq!(status(&q.token), "denied");
    }

    #[test]
    fn an_interrupted_approval_waits_as_long_as_it_first_did_then_expires() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        let ask = |text: &str, wait: Duration| {
            let action = Action::reply(text);
            let signal = Signal::request(action.clone(), Default::default());
            approvals
                .suspend(&action, &signal, vec!["why".into()], None, wait)
                .expect("asked")
        };
        let hour = ask("an hour", Duration::from_secs(3600));
        let other = ask("another", Duration::from_secs(7200));
        interrupt(&journal, &approvals, &hour);
        interrupt(&journal, &approvals, &other);
        let listed = approvals.pending().expect("pending");
        assert_eq!(listed.len(), 2, "both listed again: {listed:?}");
        let hour_listed = listed.iter().find(|p| p.token == hour.token).expect("hour");
        assert_eq!(hour_listed.state, "interrupted");
        // A fresh wait as long as the first, from when it was found interrupted.
        let left = hour_listed.expires_at - epoch();
        assert!((3590.0..=3600.0).contains(&left), "{left}");
        // Its wait over (moved into the past, not slept through), it expires.
        journal
            .with_conn(|c| {
                c.execute(
                    "UPDATE approvals SET expires_at = ?2 WHERE token = ?1",
                    params![&hour.token, epoch() - 1.0],
                )
            })
            .expect("past");
        let listed = approvals.pending().expect("pending");
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert!(approvals.has_expired(&hour.token).expect("read"));
        let late = approvals
            .decide(&hour.token, true, Some(&hour.digest), Some("a test"))
            .expect_err("too late");
        assert!(matches!(late, ApprovalError::Expired(_)), "{late}");
        approvals
            .decide(&other.token, true, Some(&other.digest), Some("a test"))
            .expect("still in time");
    }

    #[test]
    fn approvals_interrupted_before_waits_were_kept_get_a_fresh_default_wait() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("journal.db");
        {
            let c = rusqlite::Connection::open(&db).expect("db");
            c.execute_batch(
                "CREATE TABLE approvals (token TEXT PRIMARY KEY, action TEXT NOT NULL, signal TEXT NOT NULL, reasons TEXT NOT NULL, expires_at REAL NOT NULL, status TEXT NOT NULL DEFAULT 'pending', digest TEXT, runner TEXT, tool TEXT);",
            )
            .expect("an older table");
            let action = Action::reply("from before");
            let signal = Signal::request(action.clone(), Default::default());
            c.execute(
                "INSERT INTO approvals (token, action, signal, reasons, expires_at, status) VALUES ('old', ?1, ?2, '[\"why\"]', 1.0, 'interrupted')",
                params![to_json(&action), to_json(&signal)],
            )
            .expect("an old interrupted approval");
        }
        let journal = Journal::open(&db).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        let listed = approvals.pending().expect("pending");
        assert_eq!(listed.len(), 1, "{listed:?}");
        let left = listed[0].expires_at - epoch();
        let default = DEFAULT_EXPIRY.as_secs_f64();
        assert!((default - 10.0..=default).contains(&left), "{left}");
    }

    /// A model's action asked after `turns` tool calls of `output` bytes each.
    fn conversation_of(turns: usize, output: usize) -> Signal {
        let origin = Signal::event("user-input", Some("read them, then write"), Some("cli"));
        let mut signal = Signal::event("tool-output", Some("out"), Some("cli"));
        signal.payload.conversation = Some(Box::new(Conversation {
            origin: Box::new(origin),
            turns: (0..turns)
                .map(|n| crate::signal::ToolTurn {
                    id: format!("call-{n}"),
                    name: "read".into(),
                    arguments: json!({ "n": n }),
                    result: "o".repeat(output),
                    is_error: false,
                })
                .collect(),
        }));
        signal
    }

    #[test]
    fn a_models_conversation_is_kept_apart_from_the_listing_and_given_back_when_approved() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        // Ten tool outputs of 1 MiB (the default output cap) each, before the flagged action:
        // more than the listing may take, twice over.
        let signal = conversation_of(10, 1 << 20);
        let action = Action::reply("write it");
        let asked = approvals
            .suspend(&action, &signal, vec!["why".into()], None, DEFAULT_EXPIRY)
            .expect("kept for a person");
        let listed = approvals.pending().expect("pending");
        assert_eq!(listed.len(), 1);
        assert!(listed[0].signal.payload.conversation.is_none());
        assert!(serde_json::to_vec(&listed).expect("json").len() < 64 << 10);
        // Small ones still fit beside it.
        for n in 0..8 {
            decoy(&approvals, n, false, 0).expect("room as listed");
        }
        let approved = approvals
            .decide(&asked.token, true, Some(&asked.digest), Some("a test"))
            .expect("approved");
        assert_eq!(approved.signal, signal, "the whole conversation goes back");
        // What may wait of conversations is bounded too, the client key's share first.
        let mut client = conversation_of(16, 4 << 20);
        client.meta.client_key = true;
        let mut kept = 0;
        let refused = loop {
            match approvals.suspend(&action, &client, vec!["why".into()], None, DEFAULT_EXPIRY) {
                Ok(_) => kept += 1,
                Err(e) => break e,
            }
            assert!(kept < 8, "never refused");
        };
        // 64 MiB each, beside the 10 MiB of the approved one, which runs.
        assert!(
            kept >= 1
                && (kept + 1) * (64 << 20) > client_share(MAX_CONVERSATION_BYTES) - (10 << 20),
            "{kept} kept"
        );
        assert!(
            matches!(
                refused,
                ApprovalError::TooLarge {
                    conversation: true,
                    client_key: true,
                    ..
                }
            ),
            "{refused}"
        );
        assert!(refused.to_string().contains("of conversation"), "{refused}");
    }

    #[test]
    fn what_waits_fits_one_reply_of_the_daemons_frame() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let frame = 64 << 10;
        let approvals = Approvals::new(&journal).expect("approvals").within(frame);
        let mut asked = 0;
        let refused = loop {
            match decoy(&approvals, asked, false, 1000) {
                Ok(_) => asked += 1,
                Err(e) => break e,
            }
            assert!(asked < MAX_PENDING, "never refused");
        };
        assert!(
            matches!(refused, ApprovalError::TooLarge { most, .. } if most == frame / 2),
            "{refused}"
        );
        let listed = approvals.pending().expect("pending");
        assert_eq!(listed.len(), asked);
        assert!(serde_json::to_vec(&listed).expect("json").len() < frame - 1024);
        // Many small ones are counted for what each takes to list, too.
        let journal = Journal::open(&dir.path().join("other.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals").within(frame);
        let mut asked = 0;
        while decoy(&approvals, asked, false, 0).is_ok() {
            asked += 1;
            assert!(asked <= MAX_PENDING, "never refused");
        }
        let listed = approvals.pending().expect("pending");
        assert!(serde_json::to_vec(&listed).expect("json").len() < frame - 1024);
    }

    #[test]
    fn an_approval_that_ended_keeps_nothing_of_its_action_and_is_forgotten_a_day_later() {
        let dir = tempfile::tempdir().expect("dir");
        let journal = Journal::open(&dir.path().join("journal.db")).expect("journal");
        let approvals = Approvals::new(&journal).expect("approvals");
        let denied = decoy(&approvals, 0, false, 4096).expect("asked");
        approvals
            .decide(&denied.token, false, Some(&denied.digest), Some("a test"))
            .expect("denied");
        let expired = decoy(&approvals, 1, false, 4096).expect("asked");
        let old = decoy(&approvals, 2, false, 4096).expect("asked");
        let set = |token: &str, at: f64| {
            journal
                .with_conn(|c| {
                    c.execute(
                        "UPDATE approvals SET expires_at = ?2 WHERE token = ?1",
                        params![token, at],
                    )
                })
                .expect("set");
        };
        set(&expired.token, epoch() - 1.0);
        set(&old.token, epoch() - ENDED_KEPT.as_secs_f64() - 1.0);
        decoy(&approvals, 3, false, 0).expect("asked");
        let kept = |token: &str| -> Option<(usize, i64)> {
            journal
                .with_conn(|c| {
                    c.query_row(
                        "SELECT LENGTH(action) + LENGTH(signal), bytes FROM approvals WHERE token = ?1",
                        [token],
                        |r| Ok((r.get::<_, i64>(0)? as usize, r.get(1)?)),
                    )
                    .optional()
                })
                .expect("read")
        };
        assert_eq!(kept(&denied.token), Some((8, 0)), "denied: nothing kept");
        assert_eq!(kept(&expired.token), Some((8, 0)), "expired: nothing kept");
        assert_eq!(kept(&old.token), None, "a day after: forgotten");
        // A late decision on the expired one is still told it expired.
        assert!(matches!(
            approvals.decide(&expired.token, true, None, None),
            Err(ApprovalError::Expired(_))
        ));
        assert!(approvals.has_expired(&expired.token).expect("read"));
    }
}
