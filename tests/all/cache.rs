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

/// Load shell-guard and eval into a fresh cache, then put eval's compiled artifact where
/// shell-guard's is: the swap an attacker who can write the cache makes to have another
/// plugin's code (or code of their own) run under a gate's name. Returns the cache and the
/// path of shell-guard's entry.
fn swapped_cache() -> (tempfile::TempDir, std::path::PathBuf) {
    let (runtime, cache) = private_runtime();
    let compile = |name| {
        let source = crate::builtins(&[name]).remove(0);
        runtime.inspect(&source.component).expect("compile").1
    };
    let guard_sha = compile("shell-guard");
    compile("eval");
    let all = entries(cache.path());
    let guard = all
        .iter()
        .find(|(p, _)| p.to_string_lossy().contains(&guard_sha))
        .expect("shell-guard's entry")
        .0
        .clone();
    let other = all
        .iter()
        .find(|(p, _)| *p != guard)
        .expect("eval's entry")
        .0
        .clone();
    std::fs::copy(&other, &guard).expect("swap");
    (cache, guard)
}

/// Whether shell-guard, loaded from `cache`, came from the cache, and whether it still judges
/// as shell-guard (rejects `rm -rf /`).
fn guard_from(cache: &std::path::Path) -> (bool, bool) {
    let runtime = passepartout_tests::runtime(cache);
    let report = runtime.load_all(&crate::builtins(&["shell-guard"]), &Policy::default());
    let Some(guard) = report.plugins.first() else {
        // The swapped code does not export a gate: it did not load as one.
        return (true, false);
    };
    let verdict = guard.check(
        &crate::action("shell", serde_json::json!({"command": "rm -rf /"})),
        &crate::signal(),
    );
    (
        guard.from_cache,
        matches!(
            verdict,
            Ok(passepartout::runtime::types::Verdict::Reject(_))
        ),
    )
}

#[test]
fn the_swap_is_what_a_trusted_cache_would_load() {
    // The premise of the tests below: in a private cache, the daemon's own user's files are
    // trusted, so the swapped entry is loaded (and shell-guard is not what runs).
    let (cache, _) = swapped_cache();
    assert_eq!(guard_from(cache.path()), (true, false));
}

#[test]
fn a_cache_directory_others_may_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt as _;
    let (cache, guard) = swapped_cache();
    std::fs::set_permissions(cache.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let before = std::fs::read(&guard).expect("entry");
    assert_eq!(
        guard_from(cache.path()),
        (false, true),
        "compiled from the component, and judging as shell-guard"
    );
    assert_eq!(
        std::fs::read(&guard).expect("entry"),
        before,
        "nothing is written into a directory others may write"
    );
}

#[test]
fn a_cache_entry_that_is_not_the_daemons_own_private_file_is_not_loaded() {
    use std::os::unix::fs::PermissionsExt as _;
    // Others may write it.
    let (cache, guard) = swapped_cache();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    assert_eq!(guard_from(cache.path()), (false, true), "mode 666");
    // A symbolic link to an artifact (here eval's, where another user could keep one).
    let (cache, guard) = swapped_cache();
    let elsewhere = cache.path().join("elsewhere");
    std::fs::rename(&guard, &elsewhere).expect("move");
    std::os::unix::fs::symlink(&elsewhere, &guard).expect("link");
    assert_eq!(guard_from(cache.path()), (false, true), "a symbolic link");
    // Another user's file (only root can give a file away).
    if std::fs::metadata(&guard).expect("entry").uid() == 0 {
        let (cache, guard) = swapped_cache();
        std::os::unix::fs::chown(&guard, Some(4242), None).expect("chown");
        assert_eq!(guard_from(cache.path()), (false, true), "owned by another");
    }
    // A FIFO: neither a hang nor a load.
    let (cache, guard) = swapped_cache();
    std::fs::remove_file(&guard).expect("remove");
    let made = std::process::Command::new("mkfifo")
        .arg(&guard)
        .status()
        .expect("mkfifo");
    assert!(made.success(), "mkfifo");
    assert_eq!(guard_from(cache.path()), (false, true), "a FIFO");
}

/// A file the daemon's own user made some other way than the cache does: one a plugin wrote
/// through a read-write mount is 0644 under the usual umask (WASI cannot set a mode). Before
/// the entries had to be 0600, only write permission for others was refused, and this one
/// (another plugin's code, in shell-guard's place) was loaded.
#[test]
fn a_cache_entry_its_group_or_others_may_read_is_not_loaded() {
    use std::os::unix::fs::PermissionsExt as _;
    let (cache, guard) = swapped_cache();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert_eq!(
        guard_from(cache.path()),
        (false, true),
        "compiled from the component, and judging as shell-guard"
    );
    assert_eq!(
        std::fs::metadata(&guard).expect("entry").mode() & 0o777,
        0o600,
        "replaced by an entry of the cache's own making"
    );
}

/// A cache named by a symbolic link to a directory of the daemon's user (a plugin's mount,
/// say): before the directory itself had to be one, it was checked through the link and its
/// entries loaded.
#[test]
fn a_cache_directory_that_is_a_symbolic_link_is_not_used() {
    let (cache, guard) = swapped_cache();
    let holder = tempfile::tempdir().expect("temp dir");
    let link = holder.path().join("compiled");
    std::os::unix::fs::symlink(cache.path(), &link).expect("link");
    let before = std::fs::read(&guard).expect("entry");
    assert_eq!(
        guard_from(&link),
        (false, true),
        "compiled from the component, and judging as shell-guard"
    );
    assert_eq!(
        std::fs::read(&guard).expect("entry"),
        before,
        "nothing is written through the link"
    );
}
