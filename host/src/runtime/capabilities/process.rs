//! The `process` capability: a tool runs a program only if the policy grants it by name. No
//! shell: the program gets its arguments as a list. It runs with an empty environment (plus
//! `PATH`, `LANG` and the plugin's env grants), in a working directory inside one of the
//! plugin's mounts, under a deadline, with its output capped; at the deadline its whole process
//! group is killed (and after a normal exit too), and so is every process of the run, whatever
//! session it made ([`super::reap`], [`super::subreaper`]). Output pipes still held are
//! drained for 100 ms after the program ends, then abandoned (the output is marked cut).
//!
//! The program is native code: it starts through the `__confine` trampoline
//! ([`super::confine`]), which confines it by the kernel to the plugin's mounts (Landlock,
//! seccomp, rlimits, an unprivileged user when the daemon is root) unless the policy says
//! `confine = "none"`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::env::EnvGrant;
use super::fs::Mount;
use crate::runtime::bindings::process_api as api;
use crate::runtime::error::PluginId;
use crate::runtime::manifest::CapabilityRequest;
use crate::runtime::policy::PluginPolicy;

/// Most bytes of stdout, and of stderr, kept per run.
pub const OUTPUT_CAP: usize = 256 * 1024;
/// Default deadline when the plugin asks for none (the seed's shell timeout).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// What one call may run.
pub struct ProcessCtx {
    /// Program names granted.
    pub programs: Vec<String>,
    /// The plugin's mounts (working directories must be inside one).
    pub mounts: Vec<Mount>,
    /// Environment granted to the plugin, passed on to the program.
    pub env: Vec<EnvGrant>,
    /// When the tool call's own deadline passes.
    pub deadline: Instant,
    /// How the program is confined.
    pub confine: super::confine::Confine,
    /// The executable that confines it (`passepartout`, run as `passepartout __confine`).
    pub trampoline: Option<std::sync::Arc<PathBuf>>,
    /// The plugin's network grants (`host` or `host:port`): the TCP ports the program may
    /// connect to.
    pub net: Vec<String>,
    /// Largest file the program may write (the plugin's disk limit).
    pub file_size: u64,
    /// Memory the program may take for its data (the plugin's `program_memory_mib`).
    pub program_memory: u64,
}

/// Processes a run may have at once: the cgroup's `pids.max`, and RLIMIT_NPROC of the user
/// it switches to when the daemon is root.
const PROCESSES: u64 = 256;

/// The TCP ports a program may connect to under `net` grants: each grant's port, else 80 and
/// 443 (the audit says so from this very list).
pub(crate) fn ports(net: &[String]) -> Vec<u16> {
    let mut ports: Vec<u16> = net
        .iter()
        .flat_map(|grant| match super::net::grant_port(grant) {
            Some(port) => vec![port],
            None => vec![80, 443],
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The process interface's per-call state: whose call it is and, when the plugin is granted
/// programs, what it may run.
pub struct ProcessCall {
    /// The plugin (for the log).
    pub plugin: PluginId,
    /// None: `process` is not granted (the interface is not even linked then).
    pub ctx: Option<ProcessCtx>,
}

impl api::Host for ProcessCall {
    fn run(&mut self, cmd: api::Command) -> Result<api::Output, api::ProcessError> {
        let Some(ctx) = &self.ctx else {
            return Err(api::ProcessError::Denied(
                "this plugin is granted no programs".into(),
            ));
        };
        // The program runs for up to the call's deadline: the async worker this call is on
        // hands its other requests to another thread meanwhile.
        let out = crate::blocking::in_place(|| run(ctx, cmd));
        if let Err(e) = &out {
            tracing::info!(plugin = %self.plugin, "process refused or failed: {e:?}");
        }
        out
    }
}

/// Link the process interface (only for plugins granted programs).
///
/// # Errors
/// The interface cannot be added (a wasmtime bug).
pub fn link<T: 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    get: fn(&mut T) -> &mut ProcessCall,
) -> wasmtime::Result<()> {
    api::add_to_linker::<T, wasmtime::component::HasSelf<ProcessCall>>(linker, get)
}

/// The process capability ([`super::Factor`]).
pub struct Process;

impl super::Factor for Process {
    fn name(&self) -> &'static str {
        "process"
    }
    fn what(&self) -> &'static str {
        "programs to run (passepartout:plugin/process)"
    }
    fn owns(&self, interface: &str) -> bool {
        interface == "passepartout:plugin/process"
    }
    fn provides(&self, _interface: &str, version: &str) -> bool {
        crate::runtime::plugin::wit_supported(version)
    }
    fn linked_only_when_granted(&self, _interface: &str) -> bool {
        true
    }
    fn asked(&self, asked: &CapabilityRequest) -> bool {
        !asked.process.is_empty()
    }
    fn resolve(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &mut super::Grants,
    ) -> Result<(), super::GrantRefused> {
        grants.process = super::intersect(&asked.process, &policy.process);
        Ok(())
    }
    fn granted(&self, grants: &super::Grants) -> bool {
        !grants.process.is_empty()
    }
    fn grant_hint(&self, plugin: &str) -> String {
        format!("grant some under [plugins.{plugin}]: process = [\"ls\"], and an fs mount")
    }
    fn sides(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &super::Grants,
    ) -> super::Sides {
        super::Sides::listed(&asked.process, &policy.process, grants.process.clone())
    }
    fn enforced(&self, grants: &super::Grants) -> String {
        if grants.process.is_empty() {
            return "not linked".into();
        }
        format!(
            "host process interface: only {} (by name, on the daemon's PATH; what they run in \
             turn, such as git's hooks, runs confined the same way), arguments as a \
             list, working directory inside a mount, an environment of PATH, LANG and the env \
             grants, output capped at {} KiB, the whole run killed at the call's deadline; {}",
            grants.process.join(", "),
            OUTPUT_CAP / 1024,
            grants.confine.enforced()
        )
    }
}

/// Run `cmd` under `ctx`.
///
/// # Errors
/// Denied (program or directory not granted), not found, timed out, or could not start.
pub fn run(ctx: &ProcessCtx, cmd: api::Command) -> Result<api::Output, api::ProcessError> {
    let program = check_program(ctx, &cmd.program)?;
    mounts_where_checked(ctx)?;
    let (cwd, mount_root) = working_dir(ctx, cmd.cwd.as_deref())?;
    let remaining = ctx.deadline.saturating_duration_since(Instant::now());
    let asked = cmd
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(u64::from(ms)));
    let timeout = asked.min(remaining);
    let (mut command, group) = match ctx.confine {
        super::confine::Confine::Kernel => confined(ctx, program, &cmd.args, &mount_root, timeout)?,
        super::confine::Confine::None => {
            let mut c = Command::new(&program);
            c.args(&cmd.args);
            #[cfg(unix)]
            std::os::unix::process::CommandExt::process_group(&mut c, 0);
            (c, None)
        }
    };
    command
        .current_dir(&cwd)
        .env_clear()
        .env("PATH", search_path())
        .env("LANG", "C.UTF-8")
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for e in ctx.env.iter().filter(|e| e.set) {
        command.env(&e.name, &e.value);
    }
    let mut child = command
        .spawn()
        .map_err(|e| api::ProcessError::Failed(format!("cannot start {}: {e}", cmd.program)))?;
    if let (Some(text), Some(mut stdin)) = (cmd.stdin, child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = stdin.write_all(text.as_bytes());
        });
    }
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    // Confined without a cgroup, the trampoline stays above the program as its subreaper: at
    // the deadline it is asked to end everything below it before it is killed.
    // (With a cgroup it supervises only if it could not join it: a short grace then.)
    let grace = match (&ctx.confine, &group) {
        (super::confine::Confine::None, _) => None,
        (_, Some(_)) => Some(SHORT_GRACE),
        (_, None) => Some(SUPERVISOR_GRACE),
    };
    let status = wait(&mut child, timeout, grace);
    // Everything the run started, detached or not, ends now (where there is a cgroup).
    drop(group);
    // The program and its process group are gone; a descendant that left the group (`setsid`)
    // may still hold the pipes. Drain briefly, then abandon them: never wait on it.
    let drain_until = Instant::now() + DRAIN;
    let (out, out_cut) = stdout.collect(drain_until);
    let (err, err_cut) = stderr.collect(drain_until);
    let status = status.ok_or_else(|| {
        api::ProcessError::TimedOut(u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX))
    })?;
    // The trampoline could not confine or start the program: say why, as a refusal.
    if status.code() == Some(super::confine::REFUSED) {
        let text = String::from_utf8_lossy(&err);
        if let Some(why) = text
            .lines()
            .find_map(|l| l.strip_prefix(super::confine::PREFIX))
        {
            return Err(api::ProcessError::Denied(format!(
                "{} was not started: {why}",
                cmd.program
            )));
        }
    }
    Ok(api::Output {
        exit_code: status.code(),
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
        truncated: out_cut || err_cut,
    })
}

/// The command that starts `program` through the trampoline, confined to the plugin's mounts.
fn confined(
    ctx: &ProcessCtx,
    program: PathBuf,
    args: &[String],
    mount_root: &Path,
    timeout: Duration,
) -> Result<(Command, Option<super::reap::RunGroup>), api::ProcessError> {
    use super::confine::{ARG, Confinement, kernel_can_confine, run_as};
    if !kernel_can_confine() {
        return Err(api::ProcessError::Denied(
            "this kernel has no Landlock, so programs cannot be confined and are refused; to \
             run them unconfined anyway, set `confine = \"none\"` for the plugin in policy.toml \
             (audit reports it as high)"
                .into(),
        ));
    }
    let Some(exe) = ctx.trampoline.as_deref() else {
        return Err(api::ProcessError::Failed(
            "no passepartout executable to start programs through".into(),
        ));
    };
    let run_as = run_as(mount_root).map_err(|e| api::ProcessError::Denied(e.to_string()))?;
    let hosts = |access: crate::runtime::manifest::Access| -> Vec<PathBuf> {
        ctx.mounts
            .iter()
            .filter(|m| m.access == access)
            .map(|m| m.resolved.clone())
            .collect()
    };
    let group = super::reap::RunGroup::create(PROCESSES);
    let spec = Confinement {
        cgroup: group.as_ref().map(super::reap::RunGroup::procs),
        program,
        args: args.to_vec(),
        read: hosts(crate::runtime::manifest::Access::ReadOnly),
        write: hosts(crate::runtime::manifest::Access::ReadWrite),
        connect_ports: ports(&ctx.net),
        cpu_secs: timeout.as_secs() + 1,
        file_size: ctx.file_size,
        memory: Some(ctx.program_memory),
        processes: PROCESSES,
        run_as,
    };
    let spec = serde_json::to_string(&spec)
        .map_err(|e| api::ProcessError::Failed(format!("cannot describe the confinement: {e}")))?;
    let mut command = Command::new(exe.as_path());
    command.arg(ARG).arg(spec);
    Ok((command, group))
}

/// The granted program's path on the daemon's PATH.
fn check_program(ctx: &ProcessCtx, program: &str) -> Result<PathBuf, api::ProcessError> {
    if program.contains('/') || program.is_empty() {
        return Err(api::ProcessError::Denied(format!(
            "`{program}`: give a program's name, not a path; the policy grants programs by name"
        )));
    }
    if !ctx.programs.iter().any(|p| p == program) {
        return Err(api::ProcessError::Denied(format!(
            "program `{program}` is not granted (granted: {}); an operator may add it to \
             `process` in policy.toml",
            if ctx.programs.is_empty() {
                "none".to_owned()
            } else {
                ctx.programs.join(", ")
            }
        )));
    }
    let found = on_path(program)
        .ok_or_else(|| api::ProcessError::NotFound(format!("`{program}` is not on the PATH")))?;
    if let Some(mount) = writable_mount_of(&found, &ctx.mounts) {
        return Err(api::ProcessError::Denied(format!(
            "`{program}` is {}, inside the plugin's read-write mount {}: a program the plugin \
             could have written is never run by name; put the system's directories before it \
             on the daemon's PATH",
            found.display(),
            mount.guest
        )));
    }
    Ok(found)
}

/// The read-write mount of `mounts` that `program` (links resolved) lies in, if any: the
/// daemon's PATH may lead into a directory the plugin can write.
fn writable_mount_of<'a>(program: &Path, mounts: &'a [Mount]) -> Option<&'a Mount> {
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_owned());
    mounts.iter().find(|m| {
        m.access == crate::runtime::manifest::Access::ReadWrite
            && [&m.resolved, &m.host]
                .into_iter()
                .any(|root| real.starts_with(root) || program.starts_with(root))
    })
}

/// The executable `program` on the daemon's PATH.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&search_path())
        // A relative entry (`.`) would resolve against the daemon's own working directory.
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

/// The daemon's `PATH`, or the usual system one when it has none (as `execvp` does).
#[allow(
    clippy::disallowed_methods,
    reason = "the PATH a granted program is searched on, as execvp reads it"
)]
pub(crate) fn search_path() -> std::ffi::OsString {
    std::env::var_os("PATH")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Every mount still where its grant was checked at load: one whose path leads elsewhere now
/// (a directory or link on the way replaced) refuses the program, confined or not, rather than
/// run it in, or confine it to, wherever that is.
fn mounts_where_checked(ctx: &ProcessCtx) -> Result<(), api::ProcessError> {
    for m in &ctx.mounts {
        m.open_where_checked()
            .map_err(|e| api::ProcessError::Denied(e.to_string()))?;
    }
    Ok(())
}

/// The host directory for guest path `cwd`, which must be inside a mount (symlinks resolved),
/// and the root of that mount (where its grant was checked).
fn working_dir(
    ctx: &ProcessCtx,
    cwd: Option<&str>,
) -> Result<(PathBuf, PathBuf), api::ProcessError> {
    let Some(first) = ctx.mounts.first() else {
        return Err(api::ProcessError::Denied(
            "the plugin has no directory mounted to run programs in; grant one in policy.toml"
                .into(),
        ));
    };
    let guest = cwd.unwrap_or(&first.guest);
    let denied = || {
        api::ProcessError::Denied(format!(
            "working directory {guest} is outside the mounts ({})",
            ctx.mounts
                .iter()
                .map(|m| m.guest.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    };
    let mount = ctx
        .mounts
        .iter()
        .filter(|m| guest == m.guest || guest.starts_with(&format!("{}/", m.guest)))
        .max_by_key(|m| m.guest.len())
        .ok_or_else(denied)?;
    let rest = guest[mount.guest.len()..].trim_start_matches('/');
    if rest.split('/').any(|part| part == "..") {
        return Err(denied());
    }
    let root = mount.resolved.clone();
    let dir = std::fs::canonicalize(root.join(rest))
        .map_err(|e| api::ProcessError::Failed(format!("working directory {guest}: {e}")))?;
    if !dir.starts_with(&root) || !dir.is_dir() {
        return Err(denied());
    }
    // A native program can write wherever its working directory is; a read-only mount is not
    // a place to run one.
    if mount.access == crate::runtime::manifest::Access::ReadOnly {
        return Err(api::ProcessError::Denied(format!(
            "working directory {guest} is on a read-only mount; programs run only in read-write \
             mounts"
        )));
    }
    Ok((dir, root))
}

/// How long the pipes are drained after the program ended or was killed.
const DRAIN: Duration = Duration::from_millis(100);

/// A pipe read on its own thread into a shared buffer, so that what it read so far can be
/// taken without waiting for its end.
struct Reader {
    kept: std::sync::Arc<std::sync::Mutex<(Vec<u8>, bool)>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Reader {
    /// What was read, waiting for the pipe's end until `until` at most. An abandoned pipe is
    /// reported as cut; its thread ends when the last holder closes it.
    fn collect(self, until: Instant) -> (Vec<u8>, bool) {
        let ended = self
            .done
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .is_ok();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let (bytes, cut) = std::mem::take(&mut *kept);
        (bytes, cut || !ended)
    }
}

/// Read a pipe to its end on a thread, keeping at most [`OUTPUT_CAP`] bytes (the rest is
/// drained, so the program never blocks on a full pipe).
fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> Reader {
    let kept = std::sync::Arc::new(std::sync::Mutex::new((Vec::new(), false)));
    let (tx, done) = std::sync::mpsc::channel();
    let shared = kept.clone();
    std::thread::spawn(move || {
        if let Some(mut pipe) = pipe {
            let mut buf = [0u8; 8192];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut kept = shared.lock().unwrap_or_else(|p| p.into_inner());
                        let room = OUTPUT_CAP.saturating_sub(kept.0.len());
                        kept.0.extend_from_slice(&buf[..n.min(room)]);
                        kept.1 |= n > room;
                    }
                }
            }
        }
        let _ = tx.send(());
    });
    Reader { kept, done }
}

/// How long a supervising trampoline gets to end its run after SIGTERM (it answers within
/// milliseconds; this bounds a run that forks faster than it is killed).
const SUPERVISOR_GRACE: Duration = Duration::from_secs(1);
/// The same where the run has a cgroup (the child is then the program itself, which the
/// cgroup kill ends anyway).
const SHORT_GRACE: Duration = Duration::from_millis(50);

/// Wait for `child` up to `timeout`; past it, kill its process group and return None. With a
/// `grace`, the child is first sent SIGTERM (a supervising trampoline then kills everything
/// below it) and given that long to end.
fn wait(
    child: &mut Child,
    timeout: Duration,
    grace: Option<Duration>,
) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                // Whatever it left running in its group (holding the output pipes open) goes
                // with it, so that reading its output ends now.
                kill_group(child);
                return Some(status);
            }
            Ok(None) if start.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                if let (Some(grace), Ok(pid)) = (grace, i32::try_from(child.id())) {
                    // SAFETY: kill(2) on our own child; no memory is touched.
                    unsafe { libc::kill(pid, libc::SIGTERM) };
                    let until = Instant::now() + grace;
                    while Instant::now() < until && matches!(child.try_wait(), Ok(None)) {
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
                kill_group(child);
                let _ = child.wait();
                return None;
            }
        }
    }
}

fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads (it was
        // started with process_group(0)); no memory is touched.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_program_found_in_a_read_write_mount_is_named_as_one() {
        use crate::runtime::manifest::Access;
        let dir = tempfile::tempdir().expect("dir");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::fs::write(bin.join("ls"), "#!/bin/sh\n").expect("write");
        // Reached through a link, as a PATH entry may be.
        std::os::unix::fs::symlink(&bin, dir.path().join("linked")).expect("link");
        let mount = |access| super::Mount {
            guest: "/workspace".into(),
            host: dir.path().to_owned(),
            access,
            resolved: std::fs::canonicalize(dir.path()).expect("real"),
        };
        let writable = [mount(Access::ReadWrite)];
        for program in [bin.join("ls"), dir.path().join("linked/ls")] {
            assert!(
                super::writable_mount_of(&program, &writable).is_some(),
                "{program:?}"
            );
        }
        assert!(super::writable_mount_of(&bin.join("ls"), &[mount(Access::ReadOnly)]).is_none());
        assert!(super::writable_mount_of(Path::new("/usr/bin/ls"), &writable).is_none());
    }

    #[test]
    fn a_program_may_connect_to_each_grants_port_and_a_bare_ipv6_address_names_none() {
        let grants =
            |g: &[&str]| super::ports(&g.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>());
        assert_eq!(grants(&["api.example.com"]), [80, 443]);
        assert_eq!(
            grants(&["api.example.com:8443", "10.0.0.1:9000"]),
            [8443, 9000]
        );
        assert_eq!(grants(&["[2001:db8::1]:8080"]), [8080]);
        // Its last group is part of the address: `fd00::9105` opens no port 9105.
        assert_eq!(grants(&["fd00::9105"]), [80, 443]);
        assert_eq!(grants(&["2001:db8::8443", "[fd00::1]"]), [80, 443]);
    }
}
