//! The standard plugins through the runtime: each one's behaviour and its denial paths, with
//! the grants a policy gives (programs by name, hosts by name or address, mounts).

use passepartout::runtime::types::Verdict;
use passepartout::runtime::{LoadError, Plugin, Policy};
use passepartout_tests::http::{Canned, Server};
use serde_json::json;

use crate::{action, fresh_runtime, signal};

/// Load the first-party plugin `name` under `policy` (TOML).
fn load(name: &str, policy: &str) -> (Plugin, tempfile::TempDir) {
    let (rt, scratch) = fresh_runtime();
    let source = crate::builtins(&[name]).pop().expect("a built-in plugin");
    let plugin = rt
        .load(&source, &Policy::parse(policy).expect("policy"))
        .unwrap_or_else(|e| panic!("{name} loads: {e}"));
    (plugin, scratch)
}

/// The mount programs work in (given to `nobody` when the tests run as root: programs run as
/// the mount's owner).
fn mount(dir: &std::path::Path) -> String {
    passepartout_tests::give_to_nobody(dir);
    format!(
        "fs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]",
        dir.display()
    )
}

fn call(p: &Plugin, tool: &str, args: serde_json::Value) -> Result<String, String> {
    p.call_tool(tool, &args.to_string())
        .map_err(|e| e.to_string())
}

#[test]
fn shell_runs_granted_programs_only_with_arguments_as_a_list() {
    let ws = tempfile::tempdir().expect("temp dir");
    std::fs::write(ws.path().join("a.txt"), "alpha\n").expect("write");
    let (shell, _s) = load(
        "shell",
        &format!(
            "[plugins.shell]\n{}\nprocess = [\"echo\", \"ls\", \"cat\"]\n",
            mount(ws.path())
        ),
    );
    let out = call(
        &shell,
        "shell",
        json!({"program": "echo", "args": ["hi; rm -rf /"]}),
    )
    .expect("echo runs");
    assert_eq!(out, "EXIT-CODE: 0\n\nSTDOUT:\nhi; rm -rf /\n\n\nSTDERR:\n");
    let out = call(
        &shell,
        "shell",
        json!({"program": "ls", "args": [], "cwd": "/workspace"}),
    )
    .expect("ls runs in the mount");
    assert!(out.contains("a.txt"), "{out}");
    let out = call(
        &shell,
        "shell",
        json!({"program": "cat", "args": ["nope.txt"]}),
    )
    .expect("a failing program is still output");
    assert!(out.starts_with("EXIT-CODE: 1"), "{out}");

    // `manifest asks ∩ policy grants`: sort is asked for but not granted, rm neither.
    for (program, needle) in [
        ("sort", "`sort` is not granted"),
        ("rm", "`rm` is not granted"),
    ] {
        let err = call(&shell, "shell", json!({"program": program, "args": []}))
            .expect_err("not granted");
        assert!(
            err.contains(needle) && err.contains("plugin \"shell\""),
            "{err}"
        );
    }
    let err = call(
        &shell,
        "shell",
        json!({"program": "/bin/echo", "args": ["x"]}),
    )
    .expect_err("a path is refused");
    assert!(err.contains("name, not a path"), "{err}");
    let err = call(
        &shell,
        "shell",
        json!({"program": "ls", "args": [], "cwd": "/etc"}),
    )
    .expect_err("outside the mounts");
    assert!(err.contains("outside the mounts"), "{err}");
    let err = call(
        &shell,
        "shell",
        json!({"program": "ls", "args": [], "cwd": "/workspace/../.."}),
    )
    .expect_err("no escaping with ..");
    assert!(err.contains("outside the mounts"), "{err}");
    let err = call(&shell, "shell", json!({"command": "ls -la"})).expect_err("no shell strings");
    assert!(err.contains("program"), "{err}");
}

#[test]
fn shell_kills_a_program_at_its_deadline_and_asking_is_not_getting() {
    let ws = tempfile::tempdir().expect("temp dir");
    std::fs::write(ws.path().join("log"), "line\n").expect("write");
    let (shell, _s) = load(
        "shell",
        &format!(
            "[plugins.shell]\n{}\nprocess = [\"tail\", \"sleep\"]\n",
            mount(ws.path())
        ),
    );
    // `tail -f` never ends: it is killed at the deadline the call asked for.
    let start = std::time::Instant::now();
    let err = call(
        &shell,
        "shell",
        json!({"program": "tail", "args": ["-f", "log"], "timeout_ms": 300}),
    )
    .expect_err("killed");
    assert!(
        err.contains("timed out") || err.contains("gave up"),
        "{err}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    // The policy lists sleep, but the manifest never asks for it: not granted.
    let err = call(&shell, "shell", json!({"program": "sleep", "args": ["5"]}))
        .expect_err("not asked for, not granted");
    assert!(err.contains("not granted"), "{err}");
}

#[test]
fn a_detached_descendant_holding_the_pipes_is_not_waited_for() {
    let ws = tempfile::tempdir().expect("temp dir");
    let (rt, _s) = fresh_runtime();
    let mut source = crate::builtins(&["shell"]).pop().expect("built in");
    // This test's shell may also run `sh`, which starts a `sleep` in a session of its own
    // (out of the process group the host kills) that keeps stdout open.
    source.manifest = source
        .manifest
        .replace(
            "process = [\"ls\",",
            "process = [\"sh\", \"setsid\", \"sleep\", \"ls\",",
        )
        .into();
    let policy = format!(
        "[plugins.shell]\n{}\nprocess = [\"sh\", \"setsid\", \"sleep\"]\n",
        mount(ws.path())
    );
    let shell = rt
        .load(&source, &Policy::parse(&policy).expect("policy"))
        .expect("loads");
    let start = std::time::Instant::now();
    let out = call(
        &shell,
        "shell",
        json!({"program": "sh", "args": ["-c", "setsid -f sleep 7.123; echo started"]}),
    )
    .expect("sh itself ends at once");
    assert!(out.contains("started"), "{out}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(3),
        "waited {:?} for a process that left the group",
        start.elapsed()
    );
    // Nothing it started is left behind (the run's cgroup is killed at its end).
    crate::no_process_runs("7.123");

    // The same at the deadline: the program sleeps past it, its detached child longer.
    let start = std::time::Instant::now();
    let err = call(
        &shell,
        "shell",
        json!({"program": "sh", "args": ["-c", "setsid -f sleep 7.321; sleep 30"], "timeout_ms": 300}),
    );
    let took = start.elapsed();
    assert!(
        format!("{err:?}").contains("timed out") || format!("{err:?}").contains("gave up"),
        "{err:?}"
    );
    assert!(
        took < std::time::Duration::from_millis(400),
        "a 300 ms deadline ended after {took:?}"
    );
    crate::no_process_runs("7.321");
}

#[test]
fn a_tool_importing_an_ungranted_capability_is_disabled_with_a_hint() {
    let (rt, _s) = fresh_runtime();
    for (name, needle) in [
        ("shell", "process = ["),
        ("http-fetch", "net = ["),
        ("memory", "memory = \"read\""),
    ] {
        let source = crate::builtins(&[name]).pop().expect("built in");
        match rt.load(&source, &Policy::default()) {
            Err(e @ LoadError::NotGranted { .. }) => {
                assert!(e.to_string().contains(needle), "{e}");
            }
            Err(e) => panic!("{name}: {e}"),
            Ok(_) => panic!("{name} loaded without its grant"),
        }
    }
}

fn fetcher(net: &str) -> (Plugin, tempfile::TempDir) {
    load(
        "http-fetch",
        &format!("[plugins.http-fetch]\nnet = [{net}]\n"),
    )
}

#[test]
fn http_fetch_reaches_a_host_granted_by_address_and_nothing_else() {
    let server = Server::start(vec![
        Canned::json(r#"{"hello":"world"}"#),
        Canned::json("{}"),
    ]);
    let addr = server.url.trim_start_matches("http://").to_owned();
    let (fetch, _s) = fetcher(&format!("\"{addr}\""));
    let out = call(
        &fetch,
        "http-fetch",
        json!({"url": format!("{}/data", server.url)}),
    )
    .expect("granted by address");
    assert!(out.starts_with("HTTP 200"), "{out}");
    assert!(out.contains(r#"{"hello":"world"}"#), "{out}");
    assert_eq!(server.requests()[0].path, "/data");

    for url in [
        "http://127.0.0.1:1/".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/".to_owned(),
        "https://example.org/".to_owned(),
    ] {
        let err = call(&fetch, "http-fetch", json!({"url": url})).expect_err("not granted");
        assert!(
            err.contains("refused") || err.contains("denied") || err.contains("not allowed"),
            "{url}: {err}"
        );
    }
    assert_eq!(
        server.requests().len(),
        1,
        "nothing else reached the server"
    );
}

#[test]
fn a_name_that_resolves_to_loopback_is_refused_unless_granted_by_address() {
    let server = Server::start(vec![Canned::json("{}")]);
    let port = server.url.rsplit(':').next().expect("port").to_owned();
    let (fetch, _s) = fetcher(&format!("\"localhost:{port}\""));
    let err = call(
        &fetch,
        "http-fetch",
        json!({"url": format!("http://localhost:{port}/")}),
    )
    .expect_err("localhost is loopback");
    assert!(err.contains("localhost"), "{err}");
    assert!(server.requests().is_empty());
}

#[test]
fn a_redirect_to_a_private_address_is_refused_at_the_hop() {
    let mut redirect = Canned::status(302, "");
    redirect.headers.push((
        "location".into(),
        "http://169.254.169.254/latest/meta-data/".into(),
    ));
    let mut local = Canned::status(301, "");
    let server = Server::start(vec![redirect]);
    let addr = server.url.trim_start_matches("http://").to_owned();
    local
        .headers
        .push(("location".into(), format!("{}/moved", server.url)));
    server.push(local);
    server.push(Canned::json(r#"{"moved":true}"#));
    let (fetch, _s) = fetcher(&format!("\"{addr}\""));
    let err = call(
        &fetch,
        "http-fetch",
        json!({"url": format!("{}/start", server.url)}),
    )
    .expect_err("the hop to the metadata address is refused");
    assert!(err.contains("169.254.169.254"), "{err}");
    // A redirect within the granted host is followed.
    let out = call(
        &fetch,
        "http-fetch",
        json!({"url": format!("{}/old", server.url)}),
    )
    .expect("same host");
    assert!(out.contains(r#"{"moved":true}"#), "{out}");
}

/// A POST the gates let go to one granted host is not carried by a 307 to another granted
/// one (an open redirect on a host nobody is asked about would take the body anywhere the
/// grant reaches); within the origin it is.
#[test]
fn a_body_is_not_carried_by_a_redirect_to_another_origin() {
    let elsewhere = Server::start(vec![Canned::json("{}")]);
    let mut away = Canned::status(307, "");
    away.headers
        .push(("location".into(), format!("{}/sink", elsewhere.url)));
    let server = Server::start(vec![away]);
    let mut here = Canned::status(308, "");
    here.headers
        .push(("location".into(), format!("{}/kept", server.url)));
    server.push(here);
    server.push(Canned::json(r#"{"kept":true}"#));
    let grant = |s: &Server| format!("\"{}\"", s.url.trim_start_matches("http://"));
    let (fetch, _s) = fetcher(&format!("{}, {}", grant(&server), grant(&elsewhere)));
    let post = |path: &str| {
        call(
            &fetch,
            "http-fetch",
            json!({"url": format!("{}{path}", server.url), "method": "POST",
                   "body": r#"{"s":"secret"}"#}),
        )
    };
    let err = post("/start").expect_err("the body is not sent on to another origin");
    assert!(
        err.contains("another origin") && err.contains("/sink"),
        "{err}"
    );
    assert!(
        elsewhere.requests().is_empty(),
        "the other host heard nothing"
    );
    let out = post("/old").expect("within the origin");
    assert!(out.contains(r#"{"kept":true}"#), "{out}");
    let last = server.requests().pop().expect("the kept hop");
    assert_eq!(
        (last.method.as_str(), last.body),
        ("POST", json!({"s": "secret"}))
    );
}

#[test]
fn files_outside_the_mount_are_denied() {
    let ws = tempfile::tempdir().expect("temp dir");
    std::fs::write(ws.path().join("in.txt"), "inside").expect("write");
    let (files, _s) = load("files", &format!("[plugins.files]\n{}\n", mount(ws.path())));
    assert_eq!(
        call(&files, "read-file", json!({"path": "/workspace/in.txt"})).expect("inside"),
        "inside"
    );
    for path in ["/etc/passwd", "/workspace/../../etc/passwd", "relative.txt"] {
        let err = call(&files, "read-file", json!({"path": path})).expect_err(path);
        assert!(err.contains("plugin \"files\""), "{path}: {err}");
    }
    let out = call(
        &files,
        "search-files",
        json!({"path": "/workspace", "pattern": "ins?ide"}),
    )
    .expect("regex search");
    assert!(out.contains("in.txt:1"), "{out}");
    let err = call(
        &files,
        "search-files",
        json!({"path": "/workspace", "pattern": "("}),
    )
    .expect_err("bad regex");
    assert!(
        err.to_lowercase().contains("regex") || err.contains("pattern"),
        "{err}"
    );
}

/// The first-party tools, loaded with grants, as the host knows them: what gates learn about
/// an action (its tool's identity and its effects) comes from here, as in verify.
fn catalog() -> (passepartout::runtime::effects::Catalog, tempfile::TempDir) {
    let (rt, scratch) = fresh_runtime();
    let policy = format!(
        "[plugins.files]\n{0}\n[plugins.shell]\nprocess = [\"ls\", \"git\", \"rm\"]\n{0}\n\
         [plugins.http-fetch]\nnet = [\"example.org\"]\n",
        mount(scratch.path())
    );
    let report = rt.load_all(
        &crate::builtins(&["files", "shell", "http-fetch"]),
        &Policy::parse(&policy).expect("policy"),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    (
        passepartout::runtime::effects::Catalog::new(&report.plugins),
        scratch,
    )
}

fn verdict(gate: &Plugin, a: passepartout::runtime::types::Action) -> Verdict {
    let (catalog, _scratch) = catalog();
    let host_action = passepartout::signal::Action::from_wit(&a).expect("valid action");
    let context = std::sync::Arc::new(catalog.context(&host_action));
    gate.check_in(&a, &signal(), &context)
        .expect("the gate answers")
}

#[test]
fn the_standard_gates_reject_or_ask_with_reasons_a_person_understands() {
    let (secrets, _a) = load("secrets", "");
    let key = format!("AKIA{}", "Z7QWERTYUIOPASDF");
    match verdict(
        &secrets,
        action(
            "write-file",
            json!({"path": "/workspace/x", "content": format!("key = {key}")}),
        ),
    ) {
        Verdict::Reject(r) => {
            assert!(r.contains("AWS") && r.contains("args.content"), "{r}");
            assert!(!r.contains(&key[4..12]), "never echoes the secret: {r}");
        }
        v => panic!("{v:?}"),
    }
    assert_eq!(
        verdict(
            &secrets,
            action(
                "write-file",
                json!({"path": "/workspace/x", "content": "plain notes"})
            )
        ),
        Verdict::Pass
    );

    let (explanation, _b) = load("explanation", "");
    assert!(matches!(
        verdict(&explanation, action("write-file", json!({"path": "/workspace/x", "content": "y"}))),
        Verdict::Reject(r) if r.contains("explanation")
    ));
    let mut explained = action(
        "write-file",
        json!({"path": "/workspace/x", "content": "y"}),
    );
    explained.explanation = Some("save the draft the user dictated".into());
    assert_eq!(verdict(&explanation, explained), Verdict::Pass);
    assert_eq!(
        verdict(
            &explanation,
            action("read-file", json!({"path": "/workspace/x"}))
        ),
        Verdict::Pass,
        "read-only tools need no explanation"
    );

    // The approval gate reads its rules from config; the policy can replace them.
    let (approval, _c) = load(
        "approval",
        "[plugins.approval.config]\nknown_hosts = [\"en.wikipedia.org\"]\n",
    );
    assert!(matches!(
        verdict(&approval, action("shell", json!({"program": "sudo", "args": ["apt", "upgrade"]}))),
        Verdict::RequireApproval(r) if r.contains("sudo")
    ));
    assert!(matches!(
        verdict(&approval, action("write-file", json!({"path": "/etc/hosts", "content": ""}))),
        Verdict::RequireApproval(r) if r.contains("/etc/hosts")
    ));
    assert!(matches!(
        verdict(&approval, action("http-fetch", json!({"url": "https://evil.example/x"}))),
        Verdict::RequireApproval(r) if r.contains("evil.example")
    ));
    assert_eq!(
        verdict(
            &approval,
            action(
                "http-fetch",
                json!({"url": "https://en.wikipedia.org/wiki/Org-mode"})
            )
        ),
        Verdict::Pass
    );

    // shell-guard sees the shell tool's program + args form, and through sh -c.
    let (guard, _d) = load("shell-guard", "");
    assert!(matches!(
        verdict(
            &guard,
            action(
                "shell",
                json!({"program": "sh", "args": ["-c", "rm -rf /"]})
            )
        ),
        Verdict::Reject(_)
    ));
    assert_eq!(
        verdict(
            &guard,
            action("shell", json!({"program": "ls", "args": ["-la"]}))
        ),
        Verdict::Pass
    );
}

/// A case of plugins/pii/cases.json as an action for the WIT.
fn pii_case(case: &serde_json::Value) -> passepartout::runtime::types::Action {
    let a = &case["action"];
    passepartout::runtime::types::Action {
        target: a["target"].as_str().unwrap_or("tool").into(),
        tool: a["tool"].as_str().map(str::to_owned),
        args: a
            .get("args")
            .map_or_else(|| "{}".to_owned(), ToString::to_string),
        text: a["text"].as_str().map(str::to_owned),
        explanation: None,
    }
}

/// Page faults this thread has taken (`minflt` in /proc/thread-self/stat).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").expect("this thread's stat");
    // The fields after the command's closing parenthesis: state is the 3rd, minflt the 10th.
    let after = &stat[stat.rfind(')').expect("(comm)") + 2..];
    after
        .split(' ')
        .nth(7)
        .and_then(|f| f.parse().ok())
        .expect("minflt")
}

/// Whether the kernel has `PAGEMAP_SCAN` (Linux 6.7), which the pool needs to keep pages.
fn kernel_scans_pages() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release
        .trim()
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (major, minor) >= (6, 7)
}

/// A fresh instance of the Python gate finds the pages its predecessor dirtied still resident
/// (restored from the image): CPython writes reference counts on ~110 pages scattered over its
/// snapshot, past the 32 regions wasmtime 48 as published kept, so each instance faulted them
/// all in again (vendor/README.md). The instances stay fresh: `gates.rs` shows none sees what
/// another wrote.
#[test]
fn a_fresh_python_gate_instance_does_not_fault_its_pages_in_again() {
    if !kernel_scans_pages() {
        eprintln!("skipped: the kernel has no PAGEMAP_SCAN (Linux 6.7+)");
        return;
    }
    let (python, _a) = load("pii", "");
    let action = action(
        "runner",
        json!({ "command": "echo call me on 555-0100 or mail ann@example.com" }),
    );
    // The first calls fill the pool's slots; later ones reuse them (the calls run on this
    // thread, so this thread's faults are theirs).
    let check = || python.check(&action, &signal()).expect("the gate answers");
    for _ in 0..4 {
        check();
    }
    let before = minor_faults();
    let calls = 20;
    for _ in 0..calls {
        check();
    }
    let per_call = (minor_faults() - before) / calls;
    assert!(
        per_call < 20,
        "{per_call} page faults per fresh instance (~110 when a reset unmaps the dirty pages past 32 regions)"
    );
}

#[test]
fn the_python_gate_gives_the_verdicts_of_its_rust_twin() {
    use passepartout_tests::{PII_TWIN_MANIFEST, PII_TWIN_WASM, source};
    let (python, _a) = load("pii", "");
    let (rt, _b) = fresh_runtime();
    let twin = rt
        .load(
            &source(PII_TWIN_WASM, PII_TWIN_MANIFEST, |m| m),
            &Policy::default(),
        )
        .expect("the Rust twin loads");
    let cases: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/pii/cases.json"),
        )
        .expect("cases.json"),
    )
    .expect("cases parse");
    let cases = cases["cases"].as_array().expect("cases");
    assert!(cases.len() >= 16);
    let mut flagged = 0;
    for case in cases {
        let action = pii_case(case);
        let py = verdict(&python, action.clone());
        let rs = verdict(&twin, action);
        assert_eq!(py, rs, "{}: Python and Rust disagree", case["name"]);
        match (&py, case["expect"].as_str()) {
            (Verdict::Pass, Some("pass")) => {}
            (Verdict::RequireApproval(r), Some("require-approval")) => {
                flagged += 1;
                if let Some(want) = case["reason"].as_str() {
                    assert_eq!(r, want, "{}", case["name"]);
                }
            }
            (v, want) => panic!("{}: got {v:?}, expected {want:?}", case["name"]),
        }
    }
    assert!(flagged >= 8, "both kinds are covered");
}
