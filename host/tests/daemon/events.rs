//! Subscriptions: a client that follows the daemon hears each gate's verdict as the walk makes
//! it, approvals as they are asked for and decided (by anyone), journal records and status
//! changes; a client with only the client key hears its own requests' verdicts and may not
//! follow approvals or the journal; a plain request hears none of it.

use super::*;
use passepartout::daemon::client::{Reader, Sender};
use passepartout::daemon::request::{Request, Topic};

/// Read frames of request `id` until one satisfies `want` (60 s at most); the frames read.
fn until(reader: &mut Reader, id: &Value, mut want: impl FnMut(&Value) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    loop {
        assert!(Instant::now() < deadline, "not heard: {seen:?}");
        let frame = reader.read().expect("a frame");
        if frame["id"] != *id {
            continue;
        }
        let done = want(&frame);
        seen.push(frame);
        if done {
            return seen;
        }
    }
}

/// `client` subscribed to `topics`, each read waiting at most `patience`: its halves and the
/// subscription's id, once the daemon said it subscribed.
fn follow(client: Client, topics: Vec<Topic>, patience: Duration) -> (Sender, Reader, Value) {
    client.set_timeout(Some(patience)).expect("timeout");
    let (mut tx, mut rx) = client.split().expect("split");
    let id = tx.send(&Request::Subscribe { topics }).expect("subscribe");
    until(&mut rx, &id, |f| f["event"] == "subscribed");
    (tx, rx, id)
}

#[test]
fn a_follower_hears_verdicts_approvals_and_the_journal_as_they_happen() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    // A follower that only listens is a silent client: it is given a minute.
    let d = start(
        home.path(),
        &[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")],
        Some(&plugins),
    );

    // The operator's follower: everything (a read that waits past 60 s fails the test).
    let (_tx, mut follower, id) = follow(
        d.client(),
        vec![
            Topic::Traces,
            Topic::Approvals,
            Topic::Journal,
            Topic::Health,
        ],
        Duration::from_secs(60),
    );

    // Another client asks for an action a gate flags: its verdicts, then the approval.
    let mut asker = d.client();
    let token = needs_approval(&mut asker);
    let heard = until(&mut follower, &id, |f| {
        f["event"] == "approval-requested" && f["token"] == token.as_str()
    });
    let verdicts: Vec<&Value> = heard.iter().filter(|f| f["event"] == "gate").collect();
    assert!(
        verdicts
            .iter()
            .any(|f| f["verdict"]["record"]["verdict"] == "require_approval"),
        "{heard:?}"
    );
    assert!(
        verdicts.iter().all(|f| f["verdict"]["action"]
            .as_str()
            .is_some_and(|a| a.contains("eval"))),
        "{verdicts:?}"
    );
    assert!(
        heard.iter().any(|f| f["event"] == "journal"),
        "journal records as they are committed: {heard:?}"
    );

    // Decided by a third client: the follower hears it, with who decided.
    let mut operator = d.client();
    assert_eq!(result(&decide(&mut operator, "approve", &token)), "3");
    let heard = until(&mut follower, &id, |f| {
        f["event"] == "approval-decided" && f["token"] == token.as_str()
    });
    let decided = heard.last().expect("decided");
    assert_eq!(decided["decision"], "approved", "{decided}");

    // The status changes: heard as health (the decided approval no longer pending).
    until(&mut follower, &id, |f| {
        f["event"] == "health" && f["status"]["pending_approvals"] == 0
    });
}

#[test]
fn a_client_key_follows_only_its_own_verdicts_and_a_plain_request_hears_nothing_more() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    // A follower that only listens is a silent client: it is given a minute, not the tests'
    // usual 2 s.
    let d = start(
        home.path(),
        &[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")],
        Some(&plugins),
    );

    // Approvals and the journal need the approver key.
    let mut tool = d.client_only();
    for topic in ["approvals", "journal"] {
        let (_, refused) = tool
            .request_raw("subscribe", json!({ "topics": ["traces", topic] }))
            .expect("request");
        assert!(
            refused["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("needs the approver key")),
            "{refused}"
        );
    }

    let (mut tx, mut own, id) = follow(
        d.client_only(),
        vec![Topic::Traces],
        Duration::from_secs(60),
    );

    // Another connection's request: not heard. Its own: heard, verdict by verdict.
    let other = eval(&mut d.client(), 40, 2);
    assert_eq!(result(&other), "42");
    let act = tx
        .send(&Request::Act {
            action: serde_json::from_value(
                json!({ "tool": "eval", "args": { "expression": "(+ 1 1)" } }),
            )
            .expect("action"),
        })
        .expect("act");
    // Read up to the reply of `act`; then a ping (sent after it: whatever the subscription
    // had queued by then comes before the pong).
    let mut on_subscription = Vec::new();
    let answered = loop {
        let frame = own.read().expect("a frame");
        if frame["id"] == act && frame["type"] == "reply" {
            break frame;
        } else if frame["id"] == id {
            on_subscription.push(frame);
        }
    };
    assert_eq!(answered["result"]["steps"][0]["outcome"]["result"], "2");
    let ping = tx.send(&Request::Ping).expect("ping");
    loop {
        let frame = own.read().expect("a frame");
        if frame["id"] == ping {
            break;
        } else if frame["id"] == id {
            on_subscription.push(frame);
        }
    }
    assert!(
        on_subscription.iter().all(|f| f["verdict"]["action"]
            .as_str()
            .is_some_and(|a| a.contains("(+ 1 1)"))),
        "another connection's verdicts leaked: {on_subscription:?}"
    );
    assert!(!on_subscription.is_empty(), "its own verdicts, live");

    // A connection that subscribed to nothing hears nothing of others' requests.
    let mut plain = d.client();
    assert_eq!(result(&eval(&mut d.client(), 2, 2)), "4");
    let (events, pong) = plain.call(&Request::Ping).expect("ping");
    assert_eq!(pong["result"], "pong");
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn an_approval_that_expires_unanswered_is_heard_as_expired() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let d = start(
        home.path(),
        &[
            ("PASSEPARTOUT_APPROVAL_EXPIRY_SECS", "2"),
            ("PASSEPARTOUT_READ_TIMEOUT_SECS", "60"),
        ],
        Some(&plugins),
    );
    // One waits before the follower subscribes, one is asked after.
    let mut asker = d.client();
    let before = needs_approval(&mut asker);
    let (_tx, mut follower, id) =
        follow(d.client(), vec![Topic::Approvals], Duration::from_secs(60));
    let after = needs_approval(&mut asker);
    let heard = until(&mut follower, &id, |f| {
        f["event"] == "approval-requested" && f["token"] == after.as_str()
    });
    let requested = heard.last().expect("requested");
    assert!(requested["expires_at"].as_f64().is_some(), "{requested}");

    // Nobody answers: each is heard as expired, the one asked later with its request's seq.
    let mut expired = std::collections::BTreeMap::new();
    until(&mut follower, &id, |f| {
        if f["event"] == "approval-decided" && f["decision"] == "expired" {
            expired.insert(
                f["token"].as_str().unwrap_or_default().to_owned(),
                f["seq"].clone(),
            );
        }
        expired.len() == 2
    });
    assert!(
        expired.contains_key(&before) && expired.contains_key(&after),
        "{expired:?}"
    );
    assert_eq!(expired[&after], requested["seq"]);
    // And the daemon agrees: nothing waits.
    let (_, listed) = asker
        .request_raw("approvals", json!({}))
        .expect("approvals");
    assert_eq!(listed["result"], json!([]), "{listed}");
}

#[test]
fn a_client_key_is_not_shown_what_others_calls_left_behind() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[], None);
    // One client's tool call fails, quoting what it was asked.
    let (_, failed) = d
        .client()
        .request_raw(
            "act",
            json!({ "action": { "tool": "read-file", "args": { "path": "/srv/secret-plans.txt" } } }),
        )
        .expect("act");
    assert!(failed.to_string().contains("secret-plans"), "{failed}");
    let files = |status: &Value| {
        status["result"]["plugins"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["name"] == "files").cloned())
            .unwrap_or_else(|| panic!("no files plugin: {status}"))
    };
    // The operator sees the last error; another client with the client key does not.
    let (_, operator) = d.client().request_raw("status", json!({})).expect("status");
    assert!(
        files(&operator)["telemetry"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("secret-plans")),
        "{operator}"
    );
    let (_, other) = d
        .client_only()
        .request_raw("status", json!({}))
        .expect("status");
    assert!(!other.to_string().contains("secret-plans"), "{other}");
    assert_eq!(files(&other)["telemetry"]["failures"], 1, "{other}");
    assert!(
        other["result"]["not_loaded"].as_array().is_some_and(|n| n
            .iter()
            .all(|n| n["why"] == "(told to the approver key only)")),
        "{other}"
    );
}

/// A client-key follower of `health` hears a change only when what it is shown changes: two
/// reloads failing for different reasons change only the error text withheld from it (the
/// approver key's follower hears both), so it hears that the daemon is degraded once, not
/// that something it may not read changed.
#[test]
fn a_client_key_follower_hears_no_change_it_is_not_shown() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(
        home.path(),
        &[
            ("PASSEPARTOUT_READ_TIMEOUT_SECS", "60"),
            ("PASSEPARTOUT_RELOAD_POLL_MS", "0"),
        ],
        None,
    );
    // Each hears the status first, as it is now.
    let health = |client: Client| {
        let (tx, mut rx, id) = follow(client, vec![Topic::Health], Duration::from_secs(3));
        until(&mut rx, &id, |f| f["event"] == "health");
        (tx, rx, id)
    };
    let (_keep_op, mut operator, op_id) = health(d.client());
    let (_keep_tool, mut tool, _) = health(d.client_only());
    let policy = home.path().join("config/passepartout/policy.toml");
    std::fs::create_dir_all(policy.parent().expect("dir")).expect("mkdir");
    let mut asker = d.client();
    for broken in ["this is not toml", "[plugins.files]\nfs = 7\n"] {
        std::fs::write(&policy, broken).expect("policy");
        let (_, reply) = asker.request_raw("reload", json!({})).expect("reload");
        assert_eq!(reply["type"], "error", "{reply}");
        let shown = reply["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        // The approver key's follower hears this very failure.
        until(&mut operator, &op_id, |f| {
            f["event"] == "health"
                && f["status"]["reload"]["last_error"]
                    .as_str()
                    .is_some_and(|e| shown.contains(e) || e.contains(&shown))
        });
    }
    let mut heard = Vec::new();
    while let Ok(frame) = tool.read() {
        if frame["event"] == "health" {
            heard.push(frame);
        }
    }
    assert_eq!(
        heard.len(),
        1,
        "the client key's follower heard the same status again: {heard:?}"
    );
    assert_eq!(heard[0]["status"]["health"], "degraded", "{heard:?}");
}

/// A subscription's topics are kept for the connection's life: one naming a topic thousands
/// of times is refused, naming the limit, and a connection follows a topic under one
/// subscription only (a second would have every event sent twice). The connection goes on.
#[test]
fn a_connection_follows_each_topic_once() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(
        home.path(),
        &[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")],
        None,
    );
    let client = d.client();
    client
        .set_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let (mut tx, mut rx) = client.split().expect("split");
    let first_answer = |rx: &mut Reader, id: &Value| until(rx, id, |_| true).remove(0);

    let many = tx
        .send(&Request::Subscribe {
            topics: vec![Topic::Health; 10_000],
        })
        .expect("subscribe");
    let refused = first_answer(&mut rx, &many);
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["error"]["kind"], "request", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("at most 4 topics") && m.contains("10000")),
        "{refused}"
    );

    let traces = tx
        .send(&Request::Subscribe {
            topics: vec![Topic::Traces],
        })
        .expect("subscribe");
    let subscribed = first_answer(&mut rx, &traces);
    assert_eq!(subscribed["event"], "subscribed", "{subscribed}");
    assert_eq!(subscribed["topics"], json!(["traces"]), "{subscribed}");
    let again = tx
        .send(&Request::Subscribe {
            topics: vec![Topic::Health, Topic::Traces],
        })
        .expect("subscribe");
    let refused = first_answer(&mut rx, &again);
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["error"]["kind"], "request", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("already follows `traces`")),
        "{refused}"
    );

    // The connection goes on; nothing more comes under the refused request's id.
    let ping = tx.send(&Request::Ping).expect("ping");
    let mut late = Vec::new();
    loop {
        let frame = rx.read().expect("a frame");
        if frame["id"] == ping {
            assert_eq!(frame["result"], "pong", "{frame}");
            break;
        }
        if frame["id"] == again || frame["id"] == many {
            late.push(frame);
        }
    }
    assert!(late.is_empty(), "{late:?}");
}
