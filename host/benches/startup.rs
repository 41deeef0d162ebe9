//! A warm start as users run it: the agent assembled by [`passepartout::agent`] from the
//! built-in plugins under the policy `passepartout init` writes, with a warm compile cache, on
//! an on-disk database; beside its baseline in the same run, the plugin runtime alone (engine, pooling
//! allocator, cache: what every start pays before any plugin). Prints the ratio, and the
//! process's resident memory once the set is loaded (what an idle daemon holds, less the
//! daemon's own listener and tasks).
//!
//! Run: `cargo bench -p passepartout --bench startup`

#[path = "common/estimates.rs"]
mod estimates;

use criterion::Criterion;
use passepartout::agent::Places;
use passepartout::runtime::{Runtime, RuntimeConfig};

/// The process's resident memory, in MiB, from /proc (Linux).
fn rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = std::env::temp_dir().join("passepartout-bench-cache");
    let workspace = dir.path().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    // The plugin directory named below must exist (an explicit one that does not is an error).
    std::fs::create_dir_all(dir.path().join("plugins")).expect("plugin directory");
    std::fs::write(
        dir.path().join("policy.toml"),
        passepartout::policy_edit::starter(&workspace),
    )
    .expect("policy");
    let places = Places {
        plugins: Some(dir.path().join("plugins")),
        policy: Some(dir.path().join("policy.toml")),
        cache: Some(cache.clone()),
        no_cache: false,
        config: Some(dir.path().join("passepartout.toml")),
        db: Some(dir.path().join("passepartout.db")),
        progress: None,
    };
    places.journal().expect("the database");
    // Warm the cache (a first start compiles every plugin), then measure a fresh process's
    // memory after one load.
    let loaded = places.setup().expect("setup").load();
    assert!(
        loaded.report.errors.is_empty(),
        "{:?}",
        loaded.report.errors
    );
    let plugins = loaded.report.plugins.len();
    drop(loaded);
    let rss_loaded = rss_mib();

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("startup");
    group.sample_size(20);
    group.bench_function("runtime-only", |b| {
        b.iter(|| {
            Runtime::new(RuntimeConfig {
                cache_dir: Some(cache.clone()),
                pooling: true,
                ..RuntimeConfig::default()
            })
            .expect("runtime")
        })
    });
    group.bench_function("load-every-built-in-plugin", |b| {
        b.iter(|| {
            let loaded = places.setup().expect("setup").load();
            loaded.assemble(places.journal().expect("journal"), None, Vec::new())
        })
    });
    group.finish();
    c.final_summary();

    let base = estimates::median_ns("startup", "runtime-only");
    let load = estimates::median_ns("startup", "load-every-built-in-plugin");
    println!("\nwarm start, {plugins} built-in plugins, compile cache warm:");
    if let (Some(base), Some(load)) = (base, load) {
        println!(
            "  runtime alone {:>8.1} ms   every plugin loaded and the agent assembled {:>8.1} ms   = {:.1}x",
            base / 1e6,
            load / 1e6,
            load / base
        );
    }
    if let Some(rss) = rss_loaded {
        println!(
            "  resident memory after one load: {rss:.0} MiB (this bench process, criterion included)"
        );
    }
}
