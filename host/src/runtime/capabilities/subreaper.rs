//! Where no cgroup can be made for a run ([`super::reap`]: the daemon is not root and has no
//! delegated cgroup), the trampoline itself keeps the run's processes together: it becomes a
//! child subreaper (every orphan below it is re-parented to it, whatever session it made),
//! forks the program, and when the program ends — or the host sends it SIGTERM at the deadline
//! — kills every process left below it and reaps them before it exits with the program's
//! status. The program is confined in the child, before exec; this process runs only this loop.

/// Run `child` (which confines and execs) in a forked process under this one as its
/// subreaper; exit with its status once nothing is left below. Never returns.
pub fn supervise(
    spec: &super::confine::Confinement,
    child: fn(&super::confine::Confinement) -> !,
) -> ! {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) and setsid(2) change only this process;
    // sigprocmask blocks SIGTERM and SIGCHLD here so that the loop below takes them with
    // sigtimedwait (nothing is lost between a check and a wait); fork(2) in this
    // single-threaded process (the trampoline was just exec'd) is safe, and the child unblocks
    // them again before it execs (a blocked mask survives exec).
    let (pid, mask) = unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        libc::setsid();
        let mut mask: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut mask);
        libc::sigaddset(&mut mask, libc::SIGTERM);
        libc::sigaddset(&mut mask, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &mask, std::ptr::null_mut());
        (libc::fork(), mask)
    };
    match pid {
        -1 => {
            eprintln!(
                "{}cannot fork: {}",
                super::confine::PREFIX,
                std::io::Error::last_os_error()
            );
            std::process::exit(super::confine::REFUSED)
        }
        0 => {
            // SAFETY: unblocks what the parent blocked, in this process only.
            unsafe { libc::sigprocmask(libc::SIG_UNBLOCK, &mask, std::ptr::null_mut()) };
            child(spec)
        }
        program => std::process::exit(reap(program, &mask)),
    }
}

/// Wait for `program` (or SIGTERM); then kill and reap everything left. Returns the exit code
/// to pass on.
fn reap(program: libc::pid_t, mask: &libc::sigset_t) -> i32 {
    let mut code: Option<i32> = None;
    let mut draining = false;
    loop {
        // Reap whatever has ended, without waiting.
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) writes the status into our local.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid == -1 {
                // ECHILD: nothing is left below.
                return code.unwrap_or(128 + libc::SIGKILL);
            }
            if pid == 0 {
                break;
            }
            if pid == program {
                code.get_or_insert(if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else {
                    128 + libc::WTERMSIG(status)
                });
                draining = true;
            }
        }
        if draining {
            kill_children();
        }
        // Sleep until a child ends or SIGTERM comes (at most 10 ms, then look again).
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: 10_000_000,
        };
        // SAFETY: sigtimedwait(2) reads our mask and timeout; no siginfo is wanted.
        let signal = unsafe { libc::sigtimedwait(mask, std::ptr::null_mut(), &timeout) };
        if signal == libc::SIGTERM && !draining {
            code.get_or_insert(128 + libc::SIGTERM);
            draining = true;
        }
    }
}
/// SIGKILL every process below this one, read from one pass over `/proc`: children, their
/// children, and so on, whatever sessions they made. Killing only the direct children let a
/// chain of processes each parent of the next outlive the run, one link a round.
fn kill_children() {
    // SAFETY: getpid(2) has no preconditions.
    let me = unsafe { libc::getpid() };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    let mut children: std::collections::HashMap<libc::pid_t, Vec<libc::pid_t>> =
        std::collections::HashMap::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses; read after the last.
        if let Some(ppid) = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<libc::pid_t>().ok())
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut below = children.remove(&me).unwrap_or_default();
    while let Some(pid) = below.pop() {
        // SAFETY: kill(2) on a process found below this one. One that ended and was reaped
        // since the scan (by its parent, the program's) could have its pid given to a new
        // process only once the kernel's pid counter has wrapped past pid_max (32768 or more)
        // within this loop; a pidfd taken during the scan would close even that.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        below.extend(children.remove(&pid).unwrap_or_default());
    }
}
