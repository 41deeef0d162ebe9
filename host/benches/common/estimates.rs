//! Reading criterion's results back, so that a benchmark can print its ratios to the baseline
//! it ran beside. Shared by the benchmarks with `#[path]`.

use std::path::Path;

/// The median time, in nanoseconds, criterion recorded for `id` in `group` (the directory
/// names criterion uses: `/` becomes `_`), or `None` when it did not run.
///
/// Read where criterion writes: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else the
/// workspace's `target/criterion` (under `cargo bench`), else `./target/criterion` (a bench
/// binary run by hand, as criterion does without cargo).
#[allow(
    clippy::disallowed_methods,
    reason = "criterion's and cargo's own variables, in a bench"
)]
pub fn median_ns(group: &str, id: &str) -> Option<f64> {
    let roots = [
        std::env::var_os("CRITERION_HOME").map(std::path::PathBuf::from),
        std::env::var_os("CARGO_TARGET_DIR").map(|d| Path::new(&d).join("criterion")),
        std::env::var_os("CARGO")
            .map(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion")),
        Some(Path::new("target/criterion").to_path_buf()),
    ];
    let path = roots
        .into_iter()
        .flatten()
        .map(|root| root.join(group).join(id).join("new/estimates.json"))
        .find(|p| p.is_file())?;
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v["median"]["point_estimate"].as_f64()
}
