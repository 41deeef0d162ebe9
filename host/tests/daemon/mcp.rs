//! Passepartout's MCP server driven by the official MCP Python SDK (PyPI `mcp`, installed by
//! `.ci/run`) as a real third-party client against a real daemon, over stdio (`passepartout
//! mcp`) and over the daemon's streamable HTTP transport (`[mcp] http`): the tools it lists, a
//! call that runs, a call a gate rejects (the client's model reads why), and a call a gate
//! flags, which waits until `passepartout approve` releases it. And the HTTP transport's doors
//! tried from outside: no bearer, a wrong one, a rebound `Host`, a foreign `Origin`.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use passepartout::daemon::request::Request;
use serde_json::{Value, json};

use super::{Daemon, command, start};

/// The SDK's client, running `passepartout mcp` as its server.
struct McpClient {
    child: std::process::Child,
    calls: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl McpClient {
    /// Over stdio: the SDK starts `passepartout mcp` for `d`, with `extra` arguments; the
    /// client answers a form (elicitation) as `answer` says (`approve`, `deny`, `cancel`).
    fn stdio(d: &Daemon, extra: &[&str], answer: &str) -> (McpClient, Value) {
        let port = d.addr.rsplit(':').next().expect("port").to_owned();
        let mut args = vec![env!("CARGO_BIN_EXE_passepartout"), port.as_str()];
        args.extend(extra);
        McpClient::start(d, &args, answer)
    }

    /// Over streamable HTTP: the SDK posts to `url` with `token` as its bearer.
    fn http(d: &Daemon, url: &str, token: &str, answer: &str) -> (McpClient, Value) {
        McpClient::start(d, &[url, token], answer)
    }

    // The test's own environment says where Python's packages are.
    #[allow(clippy::disallowed_methods)]
    fn start(d: &Daemon, args: &[&str], answer: &str) -> (McpClient, Value) {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/daemon/mcp/client.py");
        // The daemon's environment (its home, its keys), plus what Python needs to find the
        // SDK: PATH (a virtualenv's python3) and the user site-packages of `pip --user`.
        let home = std::env::var_os("HOME").unwrap_or_default();
        let user_base = std::env::var_os("PYTHONUSERBASE")
            .unwrap_or_else(|| std::path::Path::new(&home).join(".local").into_os_string());
        let mut python = command(&d.home, &[], &[]);
        let env: Vec<_> = python
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
            .collect();
        python = std::process::Command::new("python3");
        python
            .arg(script)
            .args(args)
            .env_clear()
            .envs(env)
            .env("ELICIT_ANSWER", answer)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("PYTHONUSERBASE", user_base)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = python.spawn().expect("python3 with the mcp package");
        let calls = child.stdin.take().expect("stdin");
        let answers = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = McpClient {
            child,
            calls,
            answers,
        };
        let tools = client.answer();
        (client, tools)
    }

    fn answer(&mut self) -> Value {
        let mut line = String::new();
        self.answers.read_line(&mut line).expect("read");
        assert!(
            !line.is_empty(),
            "the MCP client stopped (its error is above); without the SDK: python3 -m pip \
             install mcp==2.3.0 (.ci/run installs the version .ci/toolchains pins)"
        );
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn send(&mut self, tool: &str, arguments: Value) {
        writeln!(
            self.calls,
            "{}",
            json!({ "tool": tool, "arguments": arguments })
        )
        .expect("write");
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.send(tool, arguments);
        self.answer()
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A home whose policy lets the shell run rm and echo in a workspace, every shell call needing
/// a person; `config` is written as its passepartout.toml.
pub(super) fn home_with_shell(config_toml: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("temp dir");
    let config = home.path().join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(config.join("passepartout.toml"), config_toml).expect("config");
    let ws = home.path().join("ws");
    std::fs::create_dir_all(&ws).expect("mkdir");
    passepartout_tests::give_to_nobody(&ws);
    // The shell may run rm and echo; every shell call needs a person.
    std::fs::write(
        config.join("policy.toml"),
        format!(
            "[plugins.shell]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]\n\
             process = [\"rm\", \"echo\"]\n\n[plugins.approval.config]\ndangerous_tools = [\"shell\"]\n",
            ws.display()
        ),
    )
    .expect("policy");
    home
}

/// What every transport must show: `eval` listed with its `explanation` argument and without
/// the host's effect declarations, `eval` run, `rm -rf /` rejected with shell-guard's reason.
fn lists_runs_and_is_told_why(mcp: &mut McpClient, listed: &Value) {
    let tools = &listed["tools"];
    assert!(tools["eval"].is_object(), "{listed}");
    assert!(
        tools["eval"]["properties"]["explanation"].is_object(),
        "calls can explain themselves: {listed}"
    );
    assert!(
        !tools["eval"].to_string().contains("x-effect"),
        "effect declarations are the host's: {listed}"
    );

    let eval = mcp.call("eval", json!({ "expression": "(+ 1 2)" }));
    assert_eq!(eval["is_error"], false, "{eval}");
    assert_eq!(eval["text"], "3", "{eval}");
    // Each gate's verdict reached the client as the call's progress.
    let progress = eval["progress"].to_string();
    for gate in ["shell-guard", "pii", "secrets", "explanation", "approval"] {
        assert!(progress.contains(&format!("gate {gate} pass")), "{eval}");
    }

    let rm = mcp.call(
        "shell",
        json!({ "program": "rm", "args": ["-rf", "/"], "explanation": "clean up" }),
    );
    assert_eq!(rm["is_error"], true, "{rm}");
    assert!(
        rm["text"]
            .as_str()
            .is_some_and(|t| t.contains("shell-guard")),
        "the gate's reason reaches the client: {rm}"
    );
    assert!(
        rm["progress"]
            .to_string()
            .contains("gate shell-guard reject"),
        "{rm}"
    );
}

/// The journal marks the calls that came through MCP, with the MCP client's own name: every
/// proposal of an `eval` says `passepartout-mcp/...`.
fn journaled_as_mcp(d: &Daemon) {
    let via: Vec<Value> = d
        .records()
        .into_iter()
        .filter(|r| r.kind == "proposal" && r.body["action"]["tool"] == "eval")
        .map(|r| r.body["signal"]["meta"]["via"].clone())
        .collect();
    assert!(!via.is_empty(), "no eval proposal journaled");
    assert!(
        via.iter().all(|v| v
            .as_str()
            .is_some_and(|v| v.starts_with("passepartout-mcp/"))),
        "{via:?}"
    );
}

#[test]
fn the_python_sdk_lists_calls_is_told_why_a_gate_refused_and_waits_for_approval() {
    let home = home_with_shell("");
    let d = start(home.path(), &[], None);
    let (mut mcp, listed) = McpClient::stdio(&d, &[], "approve");
    lists_runs_and_is_told_why(&mut mcp, &listed);
    journaled_as_mcp(&d);

    // A flagged call waits, past the daemon's read timeout (2 s here: the bridge keeps its
    // connection alive), until `passepartout approve` releases it; its output is the call's.
    mcp.send(
        "shell",
        json!({ "program": "echo", "args": ["xyzzy-42"], "explanation": "print the marker the test looks for" }),
    );
    std::thread::sleep(Duration::from_secs(3));
    decide(&d, "approve");
    // Not marked as an approver: no form was put to it (the next line is the call's result),
    // though it can show forms and would approve.
    let echoed = mcp.answer();
    assert_eq!(echoed["is_error"], false, "{echoed}");
    assert!(
        echoed["text"]
            .as_str()
            .is_some_and(|t| t.contains("xyzzy-42")),
        "{echoed}"
    );
    assert_eq!(
        decisions(&d),
        [("approved".into(), "passepartout-cli".into())]
    );
    // A denied call says so, as an error the client's model reads.
    mcp.send(
        "shell",
        json!({ "program": "echo", "args": ["never"], "explanation": "print a word nobody will see" }),
    );
    decide(&d, "deny");
    let denied = mcp.answer();
    assert_eq!(denied["is_error"], true, "{denied}");
    assert!(
        denied["text"]
            .as_str()
            .is_some_and(|t| t.contains("denied")),
        "{denied}"
    );
}

#[test]
fn a_call_the_client_abandons_stops_waiting_and_its_approval_stays_pending() {
    let home = home_with_shell("");
    let d = start(home.path(), &[], None);
    let (mut mcp, _) = McpClient::stdio(&d, &[], "cancel");
    let connections = |d: &Daemon| {
        let (_, reply) = d.client().call(&Request::Status).expect("status");
        reply["result"]["connections"]
            .as_u64()
            .expect("connections")
    };
    // The flagged call's own connection to the daemon, beside this status client's.
    writeln!(
        mcp.calls,
        "{}",
        json!({ "tool": "shell", "timeout": 2,
                "arguments": { "program": "echo", "args": ["late"], "explanation": "print a word" } })
    )
    .expect("write");
    let abandoned = mcp.answer();
    assert_eq!(abandoned["abandoned"], true, "{abandoned}");
    // The bridge hears `notifications/cancelled` and stops waiting at once (not after its
    // --approval-wait of 60 s): its connection to the daemon closes.
    let deadline = Instant::now() + Duration::from_secs(10);
    while connections(&d) > 1 {
        assert!(
            Instant::now() < deadline,
            "the abandoned call still waits on its connection"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The person still decides it.
    let (_, pending) = d.client().call(&Request::Approvals).expect("approvals");
    assert_eq!(
        pending["result"].as_array().map(Vec::len),
        Some(1),
        "{pending}"
    );
}

#[test]
fn a_session_is_told_when_the_daemon_reloads_with_other_tools() {
    let home = home_with_shell("");
    let d = start(home.path(), &[], None);
    let (mut mcp, listed) = McpClient::stdio(&d, &[], "cancel");
    assert!(listed["tools"]["eval"].is_object(), "{listed}");
    // The operator disables eval; the daemon reloads on the policy's edit.
    let policy = home.path().join("config/passepartout/policy.toml");
    let mut text = std::fs::read_to_string(&policy).expect("policy");
    text.push_str("\n[plugins.eval]\nenabled = false\n");
    std::fs::write(&policy, text).expect("policy");
    writeln!(mcp.calls, "{}", json!({ "wait_list_changed": 30 })).expect("write");
    assert_eq!(mcp.answer(), json!({ "list_changed": true }));
    writeln!(mcp.calls, "{}", json!({ "list": true })).expect("write");
    let relisted = mcp.answer();
    assert!(relisted["tools"]["shell"].is_object(), "{relisted}");
    assert!(relisted["tools"].get("eval").is_none(), "{relisted}");
    // Nothing changed since: no further notice.
    writeln!(mcp.calls, "{}", json!({ "wait_list_changed": 3 })).expect("write");
    assert_eq!(mcp.answer(), json!({ "list_changed": false }));
}

#[test]
fn the_memory_store_is_read_as_resources_through_the_gates() {
    let home = home_with_shell("");
    let policy = home.path().join("config/passepartout/policy.toml");
    let mut text = std::fs::read_to_string(&policy).expect("policy");
    text.push_str("\n[plugins.memory]\nmemory = \"read\"\n");
    std::fs::write(&policy, text).expect("policy");
    let org = home.path().join("org");
    std::fs::create_dir_all(&org).expect("mkdir");
    std::fs::write(
        org.join("notes.org"),
        "* Project Alpha :project:\n:PROPERTIES:\n:ID: alpha-1\n:END:\nThe alpha notes.\n",
    )
    .expect("org");
    let out = command(
        home.path(),
        &["memory", "ingest", org.to_str().expect("utf-8")],
        &[],
    )
    .output()
    .expect("ingest");
    assert!(out.status.success(), "{out:?}");
    let d = start(home.path(), &[], None);
    let (mut mcp, _) = McpClient::stdio(&d, &[], "cancel");
    let mut ask = |line: Value| {
        writeln!(mcp.calls, "{line}").expect("write");
        mcp.answer()
    };
    let listed = ask(json!({ "resources": true }));
    assert_eq!(
        listed["resources"],
        json!(["passepartout://memory/outline"])
    );
    assert_eq!(
        listed["templates"],
        json!(["passepartout://memory/headline/{id}"])
    );
    let outline = ask(json!({ "read": "passepartout://memory/outline" }));
    assert!(
        outline["read"]
            .as_str()
            .is_some_and(|t| t.contains("Project Alpha")),
        "{outline}"
    );
    let headline = ask(json!({ "read": "passepartout://memory/headline/alpha-1" }));
    assert!(
        headline["read"]
            .as_str()
            .is_some_and(|t| t.contains("alpha notes")),
        "{headline}"
    );
    for bad in [
        "passepartout://memory/headline/../../etc",
        "file:///etc/passwd",
    ] {
        let refused = ask(json!({ "read": bad }));
        assert!(refused["read_error"].is_string(), "{bad}: {refused}");
    }
    // Each read went through the gates and into the journal, as the client's.
    let reads = d
        .records()
        .into_iter()
        .filter(|r| r.kind == "proposal" && r.body["action"]["tool"] == "memory-get")
        .count();
    assert_eq!(reads, 1);
}

/// Each approval decided, in order: (decision, who decided), from the journal.
fn decisions(d: &Daemon) -> Vec<(String, String)> {
    d.records()
        .into_iter()
        .filter(|r| r.kind == "approval")
        .map(|r| {
            let text = |k: &str| r.body[k].as_str().unwrap_or("(none)").to_owned();
            (text("decision"), text("by"))
        })
        .collect()
}

/// A flagged `echo` of `marker` put to a client the operator marked as an approver: the form
/// shows the action, the client's answer decides it, and the journal records who decided.
fn asked_and_decided(mcp: &mut McpClient, d: &Daemon, marker: &str, answer: &str) {
    mcp.send(
        "shell",
        json!({ "program": "echo", "args": [marker], "explanation": "print a marker" }),
    );
    let asked = mcp.answer();
    let form = asked["elicited"].as_str().unwrap_or_default();
    assert!(form.contains(marker) && form.contains("echo"), "{asked}");
    let result = mcp.answer();
    let text = result["text"].as_str().unwrap_or_default();
    if answer == "approve" {
        assert_eq!(result["is_error"], false, "{result}");
        assert!(text.contains(marker), "{result}");
    } else {
        assert_eq!(result["is_error"], true, "{result}");
        assert!(text.contains("denied"), "{result}");
    }
    let (decision, by) = decisions(d).pop().expect("a decision");
    let decided = if answer == "approve" {
        "approved"
    } else {
        "denied"
    };
    assert_eq!(decision, decided);
    assert!(by.starts_with("passepartout-mcp/"), "{by}");
}

#[test]
fn a_client_marked_as_an_approver_is_asked_and_its_answer_decides() {
    let home = home_with_shell("");
    let d = start(home.path(), &[], None);
    let (mut mcp, _) = McpClient::stdio(&d, &["--approver"], "approve");
    asked_and_decided(&mut mcp, &d, "xyzzy-7", "approve");
    drop(mcp);
    let (mut mcp, _) = McpClient::stdio(&d, &["--approver"], "deny");
    asked_and_decided(&mut mcp, &d, "xyzzy-8", "deny");
}

/// Wait for the one approval pending, then `passepartout approve` (or `deny`) it.
pub(super) fn decide(d: &Daemon, how: &str) {
    let mut operator = d.client();
    let deadline = Instant::now() + Duration::from_secs(30);
    let token = loop {
        let (_, reply) = operator.call(&Request::Approvals).expect("approvals");
        if let Some(t) = reply["result"][0]["token"].as_str() {
            break t.to_owned();
        }
        assert!(Instant::now() < deadline, "no approval was asked: {reply}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let port = d.addr.rsplit(':').next().expect("port").to_owned();
    let out = command(&d.home, &[how, &token, "--port", &port], &[])
        .output()
        .expect("passepartout approve/deny");
    assert!(out.status.success(), "{how}: {out:?}");
}

/// The daemon's MCP URL and the bearer its clients send (the client key), from its rendezvous
/// and its keys directory.
fn http_door(d: &Daemon) -> (String, String) {
    let rendezvous: Value = serde_json::from_str(
        &std::fs::read_to_string(d.home.join("run/passepartout/daemon.json")).expect("rendezvous"),
    )
    .expect("rendezvous JSON");
    let url = rendezvous["mcp_http"]
        .as_str()
        .unwrap_or_else(|| panic!("no mcp_http in the rendezvous: {rendezvous}"))
        .to_owned();
    let token = std::fs::read_to_string(d.home.join("data/passepartout/keys/client.key"))
        .expect("client key")
        .trim()
        .to_owned();
    (url, token)
}

/// A daemon serving MCP over HTTP on loopback (`[mcp] http`, the shell plugin as
/// [`home_with_shell`] sets it up), with `env`: its home, itself, its MCP URL and the client
/// key its clients send as bearer.
fn serving_http(env: &[(&str, &str)]) -> (tempfile::TempDir, Daemon, String, String) {
    let home = home_with_shell("[mcp]\nhttp = \"127.0.0.1:0\"\n");
    let d = start(home.path(), env, None);
    let (url, token) = http_door(&d);
    (home, d, url, token)
}

/// The `HOST:PORT` of an `http://` URL.
fn authority(url: &str) -> &str {
    url.strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .expect("http URL")
}

/// The status code the daemon's MCP transport answers a POST of an `initialize` request to
/// `path` with these extra header lines.
fn status_of(url: &str, path: &str, headers: &[String]) -> u16 {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" } }
    });
    post(url, path, headers, &body).0
}

/// POST `body` to `path` of the daemon's MCP transport with these extra header lines: the
/// status code, and the connection to read the rest of the answer from.
fn post(
    url: &str,
    path: &str,
    headers: &[String],
    body: &Value,
) -> (u16, BufReader<std::net::TcpStream>) {
    let authority = authority(url);
    let body = body.to_string();
    let mut stream = std::net::TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|h| h.starts_with("Host:")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = BufReader::new(stream);
    let mut status = String::new();
    answer.read_line(&mut status).expect("status line");
    let code = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status in {status:?}"));
    (code, answer)
}

/// A request naming a protocol version the daemon does not serve is refused with 400 before
/// rmcp reads it, saying which versions it serves: from 2026-07-28 on, rmcp would keep an
/// entry for each tool name a `tools/call` names, for ever (fresh 4 MiB names would grow the
/// daemon by as much each). A version the SDKs connect with is served as before.
#[test]
fn an_http_request_naming_a_protocol_version_not_served_is_refused() {
    let (_home, _d, url, token) = serving_http(&[]);
    let bearer = format!("Authorization: Bearer {token}");
    // Each as a 2026-07-28 client sends it: the version in `_meta` and in the headers.
    let modern = |method: &str, mut params: Value| {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })
    };
    for (n, (method, name)) in [
        ("tools/call", Some("fresh-name-1")),
        ("tools/call", Some("fresh-name-2")),
        ("tools/list", None),
        ("server/discover", None),
    ]
    .into_iter()
    .enumerate()
    {
        let params = match name {
            Some(name) => json!({ "name": name, "arguments": {} }),
            None => json!({}),
        };
        let mut headers = vec![
            bearer.clone(),
            "MCP-Protocol-Version: 2026-07-28".to_owned(),
            format!("Mcp-Method: {method}"),
        ];
        headers.extend(name.map(|name| format!("Mcp-Name: {name}")));
        let (status, mut answer) = post(&url, "/mcp", &headers, &modern(method, params));
        let mut said = String::new();
        let _ = std::io::Read::read_to_string(&mut answer, &mut said);
        assert_eq!(status, 400, "request {n} ({method}): {said}");
        assert!(
            said.contains("\"2026-07-28\" is not served")
                && said.contains("2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25"),
            "request {n} ({method}): {said}"
        );
    }
    // Any other unknown version too, whatever the request.
    let unknown = [
        bearer.clone(),
        "MCP-Protocol-Version: 9999-01-01".to_owned(),
    ];
    assert_eq!(status_of(&url, "/mcp", &unknown), 400);
    // The versions served still connect, with the header or without it.
    let served = [
        bearer.clone(),
        "MCP-Protocol-Version: 2025-06-18".to_owned(),
    ];
    assert_eq!(status_of(&url, "/mcp", &served), 200);
    assert_eq!(status_of(&url, "/mcp", &[bearer]), 200);
}

/// A client without the key is closed after its refusal, even when it asks to keep the
/// connection: it cannot hold one of the places authenticated clients need by sending a
/// refused request every few seconds.
#[test]
fn a_refused_http_client_is_closed_not_kept_alive() {
    let (_home, _d, url, _) = serving_http(&[]);
    let authority = authority(&url);
    for path in ["/mcp", "/elsewhere"] {
        let mut stream = std::net::TcpStream::connect(authority).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("timeout");
        stream
            .write_all(
                format!(
                    "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: keep-alive\r\n\r\n"
                )
                .as_bytes(),
            )
            .expect("send");
        let mut answer = Vec::new();
        let ended = std::io::Read::read_to_end(&mut stream, &mut answer);
        let answer = String::from_utf8_lossy(&answer);
        assert!(
            ended.is_ok(),
            "{path}: still open after its refusal: {ended:?} {answer}"
        );
        assert!(
            answer.starts_with("HTTP/1.1 401") || answer.starts_with("HTTP/1.1 404"),
            "{path}: {answer}"
        );
    }
}

/// A connection kept open to the MCP transport: one request at a time, each answer read whole.
struct KeptOpen(std::net::TcpStream, String);

impl KeptOpen {
    fn connect(authority: &str) -> KeptOpen {
        let s = std::net::TcpStream::connect(authority).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        KeptOpen(s, authority.to_owned())
    }

    /// A `GET /mcp` with `bearer` (no session: the transport answers at once, and keeps the
    /// connection); the status, or `None` when the connection was closed.
    fn get(&mut self, bearer: &str) -> Option<u16> {
        let request = format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\n\
             Authorization: Bearer {bearer}\r\n\r\n",
            self.1
        );
        self.0.write_all(request.as_bytes()).ok()?;
        let mut reader = BufReader::new(&mut self.0);
        let mut line = String::new();
        reader.read_line(&mut line).ok().filter(|n| *n > 0)?;
        let status = line.split_whitespace().nth(1)?.parse().ok()?;
        let mut length = 0;
        loop {
            line.clear();
            reader.read_line(&mut line).ok()?;
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().ok()?;
            }
        }
        let mut body = vec![0; length];
        std::io::Read::read_exact(&mut reader, &mut body).ok()?;
        Some(status)
    }
}

/// Connections without the key that send their headers slowly cannot keep a client with it
/// out: 300 of them, each having sent half a request line and then nothing (every place the
/// transport has, and more), and a client with the key is still served at once, long before
/// the slow ones' 10 s header timeout would have freed a place; a connection that sent the key
/// before the flood is never the one evicted.
#[test]
fn slow_keyless_http_connections_cannot_keep_a_client_with_the_key_out() {
    let (_home, _d, url, token) = serving_http(&[]);
    let authority = authority(&url);
    let mut kept: Vec<KeptOpen> = (0..20).map(|_| KeptOpen::connect(authority)).collect();
    let before: Vec<Option<u16>> = kept.iter_mut().map(|k| k.get(&token)).collect();
    assert!(before.iter().all(|s| s.is_some()), "{before:?}");
    let slow: Vec<std::net::TcpStream> = (0..300)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(authority).expect("connect");
            s.write_all(b"POST /mcp HTTP/1.1\r\n")
                .expect("half a request");
            s
        })
        .collect();
    // Let the daemon accept them all before the honest client comes.
    std::thread::sleep(Duration::from_millis(500));
    let asked = Instant::now();
    let status = status_of(&url, "/mcp", &[format!("Authorization: Bearer {token}")]);
    let took = asked.elapsed();
    assert_eq!(status, 200, "the client with the key");
    assert!(
        took < Duration::from_secs(5),
        "the client with the key waited {took:?} behind connections that never authenticate"
    );
    let after: Vec<Option<u16>> = kept.iter_mut().map(|k| k.get(&token)).collect();
    assert_eq!(after, before, "connections that sent the key stay");
    drop(slow);
}

/// Clients with the client key alone cannot take every place of the MCP transport: past
/// theirs, the next is refused with 503, and a client with the approver key still connects.
#[test]
fn client_key_http_clients_leave_places_for_the_approver_key() {
    let (_home, d, url, token) = serving_http(&[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")]);
    let authority = authority(&url);
    let approver = std::fs::read_to_string(d.home.join("data/passepartout/keys/approver.key"))
        .expect("approver key");
    let mut held = Vec::new();
    let refused = loop {
        assert!(held.len() <= 256, "every place went to the client key");
        let mut k = KeptOpen::connect(authority);
        match k.get(&token) {
            Some(503) => break held.len(),
            Some(_) => held.push(k),
            None => panic!("closed after {} clients", held.len()),
        }
    };
    assert_eq!(refused, 240, "the client key's places");
    assert_eq!(
        status_of(
            &url,
            "/mcp",
            &[format!("Authorization: Bearer {}", approver.trim())]
        ),
        200,
        "the approver key"
    );
    drop(held);
}

/// One `initialize` after another opens a session each: past the most the client key may open, a
/// new one is refused, and the approver key still opens its own.
#[test]
fn a_client_that_opens_session_after_session_is_refused_past_the_most() {
    let (_home, d, url, token) = serving_http(&[]);
    let bearer = [format!("Authorization: Bearer {token}")];
    let mut opened = 0;
    let refused = loop {
        match status_of(&url, "/mcp", &bearer) {
            200 => opened += 1,
            other => break other,
        }
        assert!(opened <= 1024, "never refused");
    };
    assert_eq!(opened, 240, "the most sessions the client key opens");
    assert_eq!(refused, 500);
    // The last places are the approver key's.
    let approver = std::fs::read_to_string(d.home.join("data/passepartout/keys/approver.key"))
        .expect("approver key");
    let bearer = [format!("Authorization: Bearer {}", approver.trim())];
    for n in 0..16 {
        assert_eq!(
            status_of(&url, "/mcp", &bearer),
            200,
            "approver session {n}"
        );
    }
    assert_eq!(status_of(&url, "/mcp", &bearer), 500, "every place taken");
}

#[test]
fn the_daemon_serves_mcp_over_streamable_http_to_its_bearer_only() {
    let (_home, d, url, token) = serving_http(&[]);
    let port = url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .expect("port");
    let bearer = |t: &str| format!("Authorization: Bearer {t}");

    // The doors, tried from outside.
    assert_eq!(status_of(&url, "/mcp", &[]), 401, "no bearer");
    assert_eq!(
        status_of(&url, "/mcp", &[bearer("0".repeat(64).as_str())]),
        401,
        "a wrong key"
    );
    assert_eq!(
        status_of(&url, "/mcp", &[bearer(&format!("{token}0"))]),
        401,
        "the key and more"
    );
    assert_eq!(
        status_of(&url, "/mcp", &[bearer(&token[..63])]),
        401,
        "part of the key"
    );
    assert_eq!(
        status_of(&url, "/mcp", &[format!("Authorization: Basic {token}")]),
        401,
        "another scheme"
    );
    assert_eq!(
        status_of(
            &url,
            "/mcp",
            &[bearer(&token), format!("Host: rebound.example:{port}")]
        ),
        403,
        "a DNS-rebound Host"
    );
    assert_eq!(
        status_of(
            &url,
            "/mcp",
            &[bearer(&token), "Origin: http://evil.example".into()]
        ),
        403,
        "a foreign page's Origin"
    );
    assert_eq!(
        status_of(
            &url,
            "/mcp",
            &[bearer(&token), format!("Origin: http://localhost:{port}")]
        ),
        200,
        "a loopback page at this port"
    );
    assert_eq!(status_of(&url, "/", &[bearer(&token)]), 404, "only /mcp");
    assert_eq!(status_of(&url, "/mcp", &[bearer(&token)]), 200, "the key");

    // A real client, through every gate.
    let (mut mcp, listed) = McpClient::http(&d, &url, &token, "approve");
    lists_runs_and_is_told_why(&mut mcp, &listed);
    journaled_as_mcp(&d);

    // The client key as bearer: not an approver. Its flagged call waits for the operator.
    mcp.send(
        "shell",
        json!({ "program": "echo", "args": ["xyzzy-9"], "explanation": "print a marker" }),
    );
    decide(&d, "approve");
    let echoed = mcp.answer();
    assert_eq!(echoed["is_error"], false, "no form for it: {echoed}");
    drop(mcp);
    // The approver key as bearer: the operator marked this client.
    let approver = std::fs::read_to_string(d.home.join("data/passepartout/keys/approver.key"))
        .expect("approver key");
    let (mut mcp, _) = McpClient::http(&d, &url, approver.trim(), "deny");
    asked_and_decided(&mut mcp, &d, "xyzzy-10", "deny");
}

#[test]
fn the_mcp_transport_stays_on_loopback_and_needs_authentication() {
    for (config, args, says) in [
        ("[mcp]\nhttp = \"0.0.0.0:0\"\n", &[][..], "any_interface"),
        ("[mcp]\nhttp = \"localhost\"\n", &[][..], "IP:PORT"),
        (
            "[mcp]\nhttp = \"127.0.0.1:0\"\n",
            &["--insecure-no-auth"][..],
            "authentication",
        ),
    ] {
        let home = home_with_shell(config);
        let mut argv = vec!["daemon", "--port", "0"];
        argv.extend(args);
        let out = command(home.path(), &argv, &[]).output().expect("daemon");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{config}: {stderr}");
        assert!(stderr.contains(says), "{config}: {stderr}");
    }
}
