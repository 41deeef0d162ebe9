//! Build guest crates of this workspace for `wasm32-wasip2`, as wasmtime's test-programs do:
//! a nested `cargo build` with its own target directory. Shared by the build scripts of `host/`
//! (the first-party plugins) and `tests/` (the hostile test plugins).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The WASI target every guest is built for.
pub const TARGET: &str = "wasm32-wasip2";

/// The flags every guest is built with, as `CARGO_ENCODED_RUSTFLAGS` (flags separated by 0x1f):
/// 1 MiB of initial heap.
const GUEST_RUSTFLAGS: &str = "-Clink-arg=--initial-heap=1048576";

/// Build `packages` (workspace members) with the `guest` profile. Returns, per package, the path
/// of its component. Panics with an actionable message when that is impossible: a build script
/// has no other way to fail.
pub fn build(workspace: &Path, packages: &[&str]) -> Vec<(String, PathBuf)> {
    check_target_installed();
    // One guest target directory for the whole workspace, so that host/ and tests/ share the
    // compiled SDK; cargo's own lock serialises the two build scripts.
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"))
        .join("guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args([
            "build",
            "--profile",
            "guest",
            "--target",
            TARGET,
            "--target-dir",
        ])
        .arg(&target_dir);
    for p in packages {
        cmd.args(["-p", p]);
    }
    // What the outer build sets for the host must not leak into the guests' build.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    // Room for the heap in the memory a guest starts with. wasm-ld makes it exactly the data
    // and the stack, so a call allocating past the last page's slack grows it, and wasmtime's
    // pooling allocator then changes the slot's protection twice (grown in the call, shrunk
    // back at the next instantiation; the shrink flushes the TLB of every core): shell-guard
    // grew 17 -> 18 pages per call, ~7% of the daemon's CPU under load. Pages never touched
    // cost no memory, and the memory cap counts them as before.
    cmd.env("CARGO_ENCODED_RUSTFLAGS", GUEST_RUSTFLAGS);
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("could not run cargo to build the guest plugins: {e}"));
    assert!(
        status.success(),
        "building the guest plugins {packages:?} for {TARGET} failed (see the cargo output above)"
    );
    packages
        .iter()
        .map(|p| {
            let wasm = target_dir
                .join(TARGET)
                .join("guest")
                .join(format!("{}.wasm", p.replace('-', "_")));
            assert!(
                wasm.exists(),
                "the build of {p} did not produce {}",
                wasm.display()
            );
            ((*p).to_owned(), wasm)
        })
        .collect()
}

fn check_target_installed() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()));
    let installed =
        sysroot.is_some_and(|s| s.join("lib/rustlib").join(TARGET).join("lib").is_dir());
    if !installed {
        panic!(
            "\n\nThe Rust target {TARGET} is not installed, and Passepartout's plugins are built \
             for it.\nRun:\n\n    rustup target add {TARGET}\n\nthen build again.\n\n"
        );
    }
}

/// Ask cargo to rerun the build script when anything under `paths` changes.
pub fn rerun_if_changed(workspace: &Path, paths: &[&str]) {
    for p in paths {
        println!("cargo:rerun-if-changed={}", workspace.join(p).display());
    }
}
