//! One error enum for the pipeline, with the seed's kinds and fields, and the recovery the loop
//! applies to a failed cycle.

use crate::signal::Signal;

/// Why a cycle of the pipeline failed.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// Any failure of Perceive, Reason or Act.
    #[error("pipeline error: {message}")]
    Pipeline {
        /// What failed.
        message: String,
        /// The signal being processed.
        signal: Option<Box<Signal>>,
    },
    /// The model could not be reached or answered nonsense.
    #[error("llm error: {message}")]
    Llm {
        /// What failed, for each provider tried.
        message: String,
        /// The provider that failed last.
        provider: Option<String>,
        /// The providers tried, in order.
        cascade: Vec<String>,
        /// How many attempts were made.
        attempt_count: u32,
    },
    /// The session's budget would be overspent.
    #[error("budget error: {message} (remaining {remaining}, requested {requested})")]
    Budget {
        /// What was refused.
        message: String,
        /// Tokens left.
        remaining: u64,
        /// Tokens asked for.
        requested: u64,
    },
    /// The day's spend would pass `[budget] daily_usd`.
    #[error("budget error: {message}")]
    DailySpend {
        /// What was refused, and when it starts again.
        message: String,
        /// Dollars spent today.
        spent_usd: f64,
        /// The limit.
        limit_usd: f64,
    },
    /// The approvals could not be stored or read (the database).
    #[error("pipeline error: {0}")]
    Approvals(#[from] crate::approvals::ApprovalError),
    /// A malformed message or frame.
    #[error("protocol error: {message}")]
    Protocol {
        /// What is wrong.
        message: String,
        /// The raw message, if any.
        raw_message: Option<String>,
    },
}

/// The journal refused a Turn's records: what depends on them (running the action, giving out
/// its result) is refused too.
#[derive(Debug, thiserror::Error)]
#[error(
    "the journal cannot be written ({source}; check the database's disk and that no other \
     process holds it)"
)]
pub struct JournalWriteError {
    /// The database's error.
    #[source]
    pub source: rusqlite::Error,
}

impl PipelineError {
    /// A pipeline error with just a message.
    pub fn pipeline(message: impl Into<String>) -> PipelineError {
        PipelineError::Pipeline {
            message: message.into(),
            signal: None,
        }
    }
}

/// What the loop does with a failed cycle (seed 002's restarts); `recovery` in
/// `passepartout.toml`'s `[pipeline]`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// Re-inject a `loop-error` event one level deeper, unless the failing signal was itself a
    /// loop-error or tool-error or deeper than 2 (then drop it). The seed's default.
    Reinject,
    /// Drop the signal (`skip-signal`).
    Skip,
    /// Inject this text as a loop-error event instead (`use-fallback`).
    Fallback(String),
    /// End the run (`abort-pipeline`).
    Abort,
}
