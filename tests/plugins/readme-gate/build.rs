//! Extract the first ```rust block under "## Writing a plugin" in README.md into OUT_DIR, so
//! that the crate compiles exactly what the README shows.

use std::path::Path;

fn main() {
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let readme = Path::new(&manifest_dir).join("../../../README.md");
    println!("cargo:rerun-if-changed={}", readme.display());
    let text = std::fs::read_to_string(&readme).expect("README.md is readable");
    let section = text
        .split("## Writing a plugin")
        .nth(1)
        .expect("README.md has a \"## Writing a plugin\" section");
    let code = section
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the section has a ```rust block");
    let out =
        Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("readme_gate.rs");
    std::fs::write(out, code).expect("write the extracted example");
}
