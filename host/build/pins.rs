//! The toolchain pins in `.ci/toolchains` (`name=version` lines, `#` comments), shared by the
//! host's and the tests' build scripts and sourced by `.ci/run`, so they cannot drift.

use std::path::Path;

/// The version `.ci/toolchains` pins `name` to (the workspace is the building crate's parent).
pub fn pin(name: &str) -> String {
    let crate_dir = std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let file = Path::new(&crate_dir).join("../.ci/toolchains");
    println!("cargo:rerun-if-changed={}", file.display());
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .find_map(|l| l.split_once('=').filter(|(k, _)| k.trim() == name))
        .map(|(_, v)| v.trim().to_owned())
        .unwrap_or_else(|| panic!("{} pins no {name}", file.display()))
}
