//! What a faulty or verbose model does to the commands, against a real model server on
//! loopback: exit codes follow how the request ended, the same for `act`, `ask`, `approve` and
//! `deny` (docs/cli.md, "Exit codes"; the hostile test gate rejects and asks for approval on
//! cue), and a huge answer does not grow the journal by its size.

use std::path::Path;

use passepartout_tests::http::{Canned, Server, fixture};

use super::passepartout;

/// An OpenAI-style answer calling `eval` with `args`.
fn tool_call(args: &str) -> Canned {
    let args: serde_json::Value = serde_json::from_str(args).expect("args");
    Canned::tool_call("call_1", "eval", &args)
}

fn home_with(server: &Server, extra: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("temp dir");
    let config = home.path().join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join("passepartout.toml"),
        format!(
            "[[providers]]\nname = \"local\"\nprotocol = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"test-model\"\ntimeout_secs = 5\n{extra}",
            server.url
        ),
    )
    .expect("config");
    passepartout_tests::plugin_folder_of(
        &home.path().join("plugins/hostile-gate"),
        passepartout_tests::HOSTILE_GATE_WASM,
        passepartout_tests::HOSTILE_GATE_MANIFEST,
    );
    home
}

/// Run with the hostile gate loaded; the exit code, stdout and stderr.
fn run(home: &Path, args: &[&str]) -> (i32, String, String) {
    let plugins = home.join("plugins");
    let mut all = vec!["--plugins", plugins.to_str().expect("utf-8")];
    all.extend(args);
    let out = passepartout(home, &all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn ask_exits_by_how_the_request_ended_not_by_its_first_step() {
    // 1. The model calls a tool, then fails on its answer turn: a failure, said and exit 1.
    // 2. Every provider fails at once: exit 1.
    // 3. It answers: exit 0.
    // 4. Its proposal is rejected on every attempt: exit 3, as for `act`.
    // 5. It asks for something a person must approve: exit 4.
    let server = Server::start(vec![tool_call(r#"{"expression": "(+ 1 2)"}"#)]);
    let home = home_with(&server, "");
    let ask = |canned: Vec<Canned>| {
        for c in canned {
            server.push(c);
        }
        run(home.path(), &["ask", "what is 1 + 2?"])
    };
    let (code, _, err) = ask(vec![Canned::status(500, "{\"error\": \"down\"}")]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("error: llm error: every provider failed"),
        "{err}"
    );
    let (code, _, err) = ask(vec![Canned::status(500, "{\"error\": \"down\"}")]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.matches("HTTP 500").count(),
        1,
        "said once, not again as a log line: {err}"
    );
    assert!(!err.contains("WARN") && !err.contains('\u{1b}'), "{err}");
    let (code, out, err) = ask(vec![Canned::json(fixture("openai/text.json"))]);
    assert_eq!((code, out.trim()), (0, "Hello from the fixture."), "{err}");
    let reject = r#"{"do": "reject", "expression": "(+ 1 2)"}"#;
    let (code, _, err) = ask(vec![
        tool_call(reject),
        tool_call(reject),
        tool_call(reject),
    ]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("rejected by hostile-gate"), "{err}");
    let (code, _, err) = ask(vec![tool_call(
        r#"{"do": "approve", "expression": "(+ 1 2)"}"#,
    )]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("approval required"), "{err}");
}

#[test]
fn a_model_that_calls_tools_forever_is_stopped_said_and_fails() {
    let calls = (0..4)
        .map(|_| tool_call(r#"{"expression": "(+ 1 2)"}"#))
        .collect();
    let server = Server::start(calls);
    let home = home_with(&server, "\n[pipeline]\nmax_depth = 2\n");
    let (code, out, err) = run(home.path(), &["ask", "loop"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out, "", "no answer came: nothing on stdout");
    assert_eq!(
        err.matches("  ran eval: 3").count(),
        3,
        "each call said once: {err}"
    );
    assert!(
        err.contains("stopped: past the depth limit") && err.contains("max_depth"),
        "{err}"
    );
    assert_eq!(
        server.requests().len(),
        3,
        "depths 0, 1 and 2 ask the model; depth 3 is dropped"
    );
}

#[test]
fn act_approve_and_deny_share_the_table() {
    let server = Server::start(vec![]);
    let home = home_with(&server, "");
    let act = |args: &str| {
        run(
            home.path(),
            &[
                "act",
                "--action",
                &format!(r#"{{"tool":"eval","args":{args}}}"#),
            ],
        )
    };
    assert_eq!(act(r#"{"expression":"(+ 1 1)"}"#).0, 0);
    assert_eq!(act(r#"{"do":"reject","expression":"(+ 1 1)"}"#).0, 3);
    assert_eq!(act(r#"{"expression":"(car 5)"}"#).0, 5, "the tool failed");
    assert_eq!(act(r#"{"expression":"#).0, 2, "malformed JSON");
    let token = |out: &str| {
        out.split("Token: ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .expect("a token")
            .to_owned()
    };
    // verify names the verdict as the journal and --json do.
    let (code, out, _) = run(
        home.path(),
        &[
            "verify",
            "--action",
            r#"{"tool":"eval","args":{"do":"approve","expression":"(+ 2 2)"}}"#,
        ],
    );
    assert_eq!(code, 4);
    assert!(
        out.contains("require_approval") && !out.contains("requireapproval"),
        "{out}"
    );
    let (code, out, _) = act(r#"{"do":"approve","expression":"(+ 2 2)"}"#);
    assert_eq!(code, 4);
    let (code, out, err) = run(home.path(), &["approve", &token(&out)]);
    assert_eq!((code, out.trim()), (0, "4"), "{err}");
    let (code, out, _) = act(r#"{"do":"approve","expression":"(+ 2 2)"}"#);
    assert_eq!(code, 4);
    assert_eq!(run(home.path(), &["deny", &token(&out)]).0, 0);
    assert_eq!(run(home.path(), &["approve", "no-such-token"]).0, 2);
    assert_eq!(run(home.path(), &["deny", "no-such-token"]).0, 2);
}

#[test]
fn a_12_mb_answer_grows_the_journal_by_less_than_1_mb() {
    let line = "All work and no play makes Jack a dull boy.\n";
    let answer = line.repeat((12 << 20) / line.len() + 1);
    // The gates refuse it (the secrets gate runs out of fuel on 12 MB, and fails closed), so
    // the model proposes it three times: each attempt is journaled.
    let server = Server::start(vec![
        Canned::text("warm up"),
        Canned::text(&answer),
        Canned::text(&answer),
        Canned::text(&answer),
    ]);
    let home = home_with(&server, "");
    let size = |home: &Path| {
        ["passepartout.db", "passepartout.db-wal"]
            .iter()
            .map(|f| {
                std::fs::metadata(home.join("data/passepartout").join(f)).map_or(0, |m| m.len())
            })
            .sum::<u64>()
    };
    // The first ask creates the database and its tables.
    assert_eq!(run(home.path(), &["ask", "hi"]).0, 0);
    let before = size(home.path());
    let (code, _, err) = run(home.path(), &["ask", "tell me everything"]);
    assert_eq!(code, 3, "{err}");
    assert_eq!(server.requests().len(), 4, "three attempts");
    let grew = size(home.path()) - before;
    assert!(grew < 1 << 20, "the journal grew by {grew} bytes");
    let shown = passepartout(home.path(), &["journal", "show", "--json"]);
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("cut by the journal: ") && text.contains(" bytes in all, sha256 "),
        "a cut text says how long it was and its hash"
    );
}

#[test]
fn control_sequences_in_a_models_answer_are_shown_not_obeyed() {
    let server = Server::start(vec![Canned::text(
        "fine\u{1b}[2J\u{1b}]0;pwned\u{7}\rFAKE PROMPT $ \u{202e}txt.exe",
    )]);
    let home = home_with(&server, "");
    let (code, out, err) = run(home.path(), &["ask", "hi"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains('\u{1b}') && !out.contains('\r') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    assert!(
        out.contains("fine\\x1b[2J\\x1b]0;pwned\\x07\\rFAKE PROMPT $ \\u202etxt.exe"),
        "{out:?}"
    );
    // In JSON too: still JSON, with the same text in it, and nothing the terminal obeys.
    let sneaky = "x\u{7f}\u{85}\u{9b}\u{202e}y";
    server.push(Canned::text(sneaky));
    let (code, out, err) = run(home.path(), &["ask", "hi", "--json"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(report["steps"][0]["outcome"]["result"], sneaky);
}
