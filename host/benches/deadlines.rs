//! What hard deadlines cost per call: the same plugins, loaded twice in one process — once with
//! [`Deadlines::Epoch`] (synchronous calls that epochs interrupt: the baseline, which cannot cut
//! a guest blocked in a host call) and once with [`Deadlines::Hard`] (async calls on a fiber
//! under a tokio timeout: what the CLI and the daemon run). Measured: a standard gate's check
//! (shell-guard, Rust), the Python gate's check (pii) and a tool call (files, reading a file from
//! its mount through WASI), each in a fresh Store and instance as the pipeline makes them.
//! Prints the ratio hard / epoch.
//!
//! Run: `cargo bench -p passepartout --bench deadlines`

use std::hint::black_box;

#[path = "common/estimates.rs"]
mod estimates;

use criterion::Criterion;
use passepartout::runtime::{Deadlines, Plugin, Policy, Runtime, RuntimeConfig, loader, types};

const MODES: [(&str, Deadlines); 2] = [("epoch", Deadlines::Epoch), ("hard", Deadlines::Hard)];
const GROUPS: [&str; 3] = ["shell-guard-check", "pii-check", "files-read"];

fn action(tool: &str, args: serde_json::Value) -> types::Action {
    types::Action {
        target: "tool".into(),
        tool: Some(tool.into()),
        args: args.to_string(),
        text: None,
        explanation: Some("bench".into()),
    }
}

fn signal() -> types::SignalView {
    types::SignalView {
        kind: "event".into(),
        sensor: Some("user-input".into()),
        text: Some("list my files".into()),
        source: None,
        depth: 0,
        payload: "{}".into(),
    }
}

fn find<'a>(plugins: &'a [Plugin], name: &str) -> &'a Plugin {
    plugins
        .iter()
        .find(|p| p.id.name == name)
        .unwrap_or_else(|| panic!("{name} loads"))
}

fn main() {
    let cache = std::env::temp_dir().join("passepartout-bench-cache");
    let workspace = tempfile::tempdir().expect("workspace");
    std::fs::write(workspace.path().join("notes.txt"), "meeting at ten").expect("write");
    let policy = Policy::parse(&format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = {:?}, access = \"read-only\" }}]\n",
        workspace.path().display().to_string()
    ))
    .expect("policy");
    let loaded: Vec<(&str, Runtime, Vec<Plugin>)> = MODES
        .iter()
        .map(|(label, deadlines)| {
            let runtime = Runtime::new(RuntimeConfig {
                cache_dir: Some(cache.clone()),
                pooling: true,
                deadlines: *deadlines,
                ..RuntimeConfig::default()
            })
            .expect("runtime");
            let report = runtime.load_all(&loader::builtin_sources(), &policy);
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            (*label, runtime, report.plugins)
        })
        .collect();

    let ls = action("shell", serde_json::json!({"command": "ls -la /tmp"}));
    let read = serde_json::json!({"path": "/workspace/notes.txt"}).to_string();
    let signal = signal();
    let mut c = Criterion::default().configure_from_args();
    for group in GROUPS {
        let mut g = c.benchmark_group(group);
        for (label, _, plugins) in &loaded {
            match group {
                "shell-guard-check" => {
                    let gate = find(plugins, "shell-guard");
                    g.bench_function(*label, |b| {
                        b.iter(|| gate.check(black_box(&ls), &signal).expect("check"))
                    });
                }
                "pii-check" => {
                    let gate = find(plugins, "pii");
                    g.bench_function(*label, |b| {
                        b.iter(|| gate.check(black_box(&ls), &signal).expect("check"))
                    });
                }
                _ => {
                    let files = find(plugins, "files");
                    let out = files.call_tool("read-file", &read).expect("read-file");
                    assert!(out.contains("meeting at ten"), "{out}");
                    g.bench_function(*label, |b| {
                        b.iter(|| {
                            files
                                .call_tool("read-file", black_box(&read))
                                .expect("read")
                        })
                    });
                }
            }
        }
        g.finish();
    }
    c.final_summary();
    println!("\nper call, median, hard deadlines against the epoch baseline (same process):");
    for group in GROUPS {
        match (
            estimates::median_ns(group, "epoch"),
            estimates::median_ns(group, "hard"),
        ) {
            (Some(epoch), Some(hard)) => println!(
                "  {group:<18} epoch {:>9.1} µs   hard {:>9.1} µs   = {:.2}x ({:+.1} µs)",
                epoch / 1e3,
                hard / 1e3,
                hard / epoch,
                (hard - epoch) / 1e3
            ),
            _ => println!("  {group}: no estimates (run without --test / filters)"),
        }
    }
}
