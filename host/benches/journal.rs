//! Where a direct action's time goes on the journal users run: the on-disk SQLite journal,
//! beside the in-memory one in the same run (the ratio is the journal's cost).
//!
//! 1. `append`: one record, one thread, on disk vs in memory; then records per second from 1,
//!    8 and 64 threads appending at once (concurrent appends are what group commit joins).
//! 2. A direct `eval` action through every standard gate, in-process, from 1, 10 and 100
//!    threads at once, on disk vs in memory.
//!
//! Run: `cargo bench -p passepartout --bench journal`

use std::sync::Arc;
use std::time::Instant;

use criterion::Criterion;
use passepartout::journal::Journal;
use passepartout::pipeline::{Agent, PipelineConfig};
use passepartout::runtime::{Policy, Runtime, RuntimeConfig, loader};
use passepartout::signal::Signal;
use serde_json::json;

fn pipeline(journal: Journal) -> Agent {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(std::env::temp_dir().join("passepartout-bench-cache")),
        pooling: true,
        ..RuntimeConfig::default()
    })
    .expect("runtime");
    let report = runtime.load_all(&loader::builtin_sources(), &Policy::default());
    Agent::new(report.plugins, journal, PipelineConfig::default()).expect("pipeline")
}

fn act(n: u64) -> Signal {
    Signal::request(
        serde_json::from_value(
            json!({ "tool": "eval", "args": { "expression": format!("(+ {n} 1)") } }),
        )
        .expect("an action"),
        Default::default(),
    )
}

/// Run `per_thread` calls of `f` on each of `threads` threads at once: calls per second.
fn rate(threads: usize, per_thread: usize, f: &(dyn Fn(u64) + Sync)) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for i in 0..threads {
            s.spawn(move || {
                for j in 0..per_thread {
                    f((i * per_thread + j) as u64);
                }
            });
        }
    });
    (threads * per_thread) as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let disk = Arc::new(Journal::open(&dir.path().join("bench.db")).expect("journal"));
    let memory = Arc::new(Journal::in_memory().expect("journal"));
    let record = json!({ "tool": "eval", "result": "42", "ok": true });

    let mut c = Criterion::default().configure_from_args();
    let mut g = c.benchmark_group("journal-append");
    g.bench_function("in-memory", |b| b.iter(|| memory.append("bench", &record)));
    g.bench_function("on-disk", |b| b.iter(|| disk.append("bench", &record)));
    g.finish();
    c.final_summary();

    println!("\njournal append, records per second (on disk / in memory)");
    for threads in [1, 8, 64] {
        let per = 4000 / threads;
        let m = rate(threads, per, &|_| {
            memory.append("bench", &record).expect("append");
        });
        let d = rate(threads, per, &|_| {
            disk.append("bench", &record).expect("append");
        });
        println!(
            "  {threads:>3} thread(s): on disk {d:>8.0}/s  in memory {m:>8.0}/s  ({:.2}x)",
            d / m
        );
    }
    assert!(
        matches!(disk.verify(), Ok(Ok(_))),
        "the chain holds under concurrency"
    );

    let on_disk = pipeline(Journal::open(&dir.path().join("actions.db")).expect("journal"));
    let in_memory = pipeline(Journal::in_memory().expect("journal"));
    println!("\ndirect eval action through the standard gates, in-process (on disk / in memory)");
    for threads in [1, 10, 100] {
        let per = 1000 / threads;
        let m = rate(threads, per, &|n| {
            passepartout::blocking::wait(in_memory.run(act(n)));
        });
        let d = rate(threads, per, &|n| {
            passepartout::blocking::wait(on_disk.run(act(n)));
        });
        println!(
            "  {threads:>3} thread(s): on disk {d:>7.0}/s  in memory {m:>7.0}/s  ({:.2}x)",
            d / m
        );
    }
}
