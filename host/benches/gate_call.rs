//! The shell-guard gate three ways, in one process: as a native Rust function (the very same
//! code, linked natively), as a WASM component in a reused instance, and as a WASM component
//! in a fresh Store and instance per call (what the pipeline does). Then the Python gate (pii,
//! componentize-py) in a reused and in a fresh instance. Prints the ratios.
//!
//! Run: `cargo bench -p passepartout --bench gate_call`; with `GATES=<plugin dir>`, each gate
//! there is timed too (see [`extra_gates`]).

use std::hint::black_box;

#[path = "common/estimates.rs"]
mod estimates;

use criterion::Criterion;
use passepartout::runtime::{Policy, Runtime, RuntimeConfig, loader, types};

/// (label, command). `None` is an action with no command at all (a reply): what is left is
/// the cost of the call itself.
const COMMANDS: &[(&str, Option<&str>)] = &[
    ("no-command", None),
    ("harmless", Some("ls -la /tmp && grep -r TODO src")),
    ("dangerous", Some("sudo bash -c 'rm -rf /'")),
];

fn args(command: Option<&str>) -> String {
    command.map_or_else(
        || "{}".to_owned(),
        |c| serde_json::json!({ "command": c }).to_string(),
    )
}

/// Calls one reused `pii` instance serves in the benchmark before a new one is made.
const PII_REUSES: u64 = 1_000;

fn host_action(command: Option<&str>) -> types::Action {
    types::Action {
        target: if command.is_some() { "tool" } else { "chat" }.into(),
        tool: command.map(|_| "shell".into()),
        args: args(command),
        text: None,
        explanation: None,
    }
}

fn host_signal() -> types::SignalView {
    types::SignalView {
        kind: "event".into(),
        sensor: Some("user-input".into()),
        text: None,
        source: None,
        depth: 0,
        payload: "{}".into(),
    }
}

fn native_check(command: Option<&str>) -> passepartout_sdk::Verdict {
    use passepartout_sdk::Gate;
    let action = passepartout_sdk::Action {
        target: if command.is_some() { "tool" } else { "chat" }.into(),
        tool: command.map(|_| "shell".into()),
        args: args(command),
        text: None,
        explanation: None,
    };
    let signal = passepartout_sdk::SignalView {
        kind: "event".into(),
        sensor: Some("user-input".into()),
        text: None,
        source: None,
        depth: 0,
        payload: "{}".into(),
    };
    shell_guard::ShellGuard::check(action, signal)
}

fn main() {
    let cache = std::env::temp_dir().join("passepartout-bench-cache");
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache),
        pooling: true,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let report = runtime.load_all(&loader::builtin_sources(), &Policy::default());
    let guard = report
        .plugins
        .iter()
        .find(|p| p.id.name == "shell-guard")
        .expect("shell-guard loads");
    let mut live = guard.live_gate().expect("instance");
    let signal = host_signal();

    let mut c = Criterion::default().configure_from_args();
    for (label, command) in COMMANDS {
        let action = host_action(*command);
        // The three must agree before their speed means anything.
        let native = native_check(*command);
        let wasm = guard.check(&action, &signal).expect("check");
        assert_eq!(
            format!("{native:?}"),
            format!("{wasm:?}"),
            "native and WASM verdicts differ"
        );

        let mut group = c.benchmark_group(format!("shell-guard/{label}"));
        group.bench_function("native", |b| b.iter(|| native_check(black_box(*command))));
        group.bench_function("wasm-reused-instance", |b| {
            b.iter(|| live.check(black_box(&action), &signal).expect("check"))
        });
        group.bench_function("wasm-fresh-instance", |b| {
            b.iter(|| guard.check(black_box(&action), &signal).expect("check"))
        });
        group.finish();
    }
    let pii = report
        .plugins
        .iter()
        .find(|p| p.id.name == "pii")
        .expect("pii loads");
    let action = host_action(COMMANDS[1].1);
    let mut group = c.benchmark_group("pii");
    // One instance serves at most PII_REUSES calls, then another is made (outside the timing):
    // what the imports hand a componentize-py guest each call (the action context) is not all
    // given back, so a long-reused instance runs out of its 32 MiB (the daemon never reuses
    // one: every call is a fresh instance).
    group.bench_function("wasm-reused-instance", |b| {
        b.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            let mut live = pii.live_gate().expect("instance");
            for i in 1..=iters {
                if i % PII_REUSES == 0 {
                    live = pii.live_gate().expect("instance");
                }
                let started = std::time::Instant::now();
                live.check(black_box(&action), &signal).expect("check");
                spent += started.elapsed();
            }
            spent
        })
    });
    group.bench_function("wasm-fresh-instance", |b| {
        b.iter(|| pii.check(black_box(&action), &signal).expect("check"))
    });
    group.finish();
    extra_gates(&runtime, &mut c, &action, &signal);
    c.final_summary();
    print_ratios();
}

/// With `GATES=<dir>` (a plugin directory, `<dir>/<name>/plugin.toml` beside its component),
/// each gate there is called too, on the action `pii` gets, in a fresh instance per call: how
/// two builds of a gate compare, in one process on one machine phase.
fn extra_gates(
    runtime: &Runtime,
    c: &mut Criterion,
    action: &types::Action,
    signal: &types::SignalView,
) {
    // A bench setting, not the daemon's: read here, as criterion reads its own arguments.
    #[allow(clippy::disallowed_methods)]
    let Some(dir) = std::env::var_os("GATES") else {
        return;
    };
    let sources = loader::dir_sources(std::path::Path::new(&dir), &Default::default());
    let report = runtime.load_all(&sources, &Policy::default());
    for error in report.errors.iter().chain(&report.disabled) {
        eprintln!("not loaded: {error}");
    }
    let mut group = c.benchmark_group("gates");
    for gate in &report.plugins {
        group.bench_function(format!("{}/wasm-fresh-instance", gate.id.name), |b| {
            b.iter(|| gate.check(black_box(action), signal).expect("check"))
        });
    }
    group.finish();
}

/// Read criterion's estimates back and print each WASM variant against the native baseline.
fn print_ratios() {
    let mean = estimates::median_ns;
    println!("\nshell-guard check, median time per call and ratio to native:");
    for (label, _) in COMMANDS {
        let group = format!("shell-guard_{label}");
        let Some(native) = mean(&group, "native") else {
            println!("  {label}: no estimates (run without --test / filters)");
            continue;
        };
        println!("  {label:<10} native                {:>10.0} ns", native);
        for id in ["wasm-reused-instance", "wasm-fresh-instance"] {
            if let Some(t) = mean(&group, id) {
                println!(
                    "  {label:<10} {id:<21} {:>10.0} ns  = {:>6.1}x native",
                    t,
                    t / native
                );
            }
        }
    }
    if let (Some(reused), Some(fresh)) = (
        mean("pii", "wasm-reused-instance"),
        mean("pii", "wasm-fresh-instance"),
    ) {
        println!("\npii (Python) check, median time per call:");
        println!("  reused instance {reused:>10.0} ns");
        println!(
            "  fresh instance  {fresh:>10.0} ns  = {:>6.1}x reused",
            fresh / reused
        );
    }
}
