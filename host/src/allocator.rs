//! The process's allocator: jemalloc, for every binary that links this library (the
//! `passepartout` command, its tests and benches alike, so each measures what users run).
//!
//! glibc's malloc and free cost 10–17% of a busy daemon's CPU (docs/performance.md). jemalloc
//! shares a fixed number of arenas among threads (four per core), so a worker that served a
//! flooding client leaves no heap of its own behind, and a background thread hands freed pages
//! back to the kernel on a short delay, so resident memory falls once a burst is over.

/// The allocator itself.
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once when it starts (`man jemalloc`, "TUNING"): freed pages are
/// handed back on a background thread within a second (dirty), at once once purged (muzzy),
/// rather than after the default 10 s; no transparent huge pages for its metadata, which would
/// make an idle daemon's resident set megabytes larger.
#[unsafe(export_name = "_rjem_malloc_conf")]
#[used]
static MALLOC_CONF: &u8 =
    &b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,metadata_thp:disabled\0"[0];
