//! Every process a granted program starts ends with it: each run gets a cgroup of its own
//! (the `pids` hierarchy of cgroup v1, or a child of the daemon's cgroup v2), which the
//! trampoline joins before it execs the program, so that every descendant is in it whatever
//! session or group it makes. When the run ends (or its deadline passes), everything in the
//! cgroup is killed and the cgroup removed. `pids.max` also bounds how many processes the run
//! has, which binds root too: always under cgroup v1, under v2 where the `pids` controller is
//! available to the daemon's cgroup (this machine's CI runs v1; v2 is untested here).
//!
//! Where the daemon cannot create a cgroup (not root, no delegation), [`RunGroup::create`]
//! returns `None` and the trampoline keeps the run together as its subreaper instead
//! ([`super::subreaper`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A cgroup for one program run; killed and removed when dropped.
#[derive(Debug)]
pub struct RunGroup {
    dir: PathBuf,
    v2: bool,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// The daemon's own cgroup path in `controller`'s hierarchy (`""` for v2's unified line).
fn own_path(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    text.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let found = if controller.is_empty() {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        found.then(|| path.to_owned())
    })
}

impl RunGroup {
    /// A fresh cgroup for one run that allows at most `processes` (v1; v2 where the `pids`
    /// controller is available), or `None` where this daemon cannot make one.
    pub fn create(processes: u64) -> Option<RunGroup> {
        let name = format!(
            "passepartout-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let v1 = own_path("pids").map(|p| {
            Path::new("/sys/fs/cgroup/pids")
                .join(p.trim_start_matches('/'))
                .join(&name)
        });
        if let Some(dir) = v1
            && std::fs::create_dir(&dir).is_ok()
        {
            let _ = std::fs::write(dir.join("pids.max"), processes.to_string());
            return Some(RunGroup { dir, v2: false });
        }
        let unified = Path::new("/sys/fs/cgroup");
        if unified.join("cgroup.controllers").exists()
            && let Some(p) = own_path("")
        {
            let parent = unified.join(p.trim_start_matches('/'));
            // The pids controller for the runs (a threaded controller: the daemon's own cgroup
            // may hold processes and still give it to its children), where it is available.
            let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+pids");
            let dir = parent.join(&name);
            if std::fs::create_dir(&dir).is_ok() {
                let _ = std::fs::write(dir.join("pids.max"), processes.to_string());
                return Some(RunGroup { dir, v2: true });
            }
        }
        None
    }

    /// The file the trampoline writes `0` into to join the cgroup.
    pub fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Kill everything in the cgroup and wait (briefly) until it is empty.
    pub fn kill_all(&self) {
        if self.v2 && std::fs::write(self.dir.join("cgroup.kill"), "1").is_ok() {
            self.wait_empty();
            return;
        }
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                // SAFETY: kill(2) with a pid read from our own run's cgroup; no memory touched.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        tracing::warn!("processes remain in {} after SIGKILL", self.dir.display());
    }

    fn pids(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.procs())
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    fn wait_empty(&self) {
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until && !self.pids().is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for RunGroup {
    fn drop(&mut self) {
        self.kill_all();
        // Killed processes leave the cgroup once reaped: retry the removal briefly.
        let until = Instant::now() + Duration::from_millis(500);
        while std::fs::remove_dir(&self.dir).is_err() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
