//! Who runs an approved action, so that another process can tell a runner that is gone from
//! one it cannot see. The running process holds a lock (`flock`) on a file of its own in
//! `DB.runners/` beside the database for as long as it lives; the kernel lets go of it when
//! the process ends, however it ends. Another process sharing the database (the CLI, a daemon
//! started later, one in another PID namespace or container with the same directory mounted)
//! asks for the lock: held, the runner is alive; free, or the file gone, it is not.
//!
//! A process id alone could not say so across PID namespaces: a daemon in a container is not
//! in the `/proc` of a CLI outside it, which took its running action for interrupted, and a
//! person approving it again ran it twice.

use std::collections::BTreeMap;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// How a runner named by its lock file is written in the `runner` column.
const PREFIX: &str = "lock:";

/// The directory of runner locks for the database at `db`.
fn directory(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".runners");
    PathBuf::from(name)
}

/// This process's runner for the database at `db`: `lock:NAME`, NAME a file in
/// [`directory`] this process holds locked until it ends (made on first use). `None` when no
/// such file can be made (an in-memory database, a directory that cannot be written).
pub(super) fn this_process(db: Option<&Path>) -> Option<String> {
    /// Runner name and its locked file, by lock directory: held until the process ends.
    static HELD: OnceLock<Mutex<BTreeMap<PathBuf, (String, File)>>> = OnceLock::new();
    let dir = directory(db?);
    let mut held = HELD
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((name, _)) = held.get(&dir) {
        return Some(format!("{PREFIX}{name}"));
    }
    let made = make(&dir);
    let (name, file) = match made {
        Ok(made) => made,
        Err(e) => {
            tracing::warn!(
                "cannot make a runner lock in {}: {e}; approved actions are known by this \
                 process's id instead, which a process in another PID namespace cannot see",
                dir.display()
            );
            return None;
        }
    };
    let runner = format!("{PREFIX}{name}");
    held.insert(dir, (name, file));
    Some(runner)
}

/// Make this process's lock file in `dir`, locked before it has its name: a [`sweep`] by
/// another process never finds it unlocked (it would take it for ended and remove it).
fn make(dir: &Path) -> std::io::Result<(String, File)> {
    std::fs::create_dir_all(dir)?;
    sweep(dir);
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let name = format!("{}-{}", std::process::id(), hex::encode(bytes));
    // A name `valid` refuses, so no sweep looks at it meanwhile.
    let unnamed = dir.join(format!(".making-{name}"));
    let file = File::options()
        .write(true)
        .create_new(true)
        .open(&unnamed)?;
    let named = file
        .try_lock()
        .map_err(|e| std::io::Error::other(e.to_string()))
        .and_then(|()| std::fs::rename(&unnamed, dir.join(&name)));
    match named {
        Ok(()) => Ok((name, file)),
        Err(e) => {
            let _ = std::fs::remove_file(&unnamed);
            Err(e)
        }
    }
}

/// Whether the runner `runner` (from [`this_process`]) may still be running its action, for
/// the database at `db`. `None`: `runner` is not a lock runner.
pub(super) fn alive(db: Option<&Path>, runner: &str) -> Option<bool> {
    let name = runner.strip_prefix(PREFIX)?;
    let Some(db) = db else {
        // A lock runner in a database this process cannot place: not known to be gone.
        return Some(true);
    };
    if !valid(name) {
        return Some(true);
    }
    Some(held(&directory(db).join(name)))
}

/// A name [`this_process`] makes: digits, `-`, lowercase hex; nothing that leads elsewhere.
fn valid(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || (b'a'..=b'f').contains(&b))
}

/// Whether some process holds the lock on `path`. A file that is gone, or whose lock is
/// free, is a runner that ended (the file is removed); anything unclear is taken as held.
fn held(path: &Path) -> bool {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
        Err(_) => return true,
    };
    match file.try_lock_shared() {
        Ok(()) => {
            drop(file);
            let _ = std::fs::remove_file(path);
            false
        }
        Err(TryLockError::WouldBlock | TryLockError::Error(_)) => true,
    }
}

/// Remove the lock files of runners that ended (each is checked as [`held`] does).
fn sweep(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_str().is_some_and(valid) {
            held(&entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock is the kernel's: a holder in another process, in another PID namespace where
    /// it can be made, is alive; once it ends, it is not, and its file is gone.
    #[test]
    fn a_runner_in_another_process_is_alive_until_it_ends() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("journal.db");
        let locks = directory(&db);
        std::fs::create_dir_all(&locks).expect("dir");
        let name = "4242-00ff";
        let file = locks.join(name);
        std::fs::write(&file, b"").expect("lock file");
        // `flock` holds the lock the way a daemon does (`-o`: itself, not the command it
        // waits for); `unshare --pid` puts it where this process's /proc does not see it (as
        // root; otherwise in this namespace), and takes it down with itself.
        let in_namespace = nix_unshare_works();
        let mut command = if in_namespace {
            let mut c = std::process::Command::new("unshare");
            c.args(["--pid", "--fork", "--kill-child", "flock", "-x", "-o"]);
            c
        } else {
            let mut c = std::process::Command::new("flock");
            c.args(["-x", "-o"]);
            c
        };
        let mut holder = command
            .arg(&file)
            .args(["sleep", "30"])
            .spawn()
            .expect("flock runs");
        let runner = format!("{PREFIX}{name}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        // Until the holder has its lock, it would look gone: wait for it to hold.
        let taken = || {
            File::open(&file)
                .is_ok_and(|f| matches!(f.try_lock_shared(), Err(TryLockError::WouldBlock)))
        };
        while !taken() {
            assert!(std::time::Instant::now() < deadline, "flock never held it");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(alive(Some(&db), &runner), Some(true), "held elsewhere");
        let _ = holder.kill();
        let _ = holder.wait();
        // The namespace's processes end a moment after `unshare`: the lock goes with them.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while alive(Some(&db), &runner) == Some(true) {
            assert!(
                std::time::Instant::now() < deadline,
                "the lock outlived its holder"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!file.exists(), "the ended runner's file is removed");
        // Not a lock runner; a name that leads elsewhere is never taken for gone.
        assert_eq!(alive(Some(&db), "1234:5678"), None);
        assert_eq!(alive(Some(&db), "lock:../journal.db"), Some(true));
    }

    /// Whether `unshare --pid` can be used here (root, a kernel that allows it).
    fn nix_unshare_works() -> bool {
        std::process::Command::new("unshare")
            .args(["--pid", "--fork", "true"])
            .status()
            .is_ok_and(|s| s.success())
    }

    /// A runner's file is never seen unlocked under its name, so another process's sweep
    /// running at the same time never takes it for ended: each one made while a thread sweeps
    /// over and over is still there, and held.
    #[test]
    fn a_sweep_never_removes_a_runner_being_made() {
        let dir = tempfile::tempdir().expect("dir");
        let locks = dir.path().join("journal.db.runners");
        std::fs::create_dir_all(&locks).expect("dir");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let sweeper = {
            let (locks, stop) = (locks.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    sweep(&locks);
                }
            })
        };
        let made: Vec<(String, File)> = (0..200).map(|_| make(&locks).expect("made")).collect();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        sweeper.join().expect("sweeper");
        for (name, _file) in &made {
            assert!(held(&locks.join(name)), "{name} was taken for ended");
        }
    }

    /// This process is its own runner, the same name each time, alive while it runs.
    #[test]
    fn this_process_holds_its_runner() {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("journal.db");
        let runner = this_process(Some(&db)).expect("a runner");
        assert_eq!(this_process(Some(&db)), Some(runner.clone()));
        assert_eq!(alive(Some(&db), &runner), Some(true));
        assert_eq!(this_process(None), None);
    }
}
