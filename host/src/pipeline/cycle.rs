//! One cycle's own state, owned by the run that drives it and lent to Act: what the cycle can
//! undo. Runs on many threads (or tasks) at once never see each other's, whichever thread a
//! cycle happens to finish on.

use crate::memory::Snapshot;

/// What one cycle of the loop (Perceive, Reason, Act) carries from Act back to its driver.
#[derive(Debug, Default)]
pub struct Cycle {
    /// The snapshot taken before a tool that is not read-only ran, and the memory root the tool
    /// left: a cycle that fails afterwards rolls memory back to it (if nothing else wrote since).
    pub(crate) undo: Option<(Snapshot, String)>,
}
