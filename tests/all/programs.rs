//! Granted programs are confined by the kernel: a program the policy grants (`cat`, `bash`)
//! reads and writes its plugin's mount and nothing else — not a key file under HOME, not
//! `/etc/shadow`, not the daemon's `/proc/PID/environ` — cannot connect to the daemon's port or
//! a Unix socket, cannot make a symlink, and writes no file past the plugin's disk limit.
//! Each case is what a hostile model would ask the `shell` tool for.

use std::io::Read;

use passepartout::runtime::{Plugin, Policy};
use passepartout_tests::{give_to_nobody, program_dir};
use serde_json::json;

use crate::fresh_runtime;

struct Shell {
    plugin: Plugin,
    ws: tempfile::TempDir,
    _scratch: tempfile::TempDir,
}

fn shell(extra: &str) -> Shell {
    let ws = program_dir();
    std::fs::write(ws.path().join("inside.txt"), "granted content\n").expect("write");
    give_to_nobody(ws.path());
    let (rt, scratch) = fresh_runtime();
    let mut source = crate::builtins(&["shell"]).pop().expect("shell");
    // The hostile model's programs: the manifest asks for them too.
    source.manifest = source
        .manifest
        .replace(
            "\"git\"]",
            "\"git\", \"bash\", \"curl\", \"dd\", \"ln\", \"perl\", \"tail\"]",
        )
        // Whatever hosts the operator grants (the policy below grants none unless `extra`
        // does).
        .replace("\nprocess = [", "\nnet = [\"*\"]\nprocess = [")
        .into();
    let policy = format!(
        "[plugins.shell]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]\n\
         process = [\"cat\", \"bash\", \"curl\", \"dd\", \"ln\", \"perl\", \"tail\"]\n{extra}",
        ws.path().display()
    );
    let plugin = rt
        .load(&source, &Policy::parse(&policy).expect("policy"))
        .unwrap_or_else(|e| panic!("shell loads: {e}"));
    Shell {
        plugin,
        ws,
        _scratch: scratch,
    }
}

/// Run `program args` through the shell tool; the tool's whole report (exit code, stdout,
/// stderr), or its error.
fn run(s: &Shell, program: &str, args: &[&str]) -> String {
    match s.plugin.call_tool(
        "shell",
        &json!({"program": program, "args": args, "cwd": "/workspace"}).to_string(),
    ) {
        Ok(out) => out,
        Err(e) => format!("ERROR: {e}"),
    }
}

fn refused(out: &str, what: &str) {
    assert!(
        !out.contains("EXIT-CODE: 0"),
        "{what} must be refused by the kernel: {out}"
    );
    assert!(
        out.contains("Permission denied") || out.contains("Operation not permitted"),
        "{what}: the refusal is the kernel's: {out}"
    );
}

#[test]
fn a_granted_cat_reads_its_mount_and_nothing_else() {
    let s = shell("");
    let out = run(&s, "cat", &["inside.txt"]);
    assert!(
        out.contains("EXIT-CODE: 0") && out.contains("granted content"),
        "{out}"
    );

    // A key file under a temporary HOME, readable by anyone as far as mode bits go.
    let home = tempfile::tempdir().expect("home");
    let ssh = home.path().join(".ssh");
    std::fs::create_dir(&ssh).expect("mkdir");
    std::fs::write(ssh.join("id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n").expect("key");
    give_to_nobody(home.path());
    let key = ssh.join("id_rsa");
    refused(
        &run(&s, "cat", &[key.to_str().expect("utf-8")]),
        "a key under HOME",
    );
    refused(&run(&s, "cat", &["/etc/shadow"]), "/etc/shadow");
    refused(&run(&s, "cat", &["/etc/passwd"]), "/etc/passwd");
    // The daemon's environment (here the test process stands in for it).
    let environ = format!("/proc/{}/environ", std::process::id());
    refused(&run(&s, "cat", &[&environ]), "the daemon's environ");
    // Escaping the mount by `..` through the program's own path resolution.
    refused(
        &run(&s, "cat", &["../../../../../../etc/shadow"]),
        "a path out of the mount",
    );
}

/// Nothing connected to `listener` (checked without waiting: the program has ended).
fn nobody_connected(listener: &std::net::TcpListener) {
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "a connection arrived");
}

#[test]
fn a_granted_program_cannot_connect_to_the_daemon_or_a_unix_socket() {
    let s = shell("");
    // The programs do run: the refusals below are not a failure to start.
    let out = run(&s, "bash", &["-c", "echo ALIVE"]);
    assert!(
        out.contains("EXIT-CODE: 0") && out.contains("ALIVE"),
        "{out}"
    );

    // The daemon's port: a listener in this process stands in for it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let out = run(
        &s,
        "bash",
        &[
            "-c",
            &format!("echo approve > /dev/tcp/127.0.0.1/{port} && echo CONNECTED"),
        ],
    );
    assert!(!out.contains("CONNECTED"), "{out}");
    refused(&out, "a TCP connect without a net grant");
    nobody_connected(&listener);
    let out = run(
        &s,
        "curl",
        &["-sS", "-m", "2", &format!("http://127.0.0.1:{port}/")],
    );
    assert!(!out.contains("EXIT-CODE: 0"), "{out}");
    nobody_connected(&listener);

    // A Unix socket in the mount itself (D-Bus and docker.sock would be elsewhere; this one is
    // even inside the mount), written to with curl.
    let path = s.ws.path().join("daemon.sock");
    let unix_listener = std::os::unix::net::UnixListener::bind(&path).expect("bind unix");
    give_to_nobody(&path);
    let out = run(
        &s,
        "curl",
        &[
            "-sS",
            "-m",
            "2",
            "--unix-socket",
            "daemon.sock",
            "http://daemon/approve",
        ],
    );
    assert!(!out.contains("EXIT-CODE: 0"), "{out}");
    unix_listener.set_nonblocking(true).expect("nonblocking");
    assert!(unix_listener.accept().is_err(), "nobody connected");

    // UDP is refused as well (Landlock has no UDP rules; seccomp has).
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind udp");
    let udp_port = udp.local_addr().expect("addr").port();
    let out = run(
        &s,
        "bash",
        &[
            "-c",
            &format!("echo hi > /dev/udp/127.0.0.1/{udp_port} && echo SENT"),
        ],
    );
    assert!(!out.contains("SENT"), "{out}");
    udp.set_nonblocking(true).expect("nonblocking");
    assert!(udp.recv(&mut [0u8; 16]).is_err(), "a datagram arrived");
}

#[test]
fn a_net_grant_opens_only_its_port() {
    let granted = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let other = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let (gp, op) = (
        granted.local_addr().expect("addr").port(),
        other.local_addr().expect("addr").port(),
    );
    let s = shell(&format!("net = [\"127.0.0.1:{gp}\"]\n"));
    let connect = |port: u16| format!("echo hello > /dev/tcp/127.0.0.1/{port} && echo CONNECTED");
    let out = run(&s, "bash", &["-c", &connect(gp)]);
    assert!(out.contains("CONNECTED"), "the granted port: {out}");
    let out = run(&s, "bash", &["-c", &connect(op)]);
    assert!(!out.contains("CONNECTED"), "another port: {out}");
    refused(&out, "a port not granted");
    nobody_connected(&other);
    // TCP Fast Open: `sendto` with MSG_FASTOPEN connects without calling connect(2), the
    // hook Landlock's port rules sit on (landlock-lsm/linux#41). perl is a program a plugin
    // might well be granted; any native code would do the same.
    let fast_open = |port: u16| {
        format!(
            "use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
             my $a = sockaddr_in({port}, inet_aton(\"127.0.0.1\")); \
             defined(send($s, \"approve\\n\", 0x20000000, $a)) or die \"send: $!\\n\"; \
             print \"SENT\\n\";"
        )
    };
    let out = run(&s, "perl", &["-e", &fast_open(op)]);
    assert!(!out.contains("SENT"), "Fast Open to another port: {out}");
    refused(&out, "a Fast Open send");
    nobody_connected(&other);
    // listen(2) on a socket never bound picks a port itself, past Landlock's bind rules.
    let out = run(
        &s,
        "perl",
        &[
            "-e",
            "use Socket; socket(my $s, PF_INET, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
             listen($s, 1) or die \"listen: $!\\n\"; print \"LISTENING\\n\";",
        ],
    );
    assert!(!out.contains("LISTENING"), "a listening socket: {out}");
    refused(&out, "listen on an unbound socket");
    // Plain sends on a connected socket still work (MSG_FASTOPEN is what is refused).
    let out = run(
        &s,
        "perl",
        &[
            "-e",
            &format!(
                "use IO::Socket::INET; my $s = IO::Socket::INET->new(\"127.0.0.1:{gp}\") or die \"$!\\n\"; \
                 send($s, \"hello\\n\", 0) or die \"send: $!\\n\"; print \"SENT\\n\";"
            ),
        ],
    );
    assert!(
        out.contains("SENT"),
        "a send on a granted connection: {out}"
    );
}

#[test]
fn a_granted_program_cannot_make_symlinks_or_write_past_the_disk_limit() {
    let s = shell("limits = { disk_mib = 1 }\n");
    refused(&run(&s, "ln", &["-s", "/etc", "escape"]), "a symlink");
    assert!(!s.ws.path().join("escape").exists());
    // Two MiB of zeros into a file in the mount: RLIMIT_FSIZE stops it at 1 MiB.
    let out = run(
        &s,
        "dd",
        &["if=/dev/zero", "of=big", "bs=65536", "count=32"],
    );
    assert!(!out.contains("EXIT-CODE: 0"), "{out}");
    let size = std::fs::metadata(s.ws.path().join("big")).map_or(0, |m| m.len());
    assert!(
        size > 0 && size <= 1 << 20,
        "wrote {size} bytes against a 1 MiB limit"
    );
    // What is inside the mount still works, writing included.
    let out = run(&s, "bash", &["-c", "echo fine > ok.txt && echo OK"]);
    assert!(out.contains("OK"), "{out}");
    let mut text = String::new();
    std::fs::File::open(s.ws.path().join("ok.txt"))
        .and_then(|mut f| f.read_to_string(&mut text))
        .expect("the program wrote in its mount");
    assert_eq!(text, "fine\n");
}

#[test]
fn a_granted_program_takes_no_more_memory_than_its_limit() {
    let s = shell("limits = { program_memory_mib = 64 }\n");
    // 200 MiB in one string, past the limit; 8 MiB is within it. (First: were the limit
    // gone, this fails at once, before the line below takes the machine's memory.)
    let out = run(
        &s,
        "perl",
        &["-e", "my $x = 'a' x (200 << 20); print length($x)"],
    );
    assert!(!out.contains("209715200"), "{out}");
    assert!(out.contains("Out of memory"), "{out}");
    let out = run(
        &s,
        "perl",
        &["-e", "my $x = 'a' x (8 << 20); print length($x)"],
    );
    assert!(out.contains("8388608"), "{out}");
    // A line that never ends: tail keeps all of it, and would take the machine's memory.
    let out = run(&s, "tail", &["/dev/zero"]);
    assert!(!out.contains("EXIT-CODE: 0"), "{out}");
    assert!(out.contains("memory exhausted"), "{out}");
}

#[test]
fn confine_none_runs_unconfined_and_says_so() {
    let s = shell("confine = \"none\"\n");
    let out = run(&s, "cat", &["/etc/passwd"]);
    assert!(
        out.contains("root:"),
        "unconfined reads what the daemon can: {out}"
    );
}

/// Where the daemon can make no cgroup (not root, no delegation), the trampoline stays above
/// the program as its subreaper and ends everything the program left, at its end and at the
/// deadline. Run here as an unprivileged user, straight through the trampoline.
/// `sh -c script` through the trampoline, `ws` its read-write mount, as an unprivileged user
/// (nobody, when the tests run as root), as a daemon that is not root runs its programs; in
/// `cgroup` (its `cgroup.procs`) when given, else supervised.
fn trampoline_as_a_user(
    ws: &std::path::Path,
    script: &str,
    cgroup: Option<std::path::PathBuf>,
) -> std::process::Command {
    run_as_a_user(
        &sh_spec(script, Vec::new(), vec![ws.to_owned()], cgroup),
        ws,
    )
}

/// What the daemon hands the trampoline to run `sh -c script` with `read` and `write` its
/// mounts (each the path its grant was checked on).
fn sh_spec(
    script: &str,
    read: Vec<std::path::PathBuf>,
    write: Vec<std::path::PathBuf>,
    cgroup: Option<std::path::PathBuf>,
) -> passepartout::runtime::capabilities::confine::Confinement {
    let sh = ["/usr/bin/sh", "/bin/sh"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("a POSIX shell");
    passepartout::runtime::capabilities::confine::Confinement {
        program: sh.into(),
        args: vec!["-c".into(), script.into()],
        read,
        write,
        connect_ports: Vec::new(),
        cpu_secs: 10,
        file_size: 1 << 20,
        processes: 64,
        memory: None,
        run_as: None,
        cgroup,
    }
}

/// `spec` through the trampoline in `cwd`, as an unprivileged user (nobody, when the tests run
/// as root).
fn run_as_a_user(
    spec: &passepartout::runtime::capabilities::confine::Confinement,
    cwd: &std::path::Path,
) -> std::process::Command {
    use passepartout::runtime::capabilities::confine::{ARG, NOBODY};
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(passepartout_tests::trampoline());
    cmd.arg(ARG)
        .arg(serde_json::to_string(spec).expect("spec"))
        .current_dir(cwd)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    }) {
        cmd.uid(NOBODY).gid(NOBODY);
    }
    cmd
}

/// The daemon checks each granted directory at load and hands the trampoline the path it
/// checked. A directory on the way replaced by a link since (to the daemon's keys, say) makes
/// the trampoline run nothing, for a read-only and a read-write mount alike: the program
/// neither reads nor writes where the link leads.
#[test]
fn a_granted_directory_replaced_by_a_link_after_its_check_runs_nothing() {
    use passepartout::runtime::capabilities::confine::REFUSED;
    let ws = program_dir();
    let secret = program_dir();
    std::fs::write(secret.path().join("approver.key"), "the secret").expect("key");
    for writable in [false, true] {
        let granted = ws.path().join(if writable { "rw" } else { "ro" });
        std::fs::create_dir(&granted).expect("mkdir");
        give_to_nobody(ws.path());
        give_to_nobody(secret.path());
        // The path as its grant was checked; then the directory is replaced by a link.
        let checked = granted.canonicalize().expect("resolves");
        std::fs::remove_dir(&granted).expect("rmdir");
        std::os::unix::fs::symlink(secret.path(), &granted).expect("symlink");
        let at = checked.display();
        let script = format!("cat {at}/approver.key; echo planted > {at}/planted; echo ran");
        let (read, write) = if writable {
            (Vec::new(), vec![checked.clone()])
        } else {
            (vec![checked.clone()], Vec::new())
        };
        let out = run_as_a_user(&sh_spec(&script, read, write, None), ws.path())
            .output()
            .expect("runs");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(
            out.status.code(),
            Some(REFUSED),
            "writable {writable}: refused, nothing ran: {stdout}{stderr}"
        );
        assert!(
            !stdout.contains("ran") && !stdout.contains("the secret"),
            "{stdout}"
        );
        assert!(
            !secret.path().join("planted").exists(),
            "writable {writable}"
        );
        let secret_now = secret.path().canonicalize().expect("secret");
        assert!(
            stderr.contains(&format!("now leads to {}", secret_now.display())),
            "writable {writable}: the refusal says where it leads: {stderr}"
        );
        // A read-write mount is refused before it is bound into the program's view.
        if writable && passepartout::runtime::capabilities::read_only_view::available() {
            assert!(
                stderr.contains(&format!("cannot bind {at}")),
                "refused by the view: {stderr}"
            );
        }
    }
}

#[test]
fn a_program_of_a_daemon_that_is_not_root_cannot_chmod_what_its_user_owns_outside_its_mount() {
    use std::os::unix::fs::PermissionsExt;
    assert!(
        passepartout::runtime::capabilities::read_only_view::available(),
        "this machine allows user namespaces: the view must be made"
    );
    let ws = program_dir();
    std::fs::write(ws.path().join("inside.sh"), "echo hi\n").expect("write");
    // The daemon's own files (a key, the database), owned by the user programs run as.
    let daemon = program_dir();
    let key = daemon.path().join("approver.key");
    std::fs::write(&key, "secret").expect("key");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    give_to_nobody(ws.path());
    give_to_nobody(daemon.path());
    let key_path = key.to_str().expect("utf-8");
    let script = format!(
        "chmod 644 {key_path}; echo chmod=$?; touch -d 2000-01-01 {key_path}; echo touch=$?; \
         chmod +x inside.sh && echo inside=ok"
    );
    // Supervised (no cgroup), and as the program itself in a cgroup it joined (a file
    // standing in for `cgroup.procs`: the trampoline then confines itself, with the
    // allocator's threads running, rather than a forked child).
    let procs = daemon.path().join("cgroup.procs");
    std::fs::write(&procs, "").expect("procs");
    give_to_nobody(daemon.path());
    for cgroup in [None, Some(procs)] {
        let joined = cgroup.is_some();
        let out = trampoline_as_a_user(ws.path(), &script, cgroup)
            .output()
            .expect("runs");
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            stdout.contains("chmod=1"),
            "joined {joined}: {stdout}{stderr}"
        );
        assert!(
            stdout.contains("touch=1"),
            "joined {joined}: {stdout}{stderr}"
        );
        assert!(stderr.contains("Read-only file system"), "{stderr}");
        let mode = std::fs::metadata(&key).expect("key").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "joined {joined}: the key's mode changed");
        // Inside its read-write mount, the program changes modes as ever.
        assert!(stdout.contains("inside=ok"), "{stdout}{stderr}");
        let script_mode = std::fs::metadata(ws.path().join("inside.sh"))
            .expect("script")
            .permissions()
            .mode();
        assert!(script_mode & 0o111 != 0, "{script_mode:o}");
    }
}

/// A program that leaves a chain of 2,000 processes, each in a session of its own and the parent
/// of the next: the trampoline (no cgroup) ends them all, not one link at a time.
#[test]
fn without_a_cgroup_a_chain_of_sessions_the_program_left_ends_with_it() {
    let ws = program_dir();
    // Each link starts the next in a new session, then sleeps as its parent.
    std::fs::write(
        ws.path().join("link.sh"),
        "n=$1\nif [ \"$n\" -gt 0 ]; then setsid sh ./link.sh $((n - 1)) & fi\nexec sleep 7.99\n",
    )
    .expect("script");
    give_to_nobody(ws.path());
    // The program ends after 1 s; the chain, still growing, ends with it.
    ends_with_its_program(
        ws.path(),
        "sh ./link.sh 2000 & sleep 1; echo started",
        "7.99",
    );
}

/// `script` run through the trampoline (no cgroup) says `started` and ends well within 3 s
/// together with what it left: no `sleep marker` runs after.
fn ends_with_its_program(ws: &std::path::Path, script: &str, marker: &str) {
    let start = std::time::Instant::now();
    let out = trampoline_as_a_user(ws, script, None)
        .output()
        .expect("runs");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("started"),
        "{out:?}"
    );
    assert!(
        start.elapsed() < std::time::Duration::from_secs(3),
        "the trampoline took {:?}",
        start.elapsed()
    );
    crate::no_process_runs(marker);
}

#[test]
fn without_a_cgroup_the_trampoline_reaps_what_the_program_left_as_an_unprivileged_user() {
    use std::time::{Duration, Instant};
    let ws = program_dir();
    let trampoline = |script: &str| trampoline_as_a_user(ws.path(), script, None);
    // At the program's end: its detached child goes with it.
    ends_with_its_program(ws.path(), "setsid -f sleep 7.77; echo started", "7.77");

    // At the deadline (the host's SIGTERM): the same, within 100 ms.
    let mut child = trampoline("setsid -f sleep 7.88; sleep 30")
        .spawn()
        .expect("runs");
    std::thread::sleep(Duration::from_millis(300));
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let signalled = Instant::now();
    let status = child.wait().expect("ends");
    assert!(
        signalled.elapsed() < Duration::from_millis(100),
        "ended {:?} after SIGTERM",
        signalled.elapsed()
    );
    assert!(!status.success());
    crate::no_process_runs("7.88");
}

#[test]
fn a_granted_program_may_open_1024_files_whatever_the_daemon_may() {
    // The daemon raises its own limit (for its clients and plugin calls); a program that
    // opens files without end meets the usual one, and cannot hard-raise it back.
    assert!(passepartout::daemon::raise_open_files_limit() > 4096);
    let s = shell("");
    let out = run(
        &s,
        "bash",
        &[
            "-c",
            "ulimit -Sn; ulimit -Hn; ulimit -n 4096 || echo REFUSED",
        ],
    );
    assert!(out.contains("EXIT-CODE: 0"), "{out}");
    assert!(out.contains("1024\n1024\n"), "{out}");
    assert!(out.contains("REFUSED"), "{out}");
}
