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
use crate::signal::{Action, Signal};

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
/// Most bytes the approvals waiting at once may take as kept (each action, its signal, the
/// reasons), so that the list a person is shown always fits one reply frame (16 MiB) and
/// reading it stays cheap: past it, an action a gate sends to a person is refused, saying so.
pub const MAX_PENDING_BYTES: usize = 8 << 20;
/// Most of [`MAX_PENDING_BYTES`] that approvals asked on client-key connections may take; the
/// rest is kept for the operator, as [`CLIENT_PLACES`] are.
pub const CLIENT_BYTES: usize = MAX_PENDING_BYTES * 3 / 4;

/// A suspended action.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Pending {
    /// The token a person answers with.
    pub token: String,
    /// The action that waits.
    pub action: Action,
    /// sha256 of the action's JSON, lowercase hex: what a decision is bound to.
    pub digest: String,
    /// The signal it answered.
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
    /// ([`MAX_PENDING_BYTES`]; [`CLIENT_BYTES`] for those asked with the client key).
    #[error(
        "this action would take {bytes} bytes to keep for a person, and {waiting} bytes of actions already wait{}: past the {most} bytes that may, it is refused; decide some (`passepartout approvals`), or ask for a smaller action",
        if *client_key { " asked with the client key (the rest is kept for the operator)" } else { "" }
    )]
    TooLarge {
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

/// A running approval whose runner no one can name (see [`Pending::state`]).
const UNSURE: &str = "(status = 'running' AND runner IS NULL)";

/// The approvals table, in the journal's database.
pub struct Approvals<'a> {
    journal: &'a Journal,
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
        Ok(Approvals { journal })
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
        let signal = to_json(&pending.signal);
        let reasons = to_json(&pending.reasons);
        let tool = pending.tool.as_ref().map(to_json);
        // Read back as it would be listed: a row that cannot be would wait for a person no
        // one could show it to, holding a place until it expired.
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
        if let Err(e) = pending_of(row) {
            let message = match e {
                ApprovalError::Damaged { message, .. } => message,
                other => other.to_string(),
            };
            return Err(ApprovalError::Unkeepable { message });
        }
        // Counted and added in one transaction: concurrent asks cannot pass the bound together.
        let client_key = pending.signal.meta.client_key;
        let bytes =
            stored.len() + signal.len() + reasons.len() + tool.as_ref().map_or(0, String::len);
        let crowded = self.journal.transaction(|tx| {
            let (waiting, by_clients, held, held_by_clients): (i64, i64, i64, i64) = tx.query_row(
                // Running ones too: one whose process dies comes back as interrupted.
                "SELECT COUNT(*), COALESCE(SUM(client_key), 0), COALESCE(SUM(bytes), 0), COALESCE(SUM(CASE WHEN client_key THEN bytes ELSE 0 END), 0) FROM approvals WHERE (status IN ('pending', 'interrupted') AND expires_at >= ?1) OR status = 'running'",
                [epoch()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )?;
            let count = |n: i64| usize::try_from(n).unwrap_or(usize::MAX);
            for (waiting, most, client) in [
                (count(held), MAX_PENDING_BYTES, false),
                (count(held_by_clients), CLIENT_BYTES, true),
            ] {
                if (client_key || !client) && waiting.saturating_add(bytes) > most {
                    return Ok(Some(ApprovalError::TooLarge {
                        bytes,
                        waiting,
                        most,
                        client_key: client,
                    }));
                }
            }
            if count(waiting) >= MAX_PENDING {
                return Ok(Some(ApprovalError::TooMany {
                    waiting: count(waiting),
                }));
            }
            if client_key && count(by_clients) >= CLIENT_PLACES {
                return Ok(Some(ApprovalError::ClientShareFull {
                    waiting: count(by_clients),
                }));
            }
            tx.execute(
                "INSERT INTO approvals (token, action, signal, reasons, expires_at, digest, tool, wait_secs, client_key, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![pending.token, stored, signal, reasons, pending.expires_at, pending.digest, tool, expiry.as_secs_f64(), client_key, i64::try_from(bytes).unwrap_or(i64::MAX)],
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
            let pending = match pending_of(row) {
                Ok(p) => p,
                Err(e) => return Ok(Err(e)),
            };
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
}
