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
