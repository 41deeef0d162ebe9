//! Reading criterion's results back, so that a benchmark can print its ratios to the baseline
//! it ran beside. Shared by the benchmarks with `#[path]`.

use std::path::Path;

/// The median time, in nanoseconds, criterion recorded for `id` in `group` (the directory
/// names criterion uses: `/` becomes `_`), or `None` when it did not run.
#[allow(
    clippy::disallowed_methods,
    reason = "cargo's own variable, in a bench"
)]
pub fn median_ns(group: &str, id: &str) -> Option<f64> {
    let root = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("criterion");
    let path = root.join(group).join(id).join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    v["median"]["point_estimate"].as_f64()
}
