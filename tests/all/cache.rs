//! Compiled components are cached on disk: the second start compiles nothing, and the cache
//! is pruned by age and size without evicting what is in use.

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime};

use passepartout::runtime::Policy;
use passepartout::runtime::cache::Prune;

use crate::private_runtime;

/// Each file and its inode: a rewrite (write then rename) changes the inode; a load that only
/// marks the entry used does not.
fn entries(dir: &std::path::Path) -> Vec<(std::path::PathBuf, u64)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("cache dir exists")
        .flatten()
        .map(|e| (e.path(), e.metadata().expect("metadata").ino()))
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

#[test]
fn pruning_removes_old_foreign_and_least_recently_used_entries_but_never_one_in_use() {
    let (runtime, cache) = private_runtime();
    let eval = crate::builtins(&["eval"]);
    let (_, sha) = runtime.inspect(&eval[0].component).expect("compile");
    // The one real entry names this engine's key.
    let real = entries(cache.path())[0].0.clone();
    let name = real
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let key = name
        .strip_prefix(&format!("{sha}-"))
        .and_then(|k| k.strip_suffix(".cwasm"))
        .expect("sha-key.cwasm")
        .to_owned();
    let hour = Duration::from_secs(3600);
    let fake = |name: &str, bytes: usize, unused: Duration| {
        let path = cache.path().join(name);
        std::fs::write(&path, vec![0u8; bytes]).expect("write");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(SystemTime::now() - unused))
            .expect("age it");
    };
    let ours = |n: u32| format!("{n:064x}-{key}.cwasm");
    fake(&ours(1), 100, hour * 24 * 40); // unused for 40 days: goes
    fake(
        &format!("{:064x}-0000000000000000.cwasm", 2),
        100,
        hour * 48,
    ); // another engine, 2 days: goes
    fake(&format!("{:064x}-0000000000000000.cwasm", 3), 100, hour / 2); // another engine, in use: stays
    fake(".tmp-1-2", 100, hour * 2); // an interrupted write: goes
    fake(&ours(4), 1000, hour * 3); // least recently used: goes by size
    fake(&ours(5), 1000, hour * 2); // goes by size
    fake(&ours(6), 1000, hour / 6); // used 10 minutes ago: stays, even over the size
    let pruned = runtime
        .cache()
        .prune(Prune {
            max_bytes: 500,
            ..Prune::default()
        })
        .expect("prune");
    let mut left: Vec<String> = entries(cache.path())
        .into_iter()
        .map(|(p, _)| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected = vec![
        format!("{:064x}-0000000000000000.cwasm", 3),
        ours(6),
        name.clone(),
    ];
    expected.sort();
    assert_eq!(left, expected);
    assert_eq!((pruned.removed, pruned.kept), (5, 3), "{pruned:?}");
    let cleared = runtime.cache().clear().expect("clear");
    assert_eq!(cleared.removed, 3);
    assert!(entries(cache.path()).is_empty());
}
