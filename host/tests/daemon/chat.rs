//! `passepartout chat` against a real daemon and a loopback model server (OpenAI protocol): an
//! answer is printed once, and the result of an action approved from another client is
//! printed by the chat that asked as soon as it comes, labelled with the question it answers,
//! without any further input.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use passepartout_tests::http::{Canned, Server};
use serde_json::json;

use super::mcp::{decide, home_with_shell};
use super::{command, start};

/// Lines of a child's output as they come, on a channel (so a test can wait with a deadline).
fn lines(from: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// Every line until one contains `marker` (panics after 30 s, showing what came).
fn until(rx: &mpsc::Receiver<String>, marker: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => {
                let found = line.contains(marker);
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(e) => panic!("no line with {marker:?} ({e}); got {seen:?}"),
        }
    }
}

#[test]
fn a_result_approved_elsewhere_reaches_the_chat_that_asked_at_once_and_labelled() {
    // The daemon probes the provider at boot (GET /v1/models, answered apart by the server).
    let model = Server::start(vec![
        Canned::text("Two."),
        Canned::tool_call(
            "call-1",
            "shell",
            &json!({ "program": "echo", "args": ["xyzzy-chat"], "explanation": "print the marker" }),
        ),
        Canned::text("The marker is printed."),
    ]);
    let home = home_with_shell(&format!(
        "[[providers]]\nname = \"local\"\nprotocol = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"m\"\n",
        model.url
    ));
    let d = start(home.path(), &[], None);
    let port = d.addr.rsplit(':').next().expect("port").to_owned();
    let mut chat = command(home.path(), &["chat", "--port", &port], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chat");
    let mut input = chat.stdin.take().expect("stdin");
    let out = lines(chat.stdout.take().expect("stdout"));
    let err = lines(chat.stderr.take().expect("stderr"));

    // An answer, once.
    writeln!(input, "what is one plus one?").expect("ask");
    let answered = until(&out, "Two.");
    assert_eq!(answered, ["Two."], "one answer, once");

    // A question whose action needs a person: the chat says so, and waits for nothing.
    writeln!(input, "print the marker").expect("ask");
    let asked = until(&err, "approval needed");
    assert!(
        asked.iter().any(|l| l.contains("passepartout approve")),
        "{asked:?}"
    );
    assert!(
        !asked.iter().any(|l| l.contains("gates:")),
        "traces only with --trace: {asked:?}"
    );
    // Another client approves; the chat that asked prints the result at once, labelled, with
    // no further input.
    decide(&d, "approve");
    // (The shell's output takes a few lines: the label starts the first.)
    let late = until(&out, "xyzzy-chat");
    assert!(
        late[0].starts_with("[answer to \"print the marker\"] tool output:"),
        "{late:?}"
    );
    // The tool's output is not printed twice.
    std::thread::sleep(Duration::from_millis(500));
    let rest: Vec<String> = out.try_iter().collect();
    assert!(
        !rest.iter().any(|l| l.contains("xyzzy-chat")),
        "printed again: {rest:?}"
    );
    drop(input);
    let status = chat.wait().expect("chat ends");
    assert!(status.success(), "{status:?}");

    // With --trace, each gate's verdict on the reply, labelled.
    model.push(Canned::text("Yes."));
    let mut traced = command(home.path(), &["chat", "--trace", "--port", &port], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chat --trace");
    let mut input = traced.stdin.take().expect("stdin");
    let out = lines(traced.stdout.take().expect("stdout"));
    let err = lines(traced.stderr.take().expect("stderr"));
    writeln!(input, "still there?").expect("ask");
    until(&out, "Yes.");
    let gates = until(&err, "gates: pii");
    assert!(
        gates.last().is_some_and(|l| l.contains("pass")),
        "{gates:?}"
    );
    drop(input);
    assert!(traced.wait().expect("chat ends").success());
}
