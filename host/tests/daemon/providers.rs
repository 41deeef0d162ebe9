//! A faulty model provider behind the daemon: `send` exits 1 when every provider fails (as
//! `ask` does), the breaker's state shows in `status`, each client session has its own
//! token budget, and asks in flight at once cannot together overspend a budget.

use std::path::Path;
use std::time::{Duration, Instant};

use passepartout::daemon::client::Client;
use passepartout::daemon::request::Request;
use passepartout_tests::http::{Canned, Server};
use serde_json::{Value, json};

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

/// What an `ask` of "hello" in a fresh session could use, as the cascade estimates it before
/// calling: the number a budget of one token refuses it with (`home`'s daemon is started and
/// stopped for it).
fn estimate_of_hello(home: &Path, url: &str) -> u64 {
    config(
        home,
        &format!("{}\n[budget]\nsession_tokens = 1\n", openai(url)),
    );
    let d = start(home, &[], None);
    let (_, reply) = d
        .client()
        .request_raw("ask", json!({ "text": "hello" }))
        .expect("ask");
    drop(d);
    let error = reply["result"]["steps"][0]["outcome"]["error"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    error
        .split("could use about ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no estimate in {reply}"))
}

/// Send `asks` "hello"s on each of `clients` at once (pipelined: none waits for another's
/// answer) and return every step outcome.
fn asks_at_once(clients: Vec<Client>, asks: usize) -> Vec<Value> {
    let readers: Vec<_> = clients
        .into_iter()
        .map(|client| {
            client
                .set_timeout(Some(Duration::from_secs(60)))
                .expect("timeout");
            let (mut tx, rx) = client.split().expect("split");
            for _ in 0..asks {
                tx.send(&Request::Ask {
                    text: "hello".to_owned(),
                    focus: None,
                })
                .expect("send");
            }
            (tx, rx)
        })
        .collect();
    let mut outcomes = Vec::new();
    for (_tx, mut rx) in readers {
        let mut answered = 0;
        while answered < asks {
            let m = rx.read().expect("read");
            if m["type"] == "reply" {
                answered += 1;
                outcomes.push(m["result"]["steps"][0]["outcome"].clone());
            } else if m["type"] == "error" {
                panic!("request refused: {m}");
            }
        }
    }
    outcomes
}

/// The calls the model server was asked (its probes left out).
fn model_calls(server: &Server) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .count()
}

/// A slow answer (every ask is in flight while the others are made) that reports `prompt`
/// tokens used.
fn slow_answer(prompt: u64) -> Canned {
    Canned {
        delay: Duration::from_millis(1500),
        ..Canned::json(
            json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": prompt, "completion_tokens": 1}})
                .to_string(),
        )
    }
}

/// Eight asks in flight at once, on `clients` connections, against a daemon whose model
/// answers slowly and whose budget, written by `budget` from an ask's estimate, has room for
/// one: one is asked of the model, and one at least of the others names, in its refusal,
/// what the one in flight reserved (`refusal`).
fn only_one_of_eight_at_once(budget: impl Fn(u64) -> String, clients: usize, refusal: &str) {
    let home = tempfile::tempdir().expect("temp dir");
    let server = Server::start(Vec::new());
    let estimate = estimate_of_hello(home.path(), &server.url);
    // Each answer spends the whole estimate.
    for _ in 0..8 {
        server.push(slow_answer(estimate));
    }
    config(
        home.path(),
        &format!("{}\n{}", openai(&server.url), budget(estimate)),
    );
    let d = start(home.path(), &[], None);
    let outcomes = asks_at_once((0..clients).map(|_| d.client()).collect(), 8 / clients);
    let ran = outcomes.iter().filter(|o| o["outcome"] == "ran").count();
    assert_eq!(ran, 1, "one ask fits the budget: {outcomes:?}");
    assert_eq!(model_calls(&server), 1, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .any(|o| o["error"].as_str().is_some_and(|e| e.contains(refusal))),
        "{outcomes:?}"
    );
}

#[test]
fn asks_in_flight_at_once_cannot_together_overspend_a_session() {
    // One ask's estimate fits the session's budget, two do not.
    only_one_of_eight_at_once(
        |estimate| format!("[budget]\nsession_tokens = {}\n", estimate * 3 / 2),
        1,
        "more are reserved by its calls in flight",
    );
}

#[test]
fn asks_of_many_sessions_at_once_cannot_together_overspend_the_day() {
    // $1,000 per million tokens: an ask's estimate costs about estimate / 1000 dollars, and
    // the day allows one and a half of it.
    only_one_of_eight_at_once(
        |estimate| {
            format!(
                "[prices.\"test-model\"]\ninput = 1000.0\noutput = 1000.0\n\n[budget]\ndaily_usd = {}\n",
                estimate as f64 * 1.5 / 1000.0
            )
        },
        8,
        "more reserved by calls in flight",
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
