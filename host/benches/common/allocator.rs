//! The allocator the `passepartout` binary uses (host/src/main.rs), so that what a bench
//! measures in-process allocates as the daemon does. Shared by the benchmarks with `#[path]`.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
