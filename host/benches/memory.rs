//! The memory store on a generated corpus: ingest rate (headlines per second, beside the rate
//! on the real Org files of tests/fixtures/org-corpus) and query latency at 100k headlines; snapshot and rollback at 1k and at 100k headlines in one run,
//! beside the seed's way (a deep copy of every node) as the baseline. Prints the ratios.
//!
//! Run: `cargo bench -p passepartout --bench memory`

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

#[path = "common/estimates.rs"]
mod estimates;

use criterion::{BatchSize, Criterion};
use passepartout::memory::{IngestOptions, Memory, MemoryConfig, Query};

/// Write `files` Org files holding `headlines` headlines in all: projects with tasks and notes
/// three levels deep, tags, TODO states and property drawers.
fn corpus(dir: &Path, files: usize, headlines: usize) {
    let per_file = headlines / files;
    for f in 0..files {
        let mut text = format!("#+TITLE: File {f}\n#+TODO: TODO NEXT WAITING | DONE\n\n");
        let mut n = 0;
        while n < per_file {
            let done = n % 7 == 0;
            text.push_str(&format!(
                "* {} Project {f}-{n} :project:area{}:\n:PROPERTIES:\n:ID: p-{f}-{n}\n:OWNER: owner{}\n:END:\nWhat this project is about.\n",
                if done { "DONE" } else { "TODO" },
                n % 5,
                n % 11
            ));
            n += 1;
            for t in 0..8 {
                if n >= per_file {
                    break;
                }
                text.push_str(&format!(
                    "** {} Task {t} of {f}-{n}\nSome notes on the task.\n",
                    ["TODO", "NEXT", "DONE", "WAITING"][t % 4]
                ));
                n += 1;
                if t % 2 == 0 && n < per_file {
                    text.push_str("*** A note :note:\nDetails.\n");
                    n += 1;
                }
            }
        }
        std::fs::write(dir.join(format!("f{f:04}.org")), text).expect("write corpus");
    }
}

fn store_of(dir: &Path, db: &Path) -> Memory {
    let m = Memory::open(db, MemoryConfig::default()).expect("store");
    let r = m.ingest(dir, &IngestOptions::default()).expect("ingest");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    m
}

fn main() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let small_dir = tmp.path().join("1k");
    let big_dir = tmp.path().join("100k");
    std::fs::create_dir_all(&small_dir).expect("mkdir");
    std::fs::create_dir_all(&big_dir).expect("mkdir");
    corpus(&small_dir, 10, 1_000);
    corpus(&big_dir, 100, 100_000);
    let small = store_of(&small_dir, &tmp.path().join("small.db"));
    let big = store_of(&big_dir, &tmp.path().join("big.db"));
    let mut count = 0;
    big.walk(|_, _, _| {
        count += 1;
        true
    })
    .expect("walk");
    println!("corpus: {count} nodes under the 100k root (headlines + files)");

    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    // Each ingest into a fresh database on disk, as users run it; the store and its directory
    // are returned, so that closing and deleting them is not timed.
    let fresh_store = || {
        let dir = tempfile::tempdir_in(tmp.path()).expect("temp dir");
        let m =
            Memory::open(&dir.path().join("memory.db"), MemoryConfig::default()).expect("store");
        (dir, m)
    };
    c.bench_function("memory/ingest-100k-headlines", |b| {
        b.iter_batched(
            fresh_store,
            |(dir, m)| {
                let r = m
                    .ingest(&big_dir, &IngestOptions::default())
                    .expect("ingest");
                (dir, m, r)
            },
            BatchSize::PerIteration,
        )
    });
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/org-corpus");
    let first = fresh_store()
        .1
        .ingest(&real, &IngestOptions::default())
        .expect("ingest");
    let real_size = (
        first.headlines,
        first.files,
        org_bytes(&real),
        org_bytes(&big_dir),
    );
    c.bench_function("memory/ingest-real-corpus", |b| {
        b.iter_batched(
            fresh_store,
            |(dir, m)| {
                let r = m.ingest(&real, &IngestOptions::default()).expect("ingest");
                (dir, m, r)
            },
            BatchSize::PerIteration,
        )
    });
    let mut c = c.sample_size(30).measurement_time(Duration::from_secs(5));
    let mut q = c.benchmark_group("memory/query-100k");
    q.bench_function("tag-project-limit-100", |b| {
        let query = Query {
            tag: Some("project".into()),
            ..Query::default()
        };
        b.iter(|| big.query(black_box(&query)).expect("query"))
    });
    q.bench_function("property-owner-all", |b| {
        let query = Query {
            property: Some(("OWNER".into(), "owner3".into())),
            limit: Some(usize::MAX),
            ..Query::default()
        };
        b.iter(|| big.query(black_box(&query)).expect("query"))
    });
    q.bench_function("text-no-match-all", |b| {
        let query = Query {
            text: Some("nowhere to be found".into()),
            limit: Some(usize::MAX),
            ..Query::default()
        };
        b.iter(|| big.query(black_box(&query)).expect("query"))
    });
    q.bench_function("get-last-id", |b| {
        b.iter(|| big.get(black_box("p-99-999")).expect("get"))
    });
    // The baseline: what `get` did before the indexes, a walk from the head.
    q.bench_function("get-last-id-by-walk", |b| {
        b.iter(|| {
            let mut found = None;
            big.walk(|node, hash, _| {
                if node.id == black_box("p-99-999") {
                    found = Some(hash.to_owned());
                }
                found.is_none()
            })
            .expect("walk");
            found
        })
    });
    q.bench_function("awareness-4k", |b| {
        b.iter(|| big.awareness(black_box(4000)).expect("outline"))
    });
    // What the indexes cost: every edit makes a new root, whose first query walks it once.
    let mut n = 0u64;
    q.bench_function("edit-then-get", |b| {
        b.iter(|| {
            n += 1;
            big.set_property("p-1-0", "BENCH", &n.to_string())
                .expect("set");
            big.get(black_box("p-99-999")).expect("get")
        })
    });
    q.bench_function("edit-only", |b| {
        b.iter(|| {
            n += 1;
            big.set_property("p-1-0", "BENCH", &n.to_string())
                .expect("set")
        })
    });
    q.finish();

    for (label, m) in [("1k", &small), ("100k", &big)] {
        let mut g = c.benchmark_group(format!("memory/{label}"));
        g.bench_function("snapshot", |b| {
            b.iter(|| m.snapshot(black_box("bench")).expect("snapshot"))
        });
        let a = m.snapshot("a").expect("snapshot");
        m.set_property("p-0-0", "BENCH", "1").expect("set");
        let z = m.snapshot("b").expect("snapshot");
        let mut flip = false;
        g.bench_function("rollback", |b| {
            b.iter(|| {
                flip = !flip;
                m.restore(black_box(if flip { &a } else { &z }))
                    .expect("rollback")
            })
        });
        // The seed's snapshot: a deep copy of every node.
        g.bench_function("seed-deep-copy", |b| {
            b.iter(|| {
                let mut copy = Vec::new();
                m.walk(|node, _, _| {
                    copy.push((**node).clone());
                    true
                })
                .expect("walk");
                copy
            })
        });
        g.finish();
    }
    c.final_summary();
    print_ratios(real_size);
}

/// The bytes of the `*.org` files under `dir`.
fn org_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).expect("read dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            total += org_bytes(&p);
        } else if p.extension().is_some_and(|x| x == "org") {
            total += e.metadata().map_or(0, |m| m.len());
        }
    }
    total
}

fn print_ratios((real_headlines, real_files, real_bytes, big_bytes): (usize, usize, u64, u64)) {
    let median = estimates::median_ns;
    let synthetic = median("memory_ingest-100k-headlines", "").map(|ns| {
        let rate = 100_000.0 / (ns / 1e9);
        println!(
            "\ningest (on disk): {:.0} ms for 100k generated headlines = {rate:.0} headlines/s, \
             {:.1} MB/s",
            ns / 1e6,
            big_bytes as f64 / 1e6 / (ns / 1e9)
        );
        rate
    });
    if let Some(ns) = median("memory_ingest-real-corpus", "") {
        let rate = real_headlines as f64 / (ns / 1e9);
        println!(
            "ingest (on disk): {:.1} ms for the real corpus ({real_headlines} headlines in \
             {real_files} files) = {rate:.0} headlines/s, {:.1} MB/s{}",
            ns / 1e6,
            real_bytes as f64 / 1e6 / (ns / 1e9),
            synthetic.map_or(String::new(), |s| format!(
                " ({:.2}x the generated rate)",
                rate / s
            ))
        );
    }
    println!("\nqueries at 100k headlines (indexed), median:");
    for op in [
        "tag-project-limit-100",
        "property-owner-all",
        "text-no-match-all",
        "get-last-id",
        "awareness-4k",
        "edit-only",
        "edit-then-get",
    ] {
        if let Some(ns) = median("memory_query-100k", op) {
            println!("  {op:<22} {:>10.1} us", ns / 1e3);
        }
    }
    if let (Some(get), Some(walk)) = (
        median("memory_query-100k", "get-last-id"),
        median("memory_query-100k", "get-last-id-by-walk"),
    ) {
        println!(
            "  get by ID: {:.1} us indexed, {:.0} us by walk (baseline) = {:.4}x",
            get / 1e3,
            walk / 1e3,
            get / walk
        );
    }
    println!("\nmedian per operation, 1k vs 100k headlines (ratio ~1 means flat in store size):");
    for op in ["snapshot", "rollback", "seed-deep-copy"] {
        match (median("memory_1k", op), median("memory_100k", op)) {
            (Some(s), Some(b)) => println!(
                "  {op:<15} 1k {:>12.1} us   100k {:>12.1} us   ratio {:>8.2}",
                s / 1e3,
                b / 1e3,
                b / s
            ),
            _ => println!("  {op}: no estimates (run without filters)"),
        }
    }
}
