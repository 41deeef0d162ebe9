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

/// Stop jemalloc's background threads (the purging goes back to the threads that allocate),
/// so that this process has only the thread that calls this. For the confinement trampoline
/// before it makes a user namespace, which the kernel allows only to a process of one thread.
///
/// # Errors
/// jemalloc refused (it names no reason beyond its error number).
pub fn stop_background_threads() -> std::io::Result<()> {
    let mut off = false;
    // SAFETY: mallctl writes "background_thread" from a bool we own, of the size given; it
    // joins the threads before it returns.
    let rc = unsafe {
        tikv_jemalloc_sys::mallctl(
            c"background_thread".as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            (&raw mut off).cast(),
            std::mem::size_of::<bool>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::from_raw_os_error(rc))
    }
}
