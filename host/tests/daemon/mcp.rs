//! `passepartout mcp` driven by the official MCP Python SDK (PyPI `mcp`, installed by
//! `.ci/run`) as a real third-party client over stdio, against a real daemon: the tools it
//! lists, a call that runs, a call a gate rejects (the client's model reads why), and a call a
//! gate flags, which waits until `passepartout approve` releases it.

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
    // The test's own environment says where Python's packages are.
    #[allow(clippy::disallowed_methods)]
    fn start(d: &Daemon) -> (McpClient, Value) {
        let port = d.addr.rsplit(':').next().expect("port").to_owned();
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
            .arg(env!("CARGO_BIN_EXE_passepartout"))
            .arg(&port)
            .env_clear()
            .envs(env)
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

#[test]
fn the_python_sdk_lists_calls_is_told_why_a_gate_refused_and_waits_for_approval() {
    let home = tempfile::tempdir().expect("temp dir");
    let config = home.path().join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
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
    let d = start(home.path(), &[], None);
    let (mut mcp, listed) = McpClient::start(&d);

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
    assert_eq!(eval, json!({ "is_error": false, "text": "3" }));

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

    // A flagged call waits, past the daemon's read timeout (2 s here: the bridge keeps its
    // connection alive), until `passepartout approve` releases it; its output is the call's.
    mcp.send(
        "shell",
        json!({ "program": "echo", "args": ["xyzzy-42"], "explanation": "print the marker the test looks for" }),
    );
    std::thread::sleep(Duration::from_secs(3));
    decide(&d, "approve");
    let echoed = mcp.answer();
    assert_eq!(echoed["is_error"], false, "{echoed}");
    assert!(
        echoed["text"]
            .as_str()
            .is_some_and(|t| t.contains("xyzzy-42")),
        "{echoed}"
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

/// Wait for the one approval pending, then `passepartout approve` (or `deny`) it.
fn decide(d: &Daemon, how: &str) {
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
