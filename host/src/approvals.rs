//! Human approval: an action a gate flagged waits under a random token until a person approves
//! or denies it, or it expires. Kept in SQLite beside the journal, so it survives a restart.

use std::time::Duration;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::journal::Journal;
use crate::signal::{Action, Signal};

/// How long an approval waits by default.
pub const DEFAULT_EXPIRY: Duration = Duration::from_secs(24 * 3600);

/// A suspended action.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Pending {
    /// The token a person answers with.
    pub token: String,
    /// The action that waits.
    pub action: Action,
    /// The signal it answered.
    pub signal: Signal,
    /// Why the gates asked (one line per gate).
    pub reasons: Vec<String>,
    /// Seconds since the epoch when it expires.
    pub expires_at: f64,
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
    /// No randomness for a token.
    #[error("cannot make an approval token: {0}")]
    NoRandomness(String),
}

fn epoch() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

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
        journal.with_conn(|c| {
            c.execute_batch(
                "CREATE TABLE IF NOT EXISTS approvals (
                    token TEXT PRIMARY KEY,
                    action TEXT NOT NULL,
                    signal TEXT NOT NULL,
                    reasons TEXT NOT NULL,
                    expires_at REAL NOT NULL,
                    status TEXT NOT NULL DEFAULT 'pending'
                );",
            )
        })?;
        Ok(Approvals { journal })
    }

    /// Suspend `action` until a decision; returns the pending entry with its token.
    ///
    /// # Errors
    /// The database refused the write, or the system has no randomness for a token.
    pub fn suspend(
        &self,
        action: &Action,
        signal: &Signal,
        reasons: Vec<String>,
        expiry: Duration,
    ) -> Result<Pending, ApprovalError> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| ApprovalError::NoRandomness(e.to_string()))?;
        let pending = Pending {
            token: hex::encode(bytes),
            action: action.clone(),
            signal: signal.clone(),
            reasons,
            expires_at: epoch() + expiry.as_secs_f64(),
        };
        self.journal.with_conn(|c| {
            c.execute(
                "INSERT INTO approvals (token, action, signal, reasons, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![pending.token, to_json(&pending.action), to_json(&pending.signal), to_json(&pending.reasons), pending.expires_at],
            )
        })?;
        Ok(pending)
    }

    /// Take the pending approval `token` out of the table, marking it `status` (approved or
    /// denied). Returns it, so the caller can run or drop the action.
    ///
    /// # Errors
    /// [`ApprovalError::Unknown`] or [`ApprovalError::Expired`].
    pub fn decide(&self, token: &str, approve: bool) -> Result<Pending, ApprovalError> {
        // One statement: two deciders racing (two clients, or the CLI beside the daemon) cannot
        // both see "pending", so an approved action runs at most once.
        let row = self.journal.with_conn(|c| {
            c.query_row(
                "UPDATE approvals SET status = CASE WHEN expires_at < ?3 THEN 'expired' WHEN ?2 THEN 'approved' ELSE 'denied' END
                 WHERE token = ?1 AND status = 'pending'
                 RETURNING action, signal, reasons, expires_at, status",
                params![token, approve, epoch()],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, f64>(3)?, r.get::<_, String>(4)?)),
            )
            .optional()
        })?;
        let Some((action, signal, reasons, expires_at, status)) = row else {
            return Err(ApprovalError::Unknown(token.to_owned()));
        };
        let expired = status == "expired";
        if expired {
            return Err(ApprovalError::Expired(token.to_owned()));
        }
        fn parse<T: serde::de::DeserializeOwned>(token: &str, s: &str) -> Result<T, ApprovalError> {
            serde_json::from_str(s).map_err(|e| ApprovalError::Damaged {
                token: token.to_owned(),
                message: e.to_string(),
            })
        }
        Ok(Pending {
            token: token.to_owned(),
            action: parse(token, &action)?,
            signal: parse(token, &signal)?,
            reasons: parse(token, &reasons)?,
            expires_at,
        })
    }

    /// Every approval still pending.
    ///
    /// # Errors
    /// The database could not be read.
    pub fn pending(&self) -> Result<Vec<Pending>, ApprovalError> {
        let rows: Vec<(String, String, String, String, f64)> = self.journal.with_conn(|c| {
            let mut stmt = c.prepare("SELECT token, action, signal, reasons, expires_at FROM approvals WHERE status = 'pending' AND expires_at >= ?1 ORDER BY rowid")?;
            let rows = stmt.query_map([epoch()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(token, a, s, r, expires_at)| {
                Some(Pending {
                    token,
                    action: serde_json::from_str(&a).ok()?,
                    signal: serde_json::from_str(&s).ok()?,
                    reasons: serde_json::from_str(&r).ok()?,
                    expires_at,
                })
            })
            .collect())
    }
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}
