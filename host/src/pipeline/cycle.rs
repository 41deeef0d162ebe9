//! One cycle's own state, owned by the run that drives it and lent to Reason and Act: the
//! journal records waiting for the cycle's next commit, and what the cycle can undo. Runs on
//! many threads (or tasks) at once never see each other's, whichever thread a cycle happens to
//! finish on.

use serde_json::Value;

use crate::memory::Snapshot;

/// What one cycle of the loop (Perceive, Reason, Act) carries between its stages.
#[derive(Debug, Default)]
pub struct Cycle {
    /// Journal records of this cycle not yet committed (the proposal, every verdict, the
    /// result...). They are committed together, in one transaction: before anything that
    /// changes the world runs (write-ahead), or, for a read-only tool, with its result, before
    /// the result reaches anyone ([`super::Agent::flush`]); and at the end of the cycle.
    pub(crate) pending: Vec<(&'static str, Value)>,
    /// The snapshot taken before a tool that is not read-only ran, and the memory root the tool
    /// left: a cycle that fails afterwards rolls memory back to it (if nothing else wrote since).
    pub(crate) undo: Option<(Snapshot, String)>,
    /// An actuator ran the cycle's action (whatever came of it): an approval that ran is
    /// finished with its result, or left running for the record, never finished without it.
    pub(crate) ran: bool,
}

impl Cycle {
    /// Add a record to the cycle's next commit.
    pub(crate) fn defer(&mut self, kind: &'static str, body: Value) {
        self.pending.push((kind, body));
    }
}
