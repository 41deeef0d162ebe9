//! Kernel confinement of granted programs. A program never starts from a forked copy of the
//! (multithreaded) daemon: the daemon starts itself again as a small trampoline,
//! `passepartout __confine SPEC`, which applies, in order, before it execs the program:
//!
//! 1. the run's own cgroup ([`super::reap`]), so that every descendant ends with the run, and
//!    a fresh session (`setsid`), so that the host kills the program's whole group at the
//!    deadline;
//! 2. rlimits: CPU seconds, file size (the disk quota), processes, 1,024 open files, no core
//!    dumps;
//! 3. a private mount namespace in which every mount is read-only but the plugin's read-write
//!    mounts ([`super::read_only_view`]: `chmod`, `chown`, utimes and xattrs, which Landlock
//!    does not cover, fail outside them), where the kernel allows it;
//! 4. when the daemon runs as root, a switch to an unprivileged user (the owner of the mount the
//!    program works in), dropping every capability (RLIMIT_NPROC does not bind root);
//! 5. Landlock (`no_new_privs` with it): the plugin's mounts with their access, and read-only the
//!    few system paths a program needs to start (`/usr`, `/lib*`, `/bin`, `/sbin`, the loader's
//!    cache, `/dev/null`, ...; not `/etc`, not `/proc`, not `$HOME`); symlinks, sockets, fifos
//!    and devices cannot be created anywhere; TCP only to the ports of the plugin's `net`
//!    grants; no signals to, and no abstract Unix sockets of, processes outside;
//! 6. seccomp, for what Landlock cannot say: no Unix sockets (but anonymous connected pairs,
//!    which reach nothing outside), no netlink, packet or raw sockets, no UDP, no TCP Fast
//!    Open sends and no `listen` (both past Landlock's port rules), no io_uring, ptrace,
//!    mount, namespaces, kernel modules, bpf or keyrings.
//!
//! Where the kernel has no Landlock, programs are refused unless the policy says
//! `confine = "none"` for the plugin (which `audit` reports as high).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The first argument that turns `passepartout` into the trampoline.
pub const ARG: &str = "__confine";
/// The exit code of a trampoline that could not confine or exec; its stderr says why.
pub const REFUSED: i32 = 126;
/// How the trampoline's own messages start on stderr.
pub const PREFIX: &str = "passepartout confine: ";
/// The user programs run as when the daemon is root and the mount gives no other (`nobody`).
pub const NOBODY: u32 = 65534;

/// Read-only system paths a program needs to start and run (those that exist are granted).
const SYSTEM_READ: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/dev/urandom",
    "/dev/random",
    "/dev/zero",
];
/// System files a program may also write to.
const SYSTEM_WRITE: &[&str] = &["/dev/null", "/dev/full"];

/// Whether a plugin's programs are confined by the kernel (policy `confine`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confine {
    /// Landlock, seccomp, rlimits and an unprivileged user (the default). Where the kernel
    /// cannot, programs are refused.
    #[default]
    Kernel,
    /// Not confined at all: the program runs as the daemon's user and reads what it can.
    /// `audit` reports this as high.
    None,
}

impl Confine {
    /// Whether this is the default ([`Confine::Kernel`]).
    pub fn is_default(&self) -> bool {
        *self == Confine::Kernel
    }

    /// How programs run under this setting, as the audit prints it (what the trampoline
    /// applies, above).
    pub fn enforced(self) -> String {
        match self {
            Confine::Kernel => format!(
                "confined by the kernel: only the plugin's mounts and read-only system paths \
                 ({}; not /etc, /proc or $HOME), TCP only to the ports of its net grants, no \
                 Unix, raw or UDP sockets, an unprivileged user when the daemon is root, its own \
                 cgroup, {}; refused where the kernel has no Landlock",
                SYSTEM_READ
                    .iter()
                    .filter(|p| p.matches('/').count() == 1)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", "),
                if super::read_only_view::available() {
                    "every mount read-only but its read-write ones (no chmod, chown or xattr \
                     outside them)"
                } else {
                    "NOT a read-only view outside its mounts (this kernel allows the daemon's \
                     user no namespaces): it can chmod, chown and set xattrs on what the \
                     daemon's user owns"
                }
            ),
            Confine::None => "UNCONFINED (`confine = \"none\"`): the program runs natively with \
                              the daemon user's rights, reads and writes whatever that user \
                              can and reaches any network"
                .into(),
        }
    }
}

/// Everything the trampoline applies before it execs the program.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Confinement {
    /// The program, by absolute path.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Directories it may read (read-only mounts).
    pub read: Vec<PathBuf>,
    /// Directories it may read and write (read-write mounts).
    pub write: Vec<PathBuf>,
    /// TCP ports it may connect to; empty: no network at all.
    pub connect_ports: Vec<u16>,
    /// CPU seconds (RLIMIT_CPU).
    pub cpu_secs: u64,
    /// Largest file it may write, in bytes (RLIMIT_FSIZE).
    pub file_size: u64,
    /// Processes its user may have (RLIMIT_NPROC).
    pub processes: u64,
    /// Bytes it may take for its data: heap and writable private mappings (RLIMIT_DATA);
    /// `None`: the daemon's own limit.
    #[serde(default)]
    pub memory: Option<u64>,
    /// `(uid, gid)` to switch to (when the daemon is root).
    pub run_as: Option<(u32, u32)>,
    /// The run's cgroup (`cgroup.procs`) to join first ([`super::reap`]), when there is one;
    /// without it (or when joining fails) the trampoline supervises the run as its subreaper.
    pub cgroup: Option<PathBuf>,
}

/// Why a program could not be confined (the trampoline prints it, prefixed [`PREFIX`]).
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The mount's owner (the user a program would run as) could not be read.
    #[error("{}: {source}", path.display())]
    Mount {
        /// The mount's root.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The daemon is root and the mount is root's: the program would run as root.
    #[error(
        "the daemon runs as root, and programs run as the unprivileged owner of the mount they \
         work in; {} is owned by root. Give the mount to the user programs should run as \
         (`chown -R nobody {}`), or run the daemon as an ordinary user",
        path.display(),
        path.display()
    )]
    RootMount {
        /// The mount's root.
        path: PathBuf,
    },
    /// An rlimit could not be set.
    #[error("cannot limit {what}: {source}")]
    Limit {
        /// Which limit.
        what: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The switch to the unprivileged user failed.
    #[error("cannot {step}: {source}")]
    SwitchUser {
        /// The step that failed.
        step: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// After the switch, the process could become root again.
    #[error("could regain root after switching user")]
    RegainedRoot,
    /// The read-only view of the file system could not be made.
    #[error(transparent)]
    View(#[from] super::read_only_view::ViewError),
    /// Landlock refused a rule or the ruleset.
    #[error("Landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// A granted directory is not where its grant was checked (a directory or link on the
    /// way to it was replaced since), or where it is could not be read (`/proc/self/fd`).
    #[error(transparent)]
    Misplaced(super::fs::Misplaced),
    /// The kernel enforces only part of the ruleset.
    #[error(
        "this kernel enforces only part of Landlock ABI {MIN_ABI} (signal scopes, TCP rules): \
         the program cannot be confined"
    )]
    PartlyEnforced,
    /// `no_new_privs` did not hold after Landlock.
    #[error("could not set no_new_privs")]
    NoNewPrivs,
    /// A seccomp rule could not be written.
    #[error("seccomp: {0}")]
    SeccompRule(#[from] seccompiler::BackendError),
    /// A seccomp filter could not be installed.
    #[error("seccomp{}: {source}", if *.x32 { " (x32)" } else { "" })]
    Seccomp {
        /// The filter refusing the x32 ABI, rather than the rules.
        x32: bool,
        /// Seccompiler's error.
        #[source]
        source: seccompiler::Error,
    },
}

/// Whether this kernel can confine programs (Landlock is available).
pub fn kernel_can_confine() -> bool {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) only returns the
    // ABI version (or an error); it reads and writes no memory.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32,
        )
    };
    abi >= i64::from(MIN_ABI)
}

/// The Landlock ABI confinement needs: 6 (Linux 6.12) for the signal and abstract-socket
/// scopes, below which a program could signal the daemon or the user's other processes; 4 for
/// TCP rules, 3 for truncation. An older kernel cannot confine, and programs are refused.
pub const MIN_ABI: i32 = 6;

/// The user a program runs as when the daemon is root: the owner of `dir` (its mount), or
/// `None` when the daemon is not root (it keeps the daemon's user, without privileges).
///
/// # Errors
/// The daemon is root and `dir` is owned by root: running the program as root would give it
/// root's files, and as `nobody` it could not use the mount.
pub fn run_as(dir: &Path) -> Result<Option<(u32, u32)>, ConfineError> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Ok(None);
    }
    let meta = std::fs::metadata(dir).map_err(|source| ConfineError::Mount {
        path: dir.to_owned(),
        source,
    })?;
    if meta.uid() == 0 {
        return Err(ConfineError::RootMount {
            path: dir.to_owned(),
        });
    }
    // Never the root group either: a mount owned by `user:root` runs as `user:nogroup`.
    let gid = if meta.gid() == 0 { NOBODY } else { meta.gid() };
    Ok(Some((meta.uid(), gid)))
}

/// This process's own program, to start the trampoline from: `/proc/self/exe` where there is
/// one (Linux), else the path it was started from. `/proc/self/exe` is the file this process
/// runs even if the path now names another (renamed over, or upgraded in place), so whoever
/// could replace the file on disk still cannot get their code run unconfined; and the
/// trampoline always speaks the running daemon's [`Confinement`].
pub fn own_executable() -> Option<std::path::PathBuf> {
    let proc_self = std::path::Path::new("/proc/self/exe");
    // ambient authority: this process's own program.
    if proc_self.exists() {
        return Some(proc_self.to_owned());
    }
    std::env::current_exe().ok()
}

/// The trampoline: `args` are what follows [`ARG`]. Confines this process as the
/// [`Confinement`] in `args[0]` says, then execs the program. Never returns: on any failure it
/// prints why (prefixed [`PREFIX`]) and exits with [`REFUSED`].
pub fn trampoline(args: &[OsString]) -> ! {
    let fail = |why: String| -> ! {
        eprintln!("{PREFIX}{why}");
        std::process::exit(REFUSED)
    };
    let Some(spec) = args.first().and_then(|a| a.to_str()) else {
        fail("usage: passepartout __confine SPEC (the daemon runs this; people do not)".into())
    };
    let spec: Confinement = match serde_json::from_str(spec) {
        Ok(s) => s,
        Err(e) => fail(format!("unreadable confinement: {e}")),
    };
    // In the run's cgroup, every descendant is the host's to kill: become the program. Without
    // one (none could be made, or this process may not join it), stay above the program as its
    // subreaper.
    let joined = spec
        .cgroup
        .as_ref()
        .is_some_and(|procs| std::fs::write(procs, "0").is_ok());
    if joined {
        run(&spec, false)
    } else {
        super::subreaper::supervise(&spec, |spec| run(spec, true))
    }
}

/// Confine this process as `spec` says and exec the program; on failure, say why and exit.
fn run(spec: &Confinement, supervised: bool) -> ! {
    if let Err(why) = confine(spec, supervised) {
        eprintln!("{PREFIX}{why}");
        std::process::exit(REFUSED)
    }
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(&spec.program)
        .args(&spec.args)
        .exec();
    eprintln!("{PREFIX}cannot start {}: {err}", spec.program.display());
    std::process::exit(REFUSED)
}

/// Apply `spec` to this process (steps 1–6 of the module's list).
fn confine(spec: &Confinement, supervised: bool) -> Result<(), ConfineError> {
    // A supervised program stays in its supervisor's session, so that the host's group kill
    // reaches it too.
    if !supervised {
        // SAFETY: setsid(2) has no preconditions; failing (already a group leader) is harmless.
        unsafe { libc::setsid() };
    }
    limit(libc::RLIMIT_CPU, spec.cpu_secs.max(1), "CPU seconds")?;
    limit(libc::RLIMIT_FSIZE, spec.file_size, "file size")?;
    if let Some(bytes) = spec.memory {
        limit(
            libc::RLIMIT_DATA,
            bytes.min(hard_limit(libc::RLIMIT_DATA)),
            "memory",
        )?;
    }
    // RLIMIT_NPROC counts every process of the user, not of the run: it bounds only a run
    // switched to the mount's owner (the cgroup's pids.max bounds the run itself).
    if spec.run_as.is_some() {
        limit(libc::RLIMIT_NPROC, spec.processes, "processes")?;
    }
    limit(libc::RLIMIT_CORE, 0, "core size")?;
    // The daemon raised its own limit on open files; a program gets the usual one back.
    limit(
        libc::RLIMIT_NOFILE,
        OPEN_FILES.min(hard_limit(libc::RLIMIT_NOFILE)),
        "open files",
    )?;
    // Where the kernel gives this user no namespace, the other steps still confine the program
    // (`Confine::enforced` says which applies, from `read_only_view::available`); any other
    // failure refuses the program.
    super::read_only_view::enter(&spec.write)?;
    if let Some((uid, gid)) = spec.run_as {
        switch_user(uid, gid)?;
    }
    landlock(spec)?;
    seccomp(!spec.connect_ports.is_empty())
}

/// Most files a confined program has open at once.
const OPEN_FILES: u64 = 1024;

/// This process's hard limit on `resource`.
fn hard_limit(resource: libc::__rlimit_resource_t) -> u64 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes into the rlimit we pass by reference.
    if unsafe { libc::getrlimit(resource, &mut rl) } != 0 {
        return 0;
    }
    rl.rlim_max
}

fn limit(
    resource: libc::__rlimit_resource_t,
    value: u64,
    what: &'static str,
) -> Result<(), ConfineError> {
    let rl = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit(2) reads the rlimit we pass by reference.
    if unsafe { libc::setrlimit(resource, &rl) } != 0 {
        return Err(ConfineError::Limit {
            what,
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

fn switch_user(uid: u32, gid: u32) -> Result<(), ConfineError> {
    let err = |step: &str| {
        // errno first: the allocation below may change it.
        let source = std::io::Error::last_os_error();
        ConfineError::SwitchUser {
            step: step.to_owned(),
            source,
        }
    };
    // SAFETY: setgroups(0, NULL) clears the supplementary groups; setgid/setuid take plain ids.
    unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0 {
            return Err(err("clear supplementary groups"));
        }
        if libc::setgid(gid) != 0 {
            return Err(err(&format!("switch to group {gid}")));
        }
        if libc::setuid(uid) != 0 {
            return Err(err(&format!("switch to user {uid}")));
        }
        // From root to an ordinary user every capability goes; check that nothing came back.
        if libc::setuid(0) == 0 {
            return Err(ConfineError::RegainedRoot);
        }
    }
    Ok(())
}

fn landlock(spec: &Confinement) -> Result<(), ConfineError> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, Ruleset, RulesetAttr,
        RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
    };
    let abi = ABI::V6;
    let make_special: BitFlags<AccessFs> = AccessFs::MakeSym
        | AccessFs::MakeSock
        | AccessFs::MakeFifo
        | AccessFs::MakeBlock
        | AccessFs::MakeChar;
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_all(abi) & !make_special;
    let existing = |paths: &[&str]| -> Vec<PathBuf> {
        paths
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect()
    };
    let mut readable = existing(SYSTEM_READ);
    readable.push(spec.program.clone());
    let writable = existing(SYSTEM_WRITE);
    // The granted directories are resolved already (links followed where their grant was
    // checked): each rule is on the directory opened here, and only if it is still there.
    // As `path_beneath_rules`: one this user cannot open gets no rule (so no access), and a
    // file gets only the rights that apply to files.
    let granted = |dirs: &[PathBuf],
                   access: BitFlags<AccessFs>|
     -> Result<Vec<PathBeneath<std::fs::File>>, ConfineError> {
        use super::fs::{Misplaced, open_checked};
        let mut rules = Vec::new();
        for dir in dirs {
            let fd = match open_checked(dir, dir, 0) {
                Ok(fd) => fd,
                Err(Misplaced::Open { .. }) => continue,
                Err(e) => return Err(ConfineError::Misplaced(e)),
            };
            let is_dir = fd.metadata().is_ok_and(|m| m.is_dir());
            let access = if is_dir {
                access
            } else {
                access & AccessFs::from_file(abi)
            };
            rules.push(PathBeneath::new(fd, access));
        }
        Ok(rules)
    };
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))?
        .handle_access(AccessNet::from_all(abi))?
        .scope(Scope::from_all(abi))?
        .create()?
        .add_rules(path_beneath_rules(&readable, read))?
        .add_rules(path_beneath_rules(&writable, write))?;
    for rule in granted(&spec.read, read)?
        .into_iter()
        .chain(granted(&spec.write, write)?)
    {
        ruleset = ruleset.add_rule(rule)?;
    }
    for port in &spec.connect_ports {
        ruleset = ruleset.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
    }
    let status = ruleset.restrict_self()?;
    if status.ruleset != RulesetStatus::FullyEnforced {
        return Err(ConfineError::PartlyEnforced);
    }
    if !status.no_new_privs {
        return Err(ConfineError::NoNewPrivs);
    }
    Ok(())
}

/// On x86_64, the x32 ABI reaches every syscall again with bit 30 set, past rules written for
/// the plain numbers: refuse all of them, before anything else.
#[cfg(target_arch = "x86_64")]
fn refuse_x32() -> Result<(), ConfineError> {
    use seccompiler::sock_filter;
    const X32_BIT: u32 = 0x4000_0000;
    let program: seccompiler::BpfProgram = vec![
        // A = seccomp_data.nr
        sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        // if (A & X32_BIT) fall through to ERRNO, else skip it
        sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_BIT,
        },
        sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
        sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ALLOW,
        },
    ];
    seccompiler::apply_filter(&program)
        .map_err(|source| ConfineError::Seccomp { x32: true, source })
}

#[cfg(not(target_arch = "x86_64"))]
fn refuse_x32() -> Result<(), ConfineError> {
    Ok(())
}

/// Syscalls a confined program never makes.
const DENIED_SYSCALLS: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    // The new mount API: a program with capabilities in its user namespace (a binary with file
    // capabilities) could otherwise undo the read-only view.
    libc::SYS_mount_setattr,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_symlink,
    libc::SYS_symlinkat,
    libc::SYS_acct,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
];

fn seccomp(network: bool) -> Result<(), ConfineError> {
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
        SeccompFilter, SeccompRule, TargetArch,
    };
    use std::collections::BTreeMap;
    let arch = TargetArch::try_from(std::env::consts::ARCH)?;
    // One rule per (argument, mask, value): the call is refused when the masked argument
    // equals the value.
    let when = |arg: u8, mask: u64, value: u64| -> Result<SeccompRule, ConfineError> {
        let cond = Cond::new(arg, Len::Dword, Op::MaskedEq(mask), value)?;
        Ok(SeccompRule::new(vec![cond])?)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        DENIED_SYSCALLS.iter().map(|nr| (*nr, Vec::new())).collect();
    // socket(2): with a net grant, only TCP over IPv4 or IPv6 (Landlock then limits the ports);
    // without, none at all (an empty rule list refuses every call). Unix sockets (D-Bus,
    // docker.sock), netlink, packet, raw and UDP sockets are refused either way.
    let socket = if network {
        let mut refuse = Vec::new();
        let (inet, inet6) = (libc::AF_INET as u64, libc::AF_INET6 as u64);
        for domain in (0..64u64).filter(|d| *d != inet && *d != inet6) {
            refuse.push(when(0, u64::from(u32::MAX), domain)?);
        }
        // The type's low four bits are the kind; SOCK_NONBLOCK and SOCK_CLOEXEC ride above.
        for kind in (0..16u64).filter(|k| *k != libc::SOCK_STREAM as u64) {
            refuse.push(when(1, 0xf, kind)?);
        }
        // A stream socket of another protocol (SCTP, MPTCP) is not TCP to Landlock's port
        // rules: only protocol 0 or IPPROTO_TCP.
        let not = |value: u64| Cond::new(2, Len::Dword, Op::Ne, value);
        refuse.push(SeccompRule::new(vec![
            not(0)?,
            not(libc::IPPROTO_TCP as u64)?,
        ])?);
        refuse
    } else {
        Vec::new()
    };
    rules.insert(libc::SYS_socket, socket);
    // socketpair(2): only an anonymous connected pair of Unix sockets, which reaches nothing
    // outside the program (asyncio's event loop wakes itself with one: Python's MCP servers
    // need it); any other domain is refused.
    let unix = libc::AF_UNIX as u64;
    let mut pair = Vec::new();
    for domain in (0..64u64).filter(|d| *d != unix) {
        pair.push(when(0, u64::from(u32::MAX), domain)?);
    }
    rules.insert(libc::SYS_socketpair, pair);
    // TCP Fast Open: a send with MSG_FASTOPEN connects without connect(2), the call Landlock
    // checks a port on (landlock-lsm/linux#41), so any port would be reached; refused whatever
    // the socket (a program that wants TCP connects first, as nearly all do).
    let fast_open = libc::MSG_FASTOPEN as u64;
    for (call, flags) in [
        (libc::SYS_sendto, 3),
        (libc::SYS_sendmsg, 2),
        (libc::SYS_sendmmsg, 3),
    ] {
        rules.insert(call, vec![when(flags, fast_open, fast_open)?]);
    }
    // listen(2) on a socket never bound binds it to a port of the kernel's choosing, past
    // Landlock's bind rules; no program is granted a port to listen on, so it is refused.
    rules.insert(libc::SYS_listen, Vec::new());
    // clone(2) making namespaces.
    let mut clone = Vec::new();
    for flag in [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ] {
        let flag = flag as u64;
        clone.push(when(0, flag, flag)?);
    }
    rules.insert(libc::SYS_clone, clone);
    let install = |rules: BTreeMap<i64, Vec<SeccompRule>>, errno: i32| {
        let filter = SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno as u32),
            arch,
        )?;
        let program: seccompiler::BpfProgram = filter.try_into()?;
        seccompiler::apply_filter(&program)
            .map_err(|source| ConfineError::Seccomp { x32: false, source })
    };
    refuse_x32()?;
    install(rules, libc::EPERM)?;
    // clone3(2) passes its flags in memory seccomp cannot read: it answers "not implemented",
    // and the C library falls back to clone(2), which the filter above reads.
    install(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
    )
}
