//! A reload reaches the turns already running: what they do next is verified by the gates in
//! force when they do it, not by the set they began under.

use std::time::{Duration, Instant};

use passepartout_tests::http::{Canned, Release, Server, openai_stream};
use serde_json::json;

use super::start;

#[test]
fn an_action_a_turn_proposes_after_a_reload_is_verified_by_the_gates_now_in_force() {
    let home = tempfile::tempdir().expect("temp dir");
    let config = home.path().join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join("policy.toml"),
        "[plugins.shell-guard]\nenabled = false\n",
    )
    .expect("policy");
    // The model's answer is held until the test lets it out: the turn is under way, on the
    // set without the guard, when the operator turns the guard back on.
    let release = Release::default();
    let args = json!({ "expression": "(+ 1 2)", "command": "rm -rf /" }).to_string();
    let model = Server::start(vec![
        Canned::events(
            vec![
                openai_stream::tool(0, Some(("call-1", "eval")), &args),
                openai_stream::end("tool_calls", 10, 5),
            ],
            Some(&release),
        ),
        Canned::text("done"),
    ]);
    super::providers::config(home.path(), &super::providers::openai(&model.url));
    let d = start(home.path(), &[("PASSEPARTOUT_RELOAD_POLL_MS", "0")], None);
    let mut asking = d.client();
    let turn = std::thread::spawn(move || {
        asking
            .request_raw("ask", json!({ "text": "add one and two" }))
            .expect("ask")
            .1
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while !model.requests().iter().any(|r| r.method == "POST") {
        assert!(Instant::now() < deadline, "the model was never asked");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(config.join("policy.toml"), "# all defaults\n").expect("policy");
    let (_, reloaded) = d.client().request_raw("reload", json!({})).expect("reload");
    assert_eq!(reloaded["result"]["changed"], true, "{reloaded}");
    release.allow(2);
    let reply = turn.join().expect("the asking thread");
    let outcome = &reply["result"]["steps"][0]["outcome"];
    assert_eq!(outcome["outcome"], "rejected", "{reply}");
    assert_eq!(outcome["gate"], "shell-guard", "{reply}");
}
