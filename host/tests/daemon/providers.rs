//! A faulty model provider behind the daemon: `send` exits 1 when every provider fails (as
//! `ask` does), the breaker's state shows in `status`, and each client session has its own
//! token budget.

use std::path::Path;
use std::time::{Duration, Instant};

use passepartout_tests::http::{Canned, Server};
use serde_json::json;

use super::{command, start};

/// Write `home`'s passepartout.toml.
pub(super) fn config(home: &Path, providers: &str) {
    let dir = home.join("config/passepartout");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("passepartout.toml"), providers).expect("config");
}

/// One OpenAI-protocol provider `local` (model `test-model`) at the loopback server `url`.
pub(super) fn openai(url: &str) -> String {
    format!(
        "[[providers]]\nname = \"local\"\nprotocol = \"openai\"\nbase_url = \"{url}/v1\"\nmodel = \"test-model\"\n"
    )
}

#[test]
fn a_provider_that_cannot_be_reached_fails_send_with_1_and_status_shows_it_left_alone() {
    let home = tempfile::tempdir().expect("temp dir");
    config(
        home.path(),
        "[[providers]]\nname = \"gone\"\nprotocol = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n",
    );
    let d = start(home.path(), &[], None);
    let send = || {
        command(home.path(), &["send", "hello"], &[])
            .output()
            .expect("send")
    };
    let first = send();
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(first.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("every provider failed: gone (m): cannot connect"),
        "{stderr}"
    );
    let status = command(home.path(), &["status", "--json"], &[])
        .output()
        .expect("status");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).expect("JSON");
    let gone = &status["daemon"]["providers"][0];
    assert_eq!(gone["provider"], "gone", "{status}");
    assert_eq!(gone["state"], "open", "{status}");
    let started = Instant::now();
    let second = send();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("gone: left alone for"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(d);
}

#[test]
fn each_client_session_has_its_own_token_budget() {
    let home = tempfile::tempdir().expect("temp dir");
    // Each answer reports 100k tokens: one call spends a 50k session budget.
    let costly = Canned::json(
        json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": 100_000, "completion_tokens": 0}}).to_string(),
    );
    let server = Server::start(vec![costly.clone(), costly.clone(), costly]);
    config(
        home.path(),
        &format!(
            "[[providers]]\nname = \"local\"\nprotocol = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\n\n[budget]\nsession_tokens = 50000\n",
            server.url
        ),
    );
    let d = start(home.path(), &[], None);
    let ask = |client: &mut passepartout::daemon::client::Client| {
        let (_, reply) = client
            .request_raw("ask", json!({ "text": "hello" }))
            .expect("ask");
        reply["result"]["steps"][0]["outcome"].clone()
    };
    let mut alice = d.client();
    let mut bob = d.client();
    let first = ask(&mut alice);
    assert_eq!(first["outcome"], "ran", "{first}");
    let refused = ask(&mut alice);
    assert_eq!(refused["outcome"], "failed", "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .is_some_and(|e| e.contains("this session has 0 of its 50000 left")),
        "{refused}"
    );
    assert_eq!(
        ask(&mut bob)["outcome"],
        "ran",
        "bob's session has its own budget"
    );
}

/// A home whose memory store holds a project `release-1` (a body, a child) and another
/// project, the model at `server`, under `policy`.
fn focus_home(server: &Server, policy: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("temp dir");
    let org = home.path().join("org");
    std::fs::create_dir_all(&org).expect("mkdir");
    std::fs::write(
        org.join("work.org"),
        "* TODO Ship the release :project:\n:PROPERTIES:\n:ID: release-1\n:END:\nThe tag is cut on Friday.\n** TODO Write the notes\n* TODO Paint the shed :project:\n",
    )
    .expect("write");
    config(
        home.path(),
        &format!(
            "{}\n[memory]\npaths = [\"{}\"]\n",
            openai(&server.url),
            org.display()
        ),
    );
    std::fs::write(home.path().join("config/passepartout/policy.toml"), policy).expect("policy");
    // In the store before the daemon listens (the daemon ingests its paths after).
    let ingest = command(
        home.path(),
        &["memory", "ingest", org.to_str().expect("utf-8")],
        &[],
    )
    .output()
    .expect("ingest");
    assert!(ingest.status.success(), "{ingest:?}");
    home
}

/// Ask about `focus` and expect it refused: the refusal's message.
fn refused_focus(client: &mut passepartout::daemon::client::Client, focus: &str) -> String {
    let (_, refused) = client
        .request_raw("ask", json!({ "text": "when?", "focus": focus }))
        .expect("ask");
    assert_eq!(refused["type"], "error", "{refused}");
    // Clients tell a refused focus by the field it names, not by the message's words.
    assert_eq!(refused["error"]["field"], "focus", "{refused}");
    refused["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_focus_is_a_read_of_the_memory_the_gates_judge_first() {
    let server = Server::start(vec![Canned::text("noted")]);
    // The operator's policy: reading a headline needs a person.
    let home = focus_home(
        &server,
        "[plugins.approval.config]\ndangerous_tools = [\"memory-get\"]\n",
    );
    let d = start(home.path(), &[], None);
    let mut client = d.client();
    let why = refused_focus(&mut client, "release-1");
    assert!(
        why.contains("reading headline \"release-1\" needs a person's approval"),
        "{why}"
    );
    assert!(!why.contains("Ship the release"), "{why}");
    assert!(
        server.requests().iter().all(|r| r.method != "POST"),
        "no model was asked"
    );
}

/// The focus's verdicts are on disk before the headline goes to a model: a journal that
/// refuses the `focus` record (a trigger in the daemon's own database) fails the ask, and no
/// model is asked.
#[test]
fn a_focus_whose_record_the_journal_refuses_is_not_read() {
    let server = Server::start(vec![Canned::text("noted")]);
    let home = focus_home(&server, "");
    let d = start(home.path(), &[], None);
    let db = rusqlite::Connection::open(home.path().join("data/passepartout/passepartout.db"))
        .expect("the daemon's database");
    db.execute_batch(
        "CREATE TRIGGER refuse_focus BEFORE INSERT ON journal WHEN NEW.kind = 'focus' \
         BEGIN SELECT RAISE(ABORT, 'focus refused by the test'); END;",
    )
    .expect("trigger");
    let mut client = d.client();
    let (_, refused) = client
        .request_raw("ask", json!({ "text": "when?", "focus": "release-1" }))
        .expect("ask");
    assert_eq!(refused["type"], "error", "{refused}");
    let why = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        why.contains("journal cannot be written") && why.contains("focus refused by the test"),
        "{why}"
    );
    assert!(
        server.requests().iter().all(|r| r.method != "POST"),
        "no model was asked"
    );
}

#[test]
fn an_ask_with_a_focus_shows_the_model_that_headline_and_names_it_in_the_reply() {
    let server = Server::start(vec![Canned::text("noted")]);
    let home = focus_home(&server, "");
    let d = start(home.path(), &[], None);
    let mut client = d.client();

    // An unknown headline is the request's fault, named, and no model is asked.
    let why = refused_focus(&mut client, "nope");
    assert!(why.contains("no headline has the ID \"nope\""), "{why}");
    let why = refused_focus(&mut client, &"x".repeat(300));
    assert!(why.contains("1 to 256 characters"), "{why}");

    let (_, reply) = client
        .request_raw("ask", json!({ "text": "when?", "focus": "release-1" }))
        .expect("ask");
    assert_eq!(reply["type"], "reply", "{reply}");
    let focus = &reply["result"]["focus"];
    assert_eq!(focus["id"], "release-1", "{reply}");
    assert_eq!(focus["title"], "Ship the release", "{reply}");
    assert_eq!(focus["todo"], "TODO", "{reply}");
    let asked: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(asked.len(), 1, "the refused asks reached no model");
    let system = asked[0].body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let focus_at = system.find("FOCUS").expect("a FOCUS section");
    let body_at = system.find("The tag is cut on Friday.").expect("its body");
    assert!(system.contains("Write the notes (ID:"), "{system}");
    // The whole store's outline still follows, with the other project.
    let outline_at = system.rfind("Paint the shed").expect("the outline");
    assert!(focus_at < body_at && body_at < outline_at, "{system}");

    // The system prompt of the last question the model was asked.
    let last_system = |server: &Server| {
        let last = server.requests().into_iter().rfind(|r| r.method == "POST");
        let system = last.map(|r| r.body["messages"][0]["content"].clone());
        system
            .and_then(|s| s.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    // Without a focus, no FOCUS section and no `focus` in the reply.
    server.push(Canned::text("fine"));
    let (_, reply) = client
        .request_raw("ask", json!({ "text": "and?" }))
        .expect("ask");
    assert!(reply["result"].get("focus").is_none(), "{reply}");
    let system = last_system(&server);
    assert!(!system.contains("FOCUS"), "{system}");

    // The command line's `send --focus`: the same, and a bad focus is a bad request (exit 2).
    let send = |focus: &str| {
        command(home.path(), &["send", "--focus", focus, "and now?"], &[])
            .output()
            .expect("send")
    };
    let bad = send("nope");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("no headline has the ID \"nope\""),
        "{stderr}"
    );
    server.push(Canned::text("on it"));
    let good = send("release-1");
    assert!(good.status.success(), "{good:?}");
    let system = last_system(&server);
    assert!(system.contains("The tag is cut on Friday."), "{system}");
}
