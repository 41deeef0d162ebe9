//! Compiled components are cached on disk: the second start compiles nothing.

use std::time::SystemTime;

use passepartout::runtime::Policy;

use crate::private_runtime;

fn entries(dir: &std::path::Path) -> Vec<(std::path::PathBuf, SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("cache dir exists")
        .flatten()
        .map(|e| {
            (
                e.path(),
                e.metadata().and_then(|m| m.modified()).expect("mtime"),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_second_start_compiles_nothing() {
    let (first, cache) = private_runtime();
    let report = first.load_all(
        &crate::builtins(&["shell-guard", "files", "eval"]),
        &Policy::default(),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.plugins.len(), 3);
    assert!(
        report.plugins.iter().all(|p| !p.from_cache),
        "first start compiles"
    );
    let written = entries(cache.path());
    assert_eq!(written.len(), 3, "one artifact per plugin");
    drop(report);
    drop(first);

    let second = passepartout_tests::runtime(cache.path());
    let report = second.load_all(
        &crate::builtins(&["shell-guard", "files", "eval"]),
        &Policy::default(),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        report.plugins.iter().all(|p| p.from_cache),
        "second start loads every plugin from the cache"
    );
    assert_eq!(
        entries(cache.path()),
        written,
        "nothing was compiled or rewritten"
    );
    let eval = report
        .plugins
        .iter()
        .find(|p| p.id.name == "eval")
        .expect("eval");
    assert_eq!(
        eval.call_tool("eval", r#"{"expression":"(+ 1 2)"}"#)
            .expect("eval"),
        "3"
    );
}

#[test]
fn a_corrupt_cache_entry_is_recompiled_and_replaced() {
    let (first, cache) = private_runtime();
    drop(first.load_all(
        &crate::builtins(&["shell-guard", "files", "eval"]),
        &Policy::default(),
    ));
    for (path, _) in entries(cache.path()) {
        std::fs::write(&path, b"not a compiled component").expect("corrupt");
    }
    let second = passepartout_tests::runtime(cache.path());
    let report = second.load_all(
        &crate::builtins(&["shell-guard", "files", "eval"]),
        &Policy::default(),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.plugins.iter().all(|p| !p.from_cache));
    let third = passepartout_tests::runtime(cache.path());
    let report = third.load_all(
        &crate::builtins(&["shell-guard", "files", "eval"]),
        &Policy::default(),
    );
    assert!(
        report.plugins.iter().all(|p| p.from_cache),
        "the entries were repaired"
    );
}
