//! The two places where the async request path meets blocking code.
//!
//! - [`in_place`]: the request path is async from the socket to the tool, except where SQLite
//!   demands blocking (approvals, the memory store, the spend log, single journal records;
//!   a Turn's records are awaited from the journal's writer thread instead) and while a
//!   granted program runs. Such work runs in place on the async worker, which
//!   first hands its other tasks to a thread of tokio's blocking pool (bounded: the daemon sets
//!   its size), so one commit never stalls other requests. (A reload, which may wait for
//!   another, gets a blocking-pool thread of its own instead.)
//! - [`wait`]: a one-shot command (or a test) that has no async runtime of its own waits for a
//!   future of the request path on the runtime wasmtime's WASI host already keeps.

use std::future::Future;

use tokio::runtime::{Handle, RuntimeFlavor};

/// Run `work`, which blocks (on SQLite, say), from async code: on a multi-threaded runtime's worker
/// the worker's other tasks move to another thread while it runs; anywhere else (no runtime, a
/// current-thread runtime, a blocking-pool thread) it simply runs.
pub fn in_place<R>(work: impl FnOnce() -> R) -> R {
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// Wait for `future` from synchronous code (a one-shot command, a test, a blocking-pool
/// thread): on the current runtime when the thread has one, else on a shared multi-threaded
/// runtime.
///
/// # Panics
/// When called from inside an async task (a runtime's worker): await the future there instead.
pub fn wait<F: Future>(future: F) -> F::Output {
    wasmtime_wasi::runtime::in_tokio(future)
}
