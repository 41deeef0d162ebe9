//! Verify with the five standard gates (shell-guard, secrets, explanation, approval, pii), as
//! the daemon runs it: every gate in a fresh instance, the action's effects derived from the
//! first-party tools' schemas and handed to each gate, the walk restarted on a rewrite.
//!
//! The baseline, in the same process: the same five gates each called once on the same action
//! with no action context: the work of the single-walk verify this wave replaced. The ratio is
//! what the invariant and the effects cost per action.
//!
//! Run: `cargo bench -p passepartout --bench verify`

use std::hint::black_box;
use std::sync::Arc;

#[path = "common/estimates.rs"]
mod estimates;

use criterion::Criterion;
use passepartout::journal::Journal;
use passepartout::pipeline::{Agent, PipelineConfig};
use passepartout::runtime::{Kind, Policy, Runtime, RuntimeConfig, loader};
use passepartout::signal::{Action, Meta, Signal};

const ACTIONS: &[(&str, &str)] = &[
    (
        "shell-ls",
        r#"{"tool":"shell","args":{"program":"ls","args":["-la","/workspace"]},"explanation":"see what is there"}"#,
    ),
    (
        "write-file",
        r#"{"tool":"write-file","args":{"path":"/workspace/notes.txt","content":"meeting at ten, bring the draft"},"explanation":"save the user's note"}"#,
    ),
    ("reply", r#"{"target":"cli","text":"The answer is 42."}"#),
];

fn main() {
    let cache = std::env::temp_dir().join("passepartout-bench-cache");
    let workspace = tempfile::tempdir().expect("workspace");
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(cache),
        pooling: true,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let policy = Policy::parse(&format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = {0:?}, access = \"read-write\" }}]\n\
         [plugins.shell]\nprocess = [\"ls\"]\nfs = [{{ guest = \"/workspace\", host = {0:?}, access = \"read-write\" }}]\n",
        workspace.path().display().to_string()
    ))
    .expect("policy");
    let report = runtime.load_all(&loader::builtin_sources(), &policy);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.missing_gates.is_empty());
    let pipeline = Agent::from_report(
        report,
        Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline");
    let gates: Vec<_> = pipeline
        .plugins()
        .iter()
        .filter(|p| p.is(Kind::Gate))
        .cloned()
        .collect();
    assert_eq!(gates.len(), 5, "the five standard gates");
    let signal = Signal::request(
        passepartout::signal::Action::default(),
        Meta::from_source("cli"),
    );
    let view = signal.view();

    let mut c = Criterion::default().configure_from_args();
    for (label, text) in ACTIONS {
        let mut action = Action::from_json(text).expect("action");
        action.resolve_target(Some("cli"), "cli");
        let wit = action.to_wit();
        let mut group = c.benchmark_group(format!("verify/{label}"));
        group.bench_function("five-gates-once-no-context", |b| {
            b.iter(|| {
                for g in &gates {
                    black_box(g.check(black_box(&wit), &view).ok());
                }
            })
        });
        group.bench_function("verify-with-effects", |b| {
            b.iter(|| {
                black_box(passepartout::blocking::wait(
                    pipeline.verify(black_box(&action), &signal),
                ))
            })
        });
        group.bench_function("derive-context-only", |b| {
            b.iter(|| black_box(Arc::new(pipeline.catalog().context(black_box(&action)))))
        });
        group.finish();
    }
    c.final_summary();
    println!("\nverify with the five standard gates, median per action:");
    for (label, _) in ACTIONS {
        let group = format!("verify_{label}");
        let base = estimates::median_ns(&group, "five-gates-once-no-context");
        let now = estimates::median_ns(&group, "verify-with-effects");
        let ctx = estimates::median_ns(&group, "derive-context-only");
        match (base, now) {
            (Some(base), Some(now)) => println!(
                "  {label:<11} baseline {:>9.1} us   verify {:>9.1} us   = {:>5.2}x   (context {:.2} us)",
                base / 1e3,
                now / 1e3,
                now / base,
                ctx.unwrap_or(f64::NAN) / 1e3
            ),
            _ => println!("  {label}: no estimates (run without --test / filters)"),
        }
    }
}
