//! Confinement's read-only view of the file system (step 3 of [`super::confine`]): the program
//! gets a private mount namespace in which every mount is read-only except its plugin's
//! read-write mounts.
//!
//! Landlock decides what a program may open, read, write, make and remove; it does not cover
//! `chmod`, `chown`, `utimensat` or extended attributes, which need only a path. Without this
//! view, a program granted to a daemon that is not root runs as the daemon's user and could
//! `chmod` the daemon's keys to 0644, its database to 000, or the user's `~/.ssh` open to all.
//! On a read-only mount each of these fails with `EROFS` ("Read-only file system"); writing to
//! devices (`/dev/null`) is not affected.
//!
//! A daemon that is not root makes the namespace inside a user namespace of its own, in which
//! the program keeps its user and group (mapped to themselves); the capabilities that namespace
//! gives are dropped, bounding set included, before the exec, so that no binary with file
//! capabilities gets them back (and seccomp refuses the mount calls that could undo the view).
//! Where the kernel allows ordinary users no user namespaces (`unshare` answers `EPERM`,
//! `ENOSPC` or `EUSERS`: `user.max_user_namespaces = 0`), or no mounts in them (Ubuntu 24.04's
//! AppArmor: the first mount answers `EPERM`), the program runs without the view, confined by
//! the other steps: [`available`] says which. Any other failure refuses the program, and so
//! does a read-write mount that no longer leads where its grant was checked (a directory or
//! link on the way replaced since): each is bound from the directory opened and checked here.

use std::ffi::CString;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why the view could not be made.
#[derive(Debug, thiserror::Error)]
#[error("read-only view of the file system: cannot {step}: {source}")]
pub struct ViewError {
    /// The step that failed.
    step: String,
    /// The operating system's error.
    #[source]
    source: std::io::Error,
}

/// What `mount_setattr(2)` takes (linux/mount.h).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const AT_RECURSIVE: libc::c_uint = 0x8000;

fn step(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> ViewError {
    let step = what.into();
    move |source| ViewError { step, source }
}

fn check(rc: libc::c_long) -> std::io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn c_path(path: &Path) -> std::io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

/// Set (`set`) or clear read-only on the mount at `path`, and with `recursive` on every mount
/// below it.
fn read_only(path: &Path, set: bool, recursive: bool) -> std::io::Result<()> {
    let attr = MountAttr {
        attr_set: if set { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if set { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let p = c_path(path)?;
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: mount_setattr(2) reads a NUL-terminated path and a mount_attr of the size given,
    // both alive for the call.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            p.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    })
}

fn mount(source: Option<&Path>, target: &Path, flags: libc::c_ulong) -> std::io::Result<()> {
    let target = c_path(target)?;
    let source = source.map(c_path).transpose()?;
    // SAFETY: mount(2) with NUL-terminated paths alive for the call (or NULL source), no
    // file system type and no data.
    check(libc::c_long::from(unsafe {
        libc::mount(
            source.as_ref().map_or(std::ptr::null(), |s| s.as_ptr()),
            target.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    }))
}

/// `path` opened (`O_PATH`: only to name it), if it still leads where it led when its grant
/// was checked: the daemon resolved it then, so it leads elsewhere now only if a directory or
/// link on the way was replaced since. `purpose` is the step it is opened for, named in the
/// error.
fn open_checked(path: &Path, purpose: String) -> Result<std::fs::File, ViewError> {
    super::fs::open_checked(path, path, 0).map_err(|e| step(purpose)(std::io::Error::other(e)))
}

/// Wait (up to a second) until this process has one thread: a thread jemalloc was told to
/// stop may still be leaving when `pthread_join` returns.
fn one_thread() -> Result<(), ViewError> {
    for _ in 0..1000 {
        let threads = std::fs::read_dir("/proc/self/task")
            .map_err(step("count this process's threads"))?
            .count();
        if threads == 1 {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    Err(ViewError {
        step: "make a user namespace".into(),
        source: std::io::Error::other("this process still has other threads after a second"),
    })
}

/// Enter a new user namespace (unless root) and mount namespace, in which this process keeps
/// its user and group. `Ok(false)`: the kernel gives this user no namespaces.
fn unshare() -> Result<bool, ViewError> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if uid == 0 {
        // SAFETY: unshare(2) takes plain flags.
        check(libc::c_long::from(unsafe {
            libc::unshare(libc::CLONE_NEWNS)
        }))
        .map_err(step("make a mount namespace"))?;
        return Ok(true);
    }
    // A user namespace is made only by a process of one thread: the allocator's background
    // thread goes first (the trampoline starts no other).
    crate::allocator::stop_background_threads()
        .map_err(step("stop the allocator's background thread"))?;
    one_thread()?;
    // SAFETY: as above.
    match check(libc::c_long::from(unsafe {
        libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)
    })) {
        Ok(()) => {}
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EPERM | libc::ENOSPC | libc::EUSERS)
            ) =>
        {
            return Ok(false);
        }
        Err(e) => return Err(step("make a user and mount namespace")(e)),
    }
    std::fs::write("/proc/self/setgroups", "deny").map_err(step("deny setgroups"))?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1")).map_err(step("map the user"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
        .map_err(step("map the group"))?;
    Ok(true)
}

/// Drop every capability this process has in its user namespace, the bounding set first, so
/// that no exec (of a binary with file capabilities) gives any back.
fn drop_capabilities() -> Result<(), ViewError> {
    for cap in 0..64 {
        // SAFETY: prctl(PR_CAPBSET_DROP, cap) takes plain integers; EINVAL past the last
        // capability the kernel knows ends the loop.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINVAL) && cap > 0 {
                break;
            }
            return Err(step(format!("drop capability {cap} from the bounding set"))(e));
        }
    }
    // A version 3 header (0x20080522, this process) and two data words, every set empty.
    let mut header = [0x2008_0522u32, 0];
    let data = [0u32; 6];
    // SAFETY: capset(2) reads a header and two {effective, permitted, inheritable} words of
    // the sizes given, alive for the call.
    check(unsafe { libc::syscall(libc::SYS_capset, header.as_mut_ptr(), data.as_ptr()) })
        .map_err(step("drop every capability"))
}

/// Give this process (which must have one thread) a private mount namespace where every mount
/// is read-only but those at `writable` (each bound onto itself; mounts below them stay
/// read-only).
///
/// Where the kernel gives this user no namespaces, nothing is done.
///
/// # Errors
/// A step failed; the process may then be in the new namespace with only part of the view
/// (the trampoline then refuses to run the program).
pub fn enter(writable: &[PathBuf]) -> Result<(), ViewError> {
    if !unshare()? {
        return Ok(());
    }
    let root = Path::new("/");
    // Nothing done here reaches the daemon's namespace.
    match mount(None, root, libc::MS_REC | libc::MS_PRIVATE) {
        Ok(()) => {}
        // A security module that lets ordinary users make user namespaces but not mount in
        // them (Ubuntu 24.04's AppArmor): as no namespace at all.
        // SAFETY: geteuid has no preconditions.
        Err(e) if e.raw_os_error() == Some(libc::EPERM) && unsafe { libc::geteuid() } != 0 => {
            return Ok(());
        }
        Err(e) => return Err(step("make / private")(e)),
    }
    read_only(root, true, true).map_err(step("make every mount read-only"))?;
    for path in writable {
        // Bound from the very directory opened and checked here, so that a link put on the
        // way to it since its grant was checked is not followed; then the new mount, opened
        // through the path again (and checked again), made writable.
        // (Opened in the new namespace: mount(2) binds only from a mount of the caller's.)
        let dir = open_checked(path, format!("bind {}", path.display()))?;
        let at = super::fs::descriptor_path(dir.as_fd());
        mount(Some(&at), &at, libc::MS_BIND | libc::MS_REC)
            .map_err(step(format!("bind {}", path.display())))?;
        let bound = open_checked(path, format!("make {} writable", path.display()))?;
        read_only(&super::fs::descriptor_path(bound.as_fd()), false, false)
            .map_err(step(format!("make {} writable", path.display())))?;
    }
    // The working directory still points into the mount below the new ones: enter it again
    // by its path, through them.
    let cwd = std::env::current_dir().map_err(step("read the working directory"))?;
    std::env::set_current_dir(&cwd).map_err(step("enter the working directory again"))?;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        drop_capabilities()?;
    }
    Ok(())
}

/// Whether [`enter`] works for this process's user here: tried in a child process, which
/// exits at once. The daemon asks once, to say in `plugins` and `audit` what confinement
/// applies.
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: the child only makes system calls (no allocation, no lock: the parent may
        // have other threads) and leaves with _exit.
        unsafe {
            match libc::fork() {
                -1 => false,
                0 => {
                    let ok = probe();
                    libc::_exit(if ok { 0 } else { 1 })
                }
                child => {
                    let mut status = 0;
                    loop {
                        let r = libc::waitpid(child, &mut status, 0);
                        if r == child {
                            break libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
                        }
                        if r == -1
                            && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR)
                        {
                            break false;
                        }
                    }
                }
            }
        }
    })
}

/// In a forked child: whether a user and mount namespace can be made and a mount made
/// read-only in it. Only system calls, on static strings.
fn probe() -> bool {
    // SAFETY: plain system calls with static NUL-terminated strings.
    unsafe {
        let flags = if libc::geteuid() == 0 {
            libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS
        };
        if libc::unshare(flags) != 0 {
            return false;
        }
        // Without a user mapping the new namespace's mount calls still work for a fresh
        // user namespace's owner (its capabilities); a security module that forbids them
        // shows here.
        let root = c"/".as_ptr();
        if libc::mount(
            std::ptr::null(),
            root,
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
        let attr = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            root,
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        ) == 0
    }
}
