//! The WASI a gate gets: none of any use. An empty environment (no variables, no arguments, no
//! working directory) and a stderr the host keeps, so that a language runtime's own panic
//! output (Rust's std hook asks for `RUST_BACKTRACE`, then writes the message to stderr) ends
//! up in the error instead of a trap on the first call. Everything else a gate imports traps
//! ([`crate::runtime::stubs`]). No clock, no randomness, no file, no socket: a gate stays a
//! pure function of the action.

use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::{WasiCli, WasiCliView};

use crate::runtime::state::GateData;

/// The interfaces linked here (any 0.2 release), which the trap stubs must leave alone.
pub const LINKED: &[&str] = &[
    "wasi:cli/environment@0.2.",
    "wasi:cli/stderr@0.2.",
    "wasi:io/error@0.2.",
    "wasi:io/poll@0.2.",
    "wasi:io/streams@0.2.",
];

struct Io;

impl HasData for Io {
    type Data<'a> = &'a mut ResourceTable;
}

/// Link a gate's empty environment and kept stderr into `linker`, for async calls (`hard`) or
/// synchronous ones.
///
/// # Errors
/// The linker refuses a definition (a wasmtime bug).
pub fn add(linker: &mut Linker<GateData>, hard: bool) -> wasmtime::Result<()> {
    use wasmtime_wasi::p2::bindings::{cli, sync};
    let l = linker;
    cli::environment::add_to_linker::<GateData, WasiCli>(l, GateData::cli)?;
    cli::stderr::add_to_linker::<GateData, WasiCli>(l, GateData::cli)?;
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<GateData, Io>(l, |t| {
        t.ctx().table
    })?;
    if hard {
        wasmtime_wasi_io::bindings::wasi::io::poll::add_to_linker::<GateData, Io>(l, |t| {
            t.ctx().table
        })?;
        wasmtime_wasi_io::bindings::wasi::io::streams::add_to_linker::<GateData, Io>(l, |t| {
            t.ctx().table
        })?;
    } else {
        sync::io::poll::add_to_linker::<GateData, Io>(l, |t| t.ctx().table)?;
        sync::io::streams::add_to_linker::<GateData, Io>(l, |t| t.ctx().table)?;
    }
    Ok(())
}
