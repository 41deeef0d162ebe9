//! Rust projects: the SDK's sources and the WIT beside the plugin (a path dependency), built by
//! cargo for wasm32-wasip2 in one target directory shared by every project.

use std::path::Path;
use std::process::Command;

use super::{AuthoringError, Kind, SDK_DEPENDENCIES, SDK_FILES, WORKSPACE_LOCK};

/// What `plugin build` adds to the project's cargo configuration: 1 MiB of heap in the memory
/// the plugin starts with. wasm-ld gives it exactly its data and stack, so the first
/// allocations of every call grow it, and the runtime's instance pool then changes the memory's
/// protection twice per call (the shrink flushes every core's TLB): ~7% of a loaded daemon's
/// CPU for one gate that did (docs/performance.md). The first-party plugins are built so too
/// (`host/build/guests.rs`).
const INITIAL_HEAP: &str = "target.wasm32-wasip2.rustflags=[\"-Clink-arg=--initial-heap=1048576\"]";

/// The files of a new Rust project (all but `cases.json`).
pub(super) fn files(name: &str, kind: Kind) -> Vec<(String, String)> {
    let crate_name = name.replace('-', "_");
    let mut files: Vec<(String, String)> = SDK_FILES
        .iter()
        .map(|(path, text)| ((*path).to_owned(), (*text).to_owned()))
        .collect();
    files.push((
        "sdk/passepartout-sdk/Cargo.toml".into(),
        format!(
            "[package]\nname = \"passepartout-sdk\"\nversion = \"{}\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\n{SDK_DEPENDENCIES}",
            env!("CARGO_PKG_VERSION")
        ),
    ));
    files.push((
        "Cargo.toml".into(),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[lib]\ncrate-type = [\"cdylib\"]\n\n[dependencies]\npassepartout-sdk = {{ path = \"sdk/passepartout-sdk\" }}\n\n# Its own workspace: it builds wherever the folder sits.\n[workspace]\n"
        ),
    ));
    // The versions this release was built and tested with (cargo drops what the project does
    // not use on its first build).
    files.push(("Cargo.lock".into(), WORKSPACE_LOCK.to_owned()));
    files.push((".gitignore".into(), "/target\n*.wasm\n".into()));
    let source = match kind {
        Kind::Gate => include_str!("templates/gate.rs"),
        Kind::Tool => include_str!("templates/tool.rs"),
        Kind::Skill => include_str!("templates/skill.rs"),
    };
    files.push(("src/lib.rs".into(), source.to_owned()));
    files.push((
        "plugin.toml".into(),
        super::manifest(name, kind, &format!("{crate_name}.wasm")),
    ));
    files
}

/// `cargo build` for wasm32-wasip2 in `dir`, in `target_dir`; the component is copied to
/// `dir/component`.
pub(super) fn build(dir: &Path, target_dir: &Path, component: &str) -> Result<(), AuthoringError> {
    // In the project, so that its own rust-toolchain.toml and .cargo/config.toml apply.
    let installed = Command::new("rustup")
        .current_dir(dir)
        .args(["target", "list", "--installed"])
        .output();
    match installed {
        Ok(out) if String::from_utf8_lossy(&out.stdout).contains("wasm32-wasip2") => {}
        Ok(_) => {
            return Err(AuthoringError::Missing {
                what: "the wasm32-wasip2 target".into(),
                how: "rustup target add wasm32-wasip2".into(),
            });
        }
        Err(_) => {
            return Err(AuthoringError::Missing {
                what: "rustup".into(),
                how: "install Rust from https://rustup.rs, then `rustup target add wasm32-wasip2`"
                    .into(),
            });
        }
    }
    let status = Command::new("cargo")
        .current_dir(dir)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "--config",
            INITIAL_HEAP,
        ])
        .env("CARGO_TARGET_DIR", target_dir)
        .status()
        .map_err(|e| AuthoringError::Missing {
            what: format!("cargo ({e})"),
            how: "install Rust from https://rustup.rs".into(),
        })?;
    if !status.success() {
        return Err(AuthoringError::Build(format!(
            "cargo exited with {status} (its messages are above)"
        )));
    }
    let built = target_dir.join("wasm32-wasip2/release").join(component);
    let into = dir.join(component);
    std::fs::copy(&built, &into)
        .map(|_| ())
        .map_err(|source| AuthoringError::Io {
            path: built.clone(),
            source,
        })
}
