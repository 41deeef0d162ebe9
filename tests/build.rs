//! Builds the test-only plugins under tests/plugins/ for wasm32-wasip2 and tells the tests
//! where they are (as wasmtime's test-programs-artifacts does).

#[path = "../host/build/guests.rs"]
mod guests;

use std::path::Path;

const TEST_PLUGINS: &[&str] = &[
    "hostile-tool",
    "hostile-gate",
    "echo-skill",
    "future-gate",
    "pii-twin",
    "old-gate",
    "readme-gate",
];

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let workspace = Path::new(&manifest_dir)
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf();
    guests::rerun_if_changed(
        &workspace,
        &[
            "tests/plugins",
            "skills-sdk",
            "wit",
            "Cargo.lock",
            "Cargo.toml",
        ],
    );
    for (name, wasm) in guests::build(&workspace, TEST_PLUGINS) {
        let var = name.to_uppercase().replace('-', "_");
        println!("cargo:rustc-env={var}_WASM={}", wasm.display());
        println!(
            "cargo:rustc-env={var}_MANIFEST={}",
            workspace
                .join("tests/plugins")
                .join(&name)
                .join("plugin.toml")
                .display()
        );
    }
}
