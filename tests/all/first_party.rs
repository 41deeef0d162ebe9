//! The first-party plugins, as the components the binary embeds.

use passepartout::runtime::types::Verdict;
use passepartout::runtime::{Plugin, PluginError, Policy, ToolFailure, loader};
use serde_json::json;

use crate::{action, fresh_runtime, signal};

fn load(
    policy: &str,
) -> (
    Vec<Plugin>,
    passepartout::runtime::Runtime,
    tempfile::TempDir,
) {
    let (rt, cache) = fresh_runtime();
    let policy = Policy::parse(policy).expect("policy");
    let report = rt.load_all(&loader::builtin_sources(), &policy);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    (report.plugins, rt, cache)
}

fn find<'a>(plugins: &'a [Plugin], name: &str) -> &'a Plugin {
    plugins
        .iter()
        .find(|p| p.id.name == name)
        .expect("plugin loaded")
}

#[test]
fn shell_guard_rejects_destructive_commands_with_a_reason() {
    let (plugins, _rt, _c) = load("");
    let guard = find(&plugins, "shell-guard");
    let verdict = |args| {
        guard
            .check(&action("shell", args), &signal())
            .expect("check")
    };
    assert_eq!(
        verdict(json!({"command": "rm -rf /"})),
        Verdict::Reject("rm -r / deletes a system directory".into())
    );
    assert!(
        matches!(verdict(json!({"command": ":(){ :|:& };:"})), Verdict::Reject(r) if r.contains("fork bomb"))
    );
    assert!(
        matches!(verdict(json!({"command": "bash -lc 'dd if=/dev/zero of=/dev/sda'"})), Verdict::Reject(r) if r.contains("/dev/sda"))
    );
    assert!(matches!(
        verdict(json!({"argv": ["chmod", "-R", "777", "/"]})),
        Verdict::Reject(_)
    ));
    assert!(
        matches!(verdict(json!({"cmd": "echo x > /etc/hosts"})), Verdict::Reject(r) if r.contains("/etc"))
    );
    assert_eq!(verdict(json!({"command": "ls -la"})), Verdict::Pass);
    assert!(matches!(verdict(json!({})), Verdict::Reject(r) if r.contains("args.program")));
    let reply = passepartout::runtime::types::Action {
        target: "chat".into(),
        tool: None,
        args: "{}".into(),
        text: Some("rm -rf / is a bad idea".into()),
        explanation: None,
    };
    assert_eq!(
        guard.check(&reply, &signal()).expect("check"),
        Verdict::Pass,
        "only commands are checked"
    );
}

#[test]
fn files_reads_writes_verifies_lists_and_searches_inside_its_mount() {
    let ws = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(ws.path().join("notes")).expect("mkdir");
    std::fs::write(
        ws.path().join("notes/todo.org"),
        "* TODO buy milk\n* DONE write tests\n",
    )
    .expect("write");
    let policy = format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]\n",
        ws.path().display()
    );
    let (plugins, _rt, _c) = load(&policy);
    let files = find(&plugins, "files");
    let call = |tool: &str, args: serde_json::Value| files.call_tool(tool, &args.to_string());
    assert_eq!(
        call("read-file", json!({"path": "/workspace/notes/todo.org"})).expect("read"),
        "* TODO buy milk\n* DONE write tests\n"
    );
    let wrote = call(
        "write-file",
        json!({"path": "/workspace/out.txt", "content": "héllo\n"}),
    )
    .expect("write");
    assert!(wrote.contains("verified"), "{wrote}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out.txt")).expect("on disk"),
        "héllo\n"
    );
    assert_eq!(
        call("list-directory", json!({"path": "/workspace"})).expect("list"),
        "notes/\nout.txt"
    );
    assert_eq!(
        call(
            "search-files",
            json!({"path": "/workspace", "pattern": "TODO"})
        )
        .expect("search"),
        "/workspace/notes/todo.org:1: * TODO buy milk"
    );
    let err = call("read-file", json!({"path": "/etc/passwd"})).expect_err("outside");
    assert!(
        matches!(err, PluginError::Tool { error: ToolFailure::Failed(ref m), .. } if m.contains("not found")),
        "{err:?}"
    );
    let err = call("read-file", json!({"nope": 1})).expect_err("bad args");
    assert!(
        matches!(err, PluginError::Tool { error: ToolFailure::InvalidArgs(ref m), .. } if m.contains("path")),
        "{err:?}"
    );
}

#[test]
fn files_without_a_grant_reaches_nothing() {
    let (plugins, _rt, _c) = load("");
    let files = find(&plugins, "files");
    assert!(files.grants.fs.is_empty());
    let err = files
        .call_tool("list-directory", r#"{"path":"/workspace"}"#)
        .expect_err("no mount");
    assert!(
        matches!(
            err,
            PluginError::Tool {
                error: ToolFailure::Failed(_),
                ..
            }
        ),
        "{err:?}"
    );
}

/// A mount whose directory vanished after load: the call does not start, and the error keeps
/// its causes (which mount, and the system's own error) as a typed chain.
#[test]
fn a_mount_removed_after_load_is_a_setup_error_with_its_cause() {
    let ws = tempfile::tempdir().expect("temp dir");
    let mount = ws.path().join("gone");
    std::fs::create_dir(&mount).expect("mkdir");
    let policy = format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]\n",
        mount.display()
    );
    let (plugins, _rt, _c) = load(&policy);
    let files = find(&plugins, "files");
    std::fs::remove_dir(&mount).expect("rmdir");
    let err = files
        .call_tool("list-directory", &json!({"path": "/workspace"}).to_string())
        .expect_err("no mount to open");
    let PluginError::Setup {
        source: passepartout::runtime::SetupError::Mount(ref why),
        ..
    } = err
    else {
        panic!("a setup error: {err:?}");
    };
    assert_eq!(why.guest, "/workspace");
    let text = passepartout::runtime::chain(&err);
    assert!(
        text.contains("could not start the call") && text.contains("cannot open mount /workspace"),
        "{text}"
    );
    assert!(
        std::error::Error::source(why).is_some(),
        "the system's error is kept: {why:?}"
    );
}

/// A mount's directory replaced after load by a link to somewhere else (an unconfined
/// program, a careless script): the next call does not follow it, and says why.
#[test]
fn a_mount_replaced_by_a_link_after_load_is_not_followed() {
    let ws = tempfile::tempdir().expect("temp dir");
    let mount = ws.path().join("shared");
    let elsewhere = ws.path().join("keys");
    std::fs::create_dir(&mount).expect("mkdir");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    std::fs::write(mount.join("notes.txt"), "granted").expect("write");
    std::fs::write(elsewhere.join("approver.key"), "SECRET").expect("write");
    let policy = format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-only\" }}]\n",
        mount.display()
    );
    let (plugins, _rt, _c) = load(&policy);
    let files = find(&plugins, "files");
    let read = |path: &str| files.call_tool("read-file", &json!({ "path": path }).to_string());
    assert!(
        read("/workspace/notes.txt")
            .expect("granted")
            .contains("granted")
    );
    std::fs::rename(&mount, ws.path().join("moved")).expect("move the directory away");
    std::os::unix::fs::symlink(&elsewhere, &mount).expect("link in its place");
    let err = read("/workspace/approver.key").expect_err("not followed");
    let text = passepartout::runtime::chain(&err);
    assert!(!text.contains("SECRET"), "{text}");
    assert!(
        text.contains("cannot open mount /workspace") && text.contains("leads to"),
        "{text}"
    );
    // Put back, it is served again.
    std::fs::remove_file(&mount).expect("unlink");
    std::fs::rename(ws.path().join("moved"), &mount).expect("move back");
    assert!(
        read("/workspace/notes.txt")
            .expect("served again")
            .contains("granted")
    );
}

#[test]
fn eval_computes_and_holds_no_capability_even_when_policy_offers_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let policy = format!(
        "[plugins.eval]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]\nenv = [\"PATH\", \"HOME\"]\n",
        dir.path().display()
    );
    let (plugins, _rt, _c) = load(&policy);
    let eval = find(&plugins, "eval");
    assert_eq!(
        eval.grants,
        passepartout::runtime::Grants::default(),
        "eval asked for nothing, so it gets nothing"
    );
    let run = |e: &str| eval.call_tool("eval", &json!({ "expression": e }).to_string());
    assert_eq!(run("(+ 1 2)").expect("eval"), "3");
    assert_eq!(run("(let ((x 2)) (* x 21))").expect("eval"), "42");
    let err = run("(open \"/etc/passwd\")").expect_err("no I/O");
    assert!(
        matches!(err, PluginError::Tool { error: ToolFailure::Failed(ref m), .. } if m.contains("unknown function `open`")),
        "{err:?}"
    );
    assert_eq!(
        eval.limits.tool_timeout("eval").as_secs(),
        10,
        "the seed's eval timeout"
    );
}
