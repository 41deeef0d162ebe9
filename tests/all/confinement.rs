//! A tool reaches only what its manifest asks for AND the policy grants: mounts (with the
//! granted access), environment variables by name, and nothing else of the daemon's.

use passepartout::runtime::{PluginError, Policy, ToolFailure};
use passepartout_tests::{SKILL_TOOL_MANIFEST, SKILL_TOOL_WASM, source};

use crate::{fresh_runtime, hostile_tool, signal, still_serves};

struct Fixture {
    _cache: tempfile::TempDir,
    data: tempfile::TempDir,
    outside: tempfile::TempDir,
    tool: passepartout::runtime::Plugin,
    _rt: passepartout::runtime::Runtime,
}

fn fixture() -> Fixture {
    let (rt, cache) = fresh_runtime();
    let data = tempfile::tempdir().expect("temp dir");
    let outside = tempfile::tempdir().expect("temp dir");
    std::fs::write(data.path().join("inside.txt"), "granted content").expect("write");
    std::fs::write(
        outside.path().join("secret.txt"),
        "SECRET outside the mount",
    )
    .expect("write");
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), data.path().join("link"))
        .expect("symlink");
    let policy = format!(
        r#"[plugins.hostile-tool]
fs = [{{ guest = "/data", host = "{}", access = "read-only" }}]
env = ["CARGO_PKG_NAME", "PATH"]
"#,
        data.path().display()
    );
    let tool = hostile_tool(&rt, &policy);
    Fixture {
        _cache: cache,
        data,
        outside,
        tool,
        _rt: rt,
    }
}

fn failure(result: Result<String, PluginError>) -> ToolFailure {
    match result {
        Err(PluginError::Tool { error, .. }) => error,
        other => panic!("expected the tool's own I/O error, got {other:?}"),
    }
}

#[test]
fn reads_inside_its_mount() {
    let f = fixture();
    assert_eq!(
        f.tool
            .call_tool("read", r#"{"path":"/data/inside.txt"}"#)
            .expect("read"),
        "granted content"
    );
}

#[test]
fn cannot_open_etc_passwd() {
    let f = fixture();
    let err = failure(f.tool.call_tool("read", r#"{"path":"/etc/passwd"}"#));
    // No preopen covers /etc: the path does not exist for the plugin.
    assert!(
        matches!(&err, ToolFailure::Failed(m) if m.starts_with("NotFound")),
        "{err:?}"
    );
    still_serves(&f.tool);
}

#[test]
fn cannot_climb_out_of_a_mount_with_dotdot() {
    let f = fixture();
    let escape = format!(
        r#"{{"path":"/data/../../../..{}/secret.txt"}}"#,
        f.outside.path().display()
    );
    let err = failure(f.tool.call_tool("read", &escape));
    assert!(
        matches!(&err, ToolFailure::Failed(m) if m.starts_with("PermissionDenied")),
        "{err:?}"
    );
    let err = failure(
        f.tool
            .call_tool("read", r#"{"path":"/data/../etc/passwd"}"#),
    );
    assert!(
        matches!(&err, ToolFailure::Failed(m) if m.starts_with("PermissionDenied")),
        "{err:?}"
    );
}

#[cfg(unix)]
#[test]
fn cannot_follow_a_symlink_out_of_a_mount() {
    let f = fixture();
    let err = failure(f.tool.call_tool("read", r#"{"path":"/data/link"}"#));
    assert!(
        matches!(&err, ToolFailure::Failed(m) if m.starts_with("PermissionDenied")),
        "{err:?}"
    );
}

#[test]
fn cannot_write_into_a_read_only_mount() {
    let f = fixture();
    // The manifest asks read-write; the policy grants read-only; read-only wins.
    let err = failure(
        f.tool
            .call_tool("write", r#"{"path":"/data/new.txt","content":"x"}"#),
    );
    assert!(
        matches!(&err, ToolFailure::Failed(m) if m.starts_with("PermissionDenied")),
        "{err:?}"
    );
    assert!(!f.data.path().join("new.txt").exists());
    let err = failure(f.tool.call_tool(
        "write",
        r#"{"path":"/data/inside.txt","content":"overwritten"}"#,
    ));
    assert!(
        matches!(&err, ToolFailure::Failed(m) if m.starts_with("PermissionDenied")),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read_to_string(f.data.path().join("inside.txt")).expect("read"),
        "granted content"
    );
}

#[test]
fn sees_only_the_environment_variables_asked_for_and_granted() {
    // cargo sets CARGO_PKG_NAME and CARGO_MANIFEST_DIR for test runs. The manifest asks for
    // both, the policy grants CARGO_PKG_NAME and PATH: only CARGO_PKG_NAME gets through.
    let f = fixture();
    let env = f.tool.call_tool("env", "{}").expect("env");
    let expected =
        std::env::var("CARGO_PKG_NAME").map_or(String::new(), |v| format!("CARGO_PKG_NAME={v}\n"));
    assert_eq!(
        env, expected,
        "nothing else of the daemon's environment is inherited"
    );
    let args = f.tool.call_tool("args", "{}").expect("args");
    assert_eq!(args, "", "no arguments are inherited");
}

#[test]
fn has_no_network() {
    let f = fixture();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let err = failure(
        f.tool
            .call_tool("connect", &format!(r#"{{"addr":"{addr}"}}"#)),
    );
    assert!(matches!(&err, ToolFailure::Failed(_)), "{err:?}");
    listener.set_nonblocking(true).expect("nonblocking");
    assert!(listener.accept().is_err(), "no connection may arrive");
}

/// The hostile tool with `/data` mounted read-write and a disk limit of `disk_mib`.
fn writer(
    disk_mib: u64,
) -> (
    passepartout::runtime::Plugin,
    tempfile::TempDir,
    tempfile::TempDir,
) {
    let (rt, cache) = fresh_runtime();
    let data = tempfile::tempdir().expect("temp dir");
    // The manifest asks read-write; this policy grants it.
    let policy = format!(
        "[plugins.hostile-tool]\nfs = [{{ guest = \"/data\", host = \"{}\", access = \"read-write\" }}]\n\
         limits = {{ disk_mib = {disk_mib} }}\n",
        data.path().display()
    );
    (hostile_tool(&rt, &policy), data, cache)
}

/// Call `tool` (a [`writer`] of 8 MiB) with `args`, which must end at the disk limit.
fn past_8_mib(tool: &passepartout::runtime::Plugin, name: &str, args: &str) {
    let err = tool.call_tool(name, args).expect_err("past an 8 MiB limit");
    assert!(
        matches!(err, PluginError::DiskLimit { cap_bytes, .. } if cap_bytes == 8 << 20),
        "{name} {args}: {err:?}"
    );
    assert!(err.to_string().contains("disk limit of 8 MiB"), "{err}");
}

#[test]
fn a_1_gib_write_stops_at_the_disk_limit() {
    let (tool, data, _cache) = writer(8);
    past_8_mib(&tool, "fill", r#"{"path":"/data/big","mib":"1024"}"#);
    let size = std::fs::metadata(data.path().join("big")).map_or(0, |m| m.len());
    assert!(size <= 8 << 20, "{size} bytes written past the limit");
    // Under the limit, writing works; the limit is per call.
    assert_eq!(
        tool.call_tool("fill", r#"{"path":"/data/small","mib":"4"}"#)
            .expect("4 MiB fits"),
        "filled"
    );
    assert_eq!(
        tool.call_tool("fill", r#"{"path":"/data/small2","mib":"4"}"#)
            .expect("and again in the next call"),
        "filled"
    );
    still_serves(&tool);
}

#[test]
fn a_sparse_file_is_counted_at_the_size_it_is_given() {
    let (tool, data, _cache) = writer(8);
    past_8_mib(&tool, "sparse", r#"{"path":"/data/hole","gib":"1024"}"#);
    // One byte written a TiB in makes the same hole.
    past_8_mib(
        &tool,
        "sparse",
        r#"{"path":"/data/hole","gib":"1024","how":"seek"}"#,
    );
    let size = std::fs::metadata(data.path().join("hole")).map_or(0, |m| m.len());
    assert_eq!(size, 0, "the file was given its size");
    // Under the limit, setting a size works.
    assert_eq!(
        tool.call_tool("sparse", r#"{"path":"/data/hole","gib":"0"}"#)
            .expect("0 bytes fit"),
        "sized"
    );
    still_serves(&tool);
}

#[test]
fn files_and_directories_made_count_against_the_disk_limit() {
    let (tool, data, _cache) = writer(8);
    std::fs::create_dir(data.path().join("litter")).expect("mkdir");
    past_8_mib(
        &tool,
        "litter",
        r#"{"dir":"/data/litter","count":"1000000"}"#,
    );
    let made = std::fs::read_dir(data.path().join("litter"))
        .expect("read dir")
        .count();
    let most = (8 << 20) / passepartout::runtime::capabilities::disk::ENTRY_BYTES;
    assert!(made as u64 <= most, "{made} entries made, at most {most}");
    assert!(made > 100, "only {made} entries made");
    // A directory made again fails (it exists) and costs nothing: 10,000 tries would be
    // 40 MiB.
    assert_eq!(
        tool.call_tool(
            "litter",
            r#"{"dir":"/data/litter","count":"10000","again":"true"}"#
        )
        .expect("failed creations are not counted"),
        "failed 10000"
    );
    // Opening what exists, even with `create`, makes nothing and costs nothing: the whole
    // limit is left to write.
    assert_eq!(
        tool.call_tool("fill", r#"{"path":"/data/litter/0","mib":"8"}"#)
            .expect("an existing file opened again"),
        "filled"
    );
    still_serves(&tool);
}

#[test]
fn a_guest_cannot_plant_a_symlink_out_of_its_mount() {
    let (tool, data, _cache) = writer(8);
    let err = tool
        .call_tool(
            "symlink",
            r#"{"target":"../../../../../../etc","link":"escape"}"#,
        )
        .expect_err("refused");
    assert!(
        err.to_string().contains("NotPermitted") || err.to_string().contains("not-permitted"),
        "{err}"
    );
    assert!(
        std::fs::symlink_metadata(data.path().join("escape")).is_err(),
        "no link was made"
    );
    still_serves(&tool);
}

#[test]
fn describe_runs_with_no_capability_whatever_the_plugin_is_granted() {
    // A build being audited or updated is described before anyone consented to it: its
    // describe() must not act with the grants of the plugin it would replace.
    let (rt, _cache) = fresh_runtime();
    let data = tempfile::tempdir().expect("temp dir");
    let policy = format!(
        r#"[plugins.hostile-tool]
fs = [{{ guest = "/data", host = "{}", access = "read-write" }}]
[plugins.hostile-tool.config]
write_in_describe = "/data/from-describe.txt"
"#,
        data.path().display()
    );
    let tool = hostile_tool(&rt, &policy);
    assert!(
        !data.path().join("from-describe.txt").exists(),
        "describe() wrote into the mount"
    );
    // The same grant serves a tool call: the mount is writable, so the check above can fail.
    tool.call_tool("write", r#"{"path":"/data/from-call.txt","content":"x"}"#)
        .expect("a tool call writes");
    assert!(data.path().join("from-call.txt").exists());
}

#[test]
fn describe_sees_neither_the_clock_nor_randomness_so_it_says_at_load_what_it_said_at_install() {
    // The pins hold the manifest and the component; what describe() tells the model (tool
    // names, descriptions, effects) follows from them only if describe() cannot look at the
    // time or draw a random number: else a pinned plugin could offer other tools later, or
    // take another plugin's tool name once installed.
    let (rt, _cache) = fresh_runtime();
    let policy = "[plugins.hostile-tool.config]\nvaries_in_describe = true\n";
    let described = || -> String {
        let tool = hostile_tool(&rt, policy);
        tool.tools
            .iter()
            .find(|t| t.name == "later")
            .map(|t| t.description.clone())
            .expect("the varying tool is offered")
    };
    let first = described();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let second = described();
    assert_eq!(
        first, second,
        "describe() said something else a second later"
    );
    assert!(first.starts_with("wall 0 "), "{first}");
}

#[test]
fn a_skills_exports_change_nothing_whatever_its_plugin_is_granted() {
    // A skill's triggers() and prompt() run on every event, before any action exists: no
    // gate, approval or journal record sees them. A plugin that is also a tool, granted a
    // read-write mount for it, must not write (or run programs, or reach hosts) from them.
    let (rt, _cache) = fresh_runtime();
    let data = tempfile::tempdir().expect("temp dir");
    let policy = Policy::parse(&format!(
        "[plugins.skill-tool]\nfs = [{{ guest = \"/data\", host = \"{}\", access = \"read-write\" }}]\n",
        data.path().display()
    ))
    .expect("policy");
    let plugin = rt
        .load(
            &source(SKILL_TOOL_WASM, SKILL_TOOL_MANIFEST, |m| m),
            &policy,
        )
        .expect("the skill-tool loads");
    let mut asked = signal();
    asked.text = Some("#skill-tool".into());
    assert!(plugin.skill_triggers(&asked).expect("triggers"));
    let prompt = plugin
        .skill_prompt(&asked)
        .expect("prompt")
        .expect("a prompt");
    assert!(prompt.starts_with("SKILL-TOOL PROMPT: refused"), "{prompt}");
    for written in ["from-triggers.txt", "from-prompt.txt"] {
        assert!(
            !data.path().join(written).exists(),
            "{written}: a skill export wrote into the mount"
        );
    }
    // The same grant serves the tool: the mount is writable, so the checks above can fail.
    plugin
        .call_tool("write", r#"{"name":"from-tool.txt","content":"x"}"#)
        .expect("the tool writes");
    assert!(data.path().join("from-tool.txt").exists());
}

#[test]
fn a_tool_that_says_it_is_read_only_writes_nothing_whatever_its_plugin_is_granted() {
    // Gates pass a read-only tool without an explanation and no undo point is taken before
    // it: the word of a tool that lies must not hold the door open.
    let (rt, _cache) = fresh_runtime();
    let data = tempfile::tempdir().expect("temp dir");
    let kept = data.path().join("kept.txt");
    std::fs::write(&kept, "original").expect("write");
    let policy = |read_only: &str| {
        format!(
            r#"[plugins.hostile-tool]
fs = [{{ guest = "/data", host = "{}", access = "read-write" }}]
[plugins.hostile-tool.config]
read_only = [{read_only}]
"#,
            data.path().display()
        )
    };
    let liar = hostile_tool(&rt, &policy(r#""write", "fill", "read""#));
    for (tool, args) in [
        (
            "write",
            r#"{"path":"/data/kept.txt","content":"overwritten"}"#,
        ),
        ("write", r#"{"path":"/data/new.txt","content":"planted"}"#),
        ("fill", r#"{"path":"/data/big.bin","mib":"1"}"#),
    ] {
        let denied = failure(liar.call_tool(tool, args));
        assert!(
            matches!(&denied, ToolFailure::Failed(m) if m.starts_with("PermissionDenied")),
            "{tool} {args}: {denied:?}"
        );
    }
    assert_eq!(std::fs::read_to_string(&kept).expect("read"), "original");
    assert!(!data.path().join("new.txt").exists());
    assert!(!data.path().join("big.bin").exists());
    // What it may do, it still does: read the mount.
    assert_eq!(
        liar.call_tool("read", r#"{"path":"/data/kept.txt"}"#)
            .expect("read"),
        "original"
    );
    // The same grant, the same code, a tool that does not claim it: the mount is writable,
    // so the refusals above are the claim's.
    let honest = hostile_tool(&rt, &policy(""));
    honest
        .call_tool(
            "write",
            r#"{"path":"/data/kept.txt","content":"overwritten"}"#,
        )
        .expect("writes");
    assert_eq!(std::fs::read_to_string(&kept).expect("read"), "overwritten");
}

/// The file descriptors this process holds now.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count)
}

#[test]
fn a_tool_cannot_hold_more_open_files_than_its_share() {
    // Each file a guest opens is one of the daemon's descriptors: a call that keeps opening
    // must not take the ones the daemon needs for its clients, its journal and other calls.
    // As the daemon does: past the usual 1,024, only the runtime's own bound can stop it.
    assert!(passepartout::daemon::raise_open_files_limit() > 4096);
    let f = fixture();
    let before = open_fds();
    let hoarded = f
        .tool
        .call_tool("hoard", r#"{"path":"/data/inside.txt","times":"3000"}"#);
    let err = hoarded
        .expect_err("a call kept 3000 files open")
        .to_string();
    // The runtime's bound (the call's resource table is full), not the process's own limit.
    assert!(err.contains("resource table has no free keys"), "{err}");
    assert!(
        open_fds() <= before + 8,
        "{} descriptors after the call, {before} before",
        open_fds()
    );
    still_serves(&f.tool);
}
