//! Streamed answers from a real HTTP server on 127.0.0.1 that writes server-sent events when
//! the test lets it: progress reported as the pieces come (never the text), the answer the
//! same as if it had come whole, falling through to the next provider only before the first
//! token, and streams that try to break the reader.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use passepartout::blocking::wait;
use passepartout::pipeline::{Progress, Provider, ProviderReply};
use passepartout::providers::{Cascade, Protocol};
use passepartout_tests::http::{Canned, Release, Server, fixture, openai_stream};
use serde_json::json;

use crate::providers::{endpoint, request};

const T: Duration = Duration::from_secs(5);

/// The question asked on its thread: its reply (or error's text) and the cascade.
type Asking = std::thread::JoinHandle<(Result<ProviderReply, String>, Cascade)>;

/// Ask `cascade` on a thread of its own, with progress collected.
fn ask(cascade: Cascade) -> (Asking, Arc<Mutex<Vec<Progress>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = seen.clone();
    let asking = std::thread::spawn(move || {
        let report = move |p: &Progress| into.lock().expect("lock").push(p.clone());
        let reply =
            wait(cascade.complete_with(&request(vec![]), Some(&report))).map_err(|e| e.to_string());
        (reply, cascade)
    });
    (asking, seen)
}

/// Wait until the last progress reported says `tokens`.
fn until_tokens(seen: &Mutex<Vec<Progress>>, tokens: u64) -> Progress {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(p) = seen.lock().expect("lock").last()
            && p.tokens == tokens
        {
            return p.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no progress of {tokens} tokens: {:?}",
            seen.lock().expect("lock")
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn openai_progress_comes_piece_by_piece_and_the_answer_is_the_whole_text() {
    let release = Release::default();
    let server = Server::start(vec![Canned::events(
        vec![
            openai_stream::text("Hel"),
            openai_stream::text("lo") + &openai_stream::text(" there"),
            openai_stream::end("stop", 10, 3),
        ],
        Some(&release),
    )]);
    let (asking, seen) = ask(Cascade::new(vec![endpoint(
        "local",
        Protocol::Openai,
        &server,
        T,
    )]));
    release.allow(1);
    let first = until_tokens(&seen, 1);
    assert_eq!(
        (first.provider.as_str(), first.model.as_str()),
        ("local", "test-model")
    );
    release.allow(1);
    until_tokens(&seen, 3);
    assert!(!asking.is_finished(), "the answer is not whole yet");
    release.allow(1);
    let (reply, cascade) = asking.join().expect("asked");
    assert_eq!(reply, Ok(ProviderReply::Text("Hello there".into())));
    // The usage chunk's counts (10 and 3), each raised to the local estimate where that is
    // more: the prompt's 37 tokens (145 bytes), the answer's 3.
    assert_eq!(cascade.spent(), 37 + 3);
    let body = &server.requests()[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        seen.lock()
            .expect("lock")
            .iter()
            .map(|p| p.tokens)
            .collect::<Vec<_>>(),
        vec![1, 3],
        "one report per piece that brought tokens"
    );
}

#[test]
fn openai_tool_call_pieces_join_into_one_call() {
    let server = Server::start(vec![Canned::events(
        vec![
            openai_stream::tool(0, Some(("call_1", "eval")), ""),
            openai_stream::tool(0, None, "{\"expr"),
            openai_stream::tool(0, None, "ession\": \"(+ 1 2)\"}"),
            openai_stream::end("tool_calls", 20, 9),
        ],
        None,
    )]);
    let (asking, seen) = ask(Cascade::new(vec![endpoint(
        "local",
        Protocol::Openai,
        &server,
        T,
    )]));
    let (reply, _) = asking.join().expect("asked");
    assert_eq!(
        reply,
        Ok(ProviderReply::ToolCall {
            id: "call_1".into(),
            name: "eval".into(),
            arguments: json!({"expression": "(+ 1 2)"}),
        })
    );
    assert_eq!(seen.lock().expect("lock").last().map(|p| p.tokens), Some(9));
}

#[test]
fn anthropic_stream_with_text_then_tool_use_is_the_tool_call() {
    let server = Server::start(vec![Canned::events(
        vec![fixture("anthropic/stream_tool_use.sse")],
        None,
    )]);
    let (asking, seen) = ask(Cascade::new(vec![endpoint(
        "claude",
        Protocol::Anthropic,
        &server,
        T,
    )]));
    let (reply, cascade) = asking.join().expect("asked");
    assert_eq!(
        reply,
        Ok(ProviderReply::ToolCall {
            id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6".into(),
            name: "eval".into(),
            arguments: json!({"expression": "(+ 1 2)"}),
        })
    );
    assert_eq!(cascade.spent(), 472 + 89);
    assert_eq!(server.requests()[0].body["stream"], true);
    assert_eq!(server.requests()[0].path, "/v1/messages");
    // Five deltas counted as they came; then the provider's own count.
    let tokens: Vec<u64> = seen
        .lock()
        .expect("lock")
        .iter()
        .map(|p| p.tokens)
        .collect();
    assert_eq!(
        (tokens.first(), tokens.last()),
        (Some(&5), Some(&89)),
        "{tokens:?}"
    );
}

#[test]
fn nobody_following_or_a_server_that_ignores_stream_gets_the_whole_answer() {
    let server = Server::start(vec![
        Canned::json(fixture("openai/text.json")),
        Canned::json(fixture("openai/text.json")),
    ]);
    let (asking, seen) = ask(Cascade::new(vec![endpoint(
        "local",
        Protocol::Openai,
        &server,
        T,
    )]));
    let (reply, cascade) = asking.join().expect("asked");
    assert_eq!(
        reply,
        Ok(ProviderReply::Text("Hello from the fixture.".into()))
    );
    assert!(seen.lock().expect("lock").is_empty());
    // Without a follower nothing asks to stream.
    wait(cascade.complete(&request(vec![]))).expect("answer");
    assert_eq!(server.requests()[1].body.get("stream"), None);
}

/// `first` fails before its first token: the second provider answers.
fn falls_through(first: Canned) -> String {
    let bad = Server::start(vec![first]);
    let good = Server::start(vec![Canned::events(
        vec![
            openai_stream::text("fine"),
            openai_stream::end("stop", 1, 1),
        ],
        None,
    )]);
    let (asking, _) = ask(Cascade::new(vec![
        endpoint("bad", Protocol::Openai, &bad, T),
        endpoint("good", Protocol::Openai, &good, T),
    ]));
    let (reply, cascade) = asking.join().expect("asked");
    assert_eq!(reply, Ok(ProviderReply::Text("fine".into())));
    assert_eq!(good.requests().len(), 1);
    // The provider that answered is charged; the one that failed, only when it answered
    // (2xx) what is not the protocol, and then for its prompt alone.
    let records = cascade.records();
    assert!(
        records.iter().any(|r| r.provider == "good")
            && records
                .iter()
                .filter(|r| r.provider == "bad")
                .all(|r| r.usage.output_tokens == 1),
        "{records:?}"
    );
    format!("{records:?}")
}

#[test]
fn a_stream_without_its_usage_chunk_is_still_charged() {
    // A server that ignores `stream_options.include_usage`: the finish, then `[DONE]`.
    let server = Server::start(vec![Canned::events(
        vec![
            openai_stream::text("Hello there, this is an answer."),
            openai_stream::finish("stop"),
        ],
        None,
    )]);
    let (asking, _) = ask(Cascade::new(vec![endpoint(
        "local",
        Protocol::Openai,
        &server,
        T,
    )]));
    let (reply, cascade) = asking.join().expect("asked");
    assert!(reply.is_ok(), "{reply:?}");
    // The prompt by estimate and the answer by its length: never nothing.
    let usage = cascade.records()[0].usage;
    assert!(
        usage.input_tokens > 0 && usage.output_tokens >= 8,
        "{usage:?}"
    );
}

#[test]
fn many_tool_call_indices_are_refused_not_kept() {
    let pieces: String = (0..100)
        .map(|i| openai_stream::tool(i, Some(("c", "eval")), "{}"))
        .collect();
    let server = Server::start(vec![Canned::events(
        vec![pieces, openai_stream::end("tool_calls", 1, 1)],
        None,
    )]);
    let (asking, _) = ask(Cascade::new(vec![endpoint(
        "local",
        Protocol::Openai,
        &server,
        T,
    )]));
    let error = asking.join().expect("asked").0.expect_err("refused");
    assert!(error.contains("more than 64 tool calls"), "{error}");
}

#[test]
fn a_stream_that_fails_before_its_first_token_falls_through() {
    // The provider's error as an event; a stream closed at once; an event of garbage; one
    // endless event (more than a MiB without a line break).
    falls_through(Canned::events(
        vec!["data: {\"error\": {\"message\": \"overloaded\"}}\n\n".into()],
        None,
    ));
    falls_through(Canned::events(vec![], None));
    falls_through(Canned::events(vec!["data: {not json\n\n".into()], None));
    falls_through(Canned::events(
        vec!["data: ".to_owned() + &"x".repeat(1 << 21)],
        None,
    ));
}

#[test]
fn a_stream_cut_after_its_first_token_is_not_asked_of_the_next_provider() {
    let bad = Server::start(vec![Canned::events(
        vec![openai_stream::text("Par"), openai_stream::text("tial")],
        None,
    )]);
    let next = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let (asking, seen) = ask(Cascade::new(vec![
        endpoint("bad", Protocol::Openai, &bad, T),
        endpoint("next", Protocol::Openai, &next, T),
    ]));
    let (reply, cascade) = asking.join().expect("asked");
    let error = reply.expect_err("cut");
    assert!(
        error.contains(
            "bad (test-model): the answer broke off after 2 token(s): the answer was cut off"
        ) && error.contains("the providers after it were not asked"),
        "{error}"
    );
    assert!(next.requests().is_empty(), "the next provider was asked");
    assert_eq!(seen.lock().expect("lock").last().map(|p| p.tokens), Some(2));
    // What the broken answer cost is counted (the prompt by estimate).
    assert!(cascade.spent() > 2, "{}", cascade.spent());
}

#[test]
fn hostile_anthropic_streams_are_refused_with_what_was_wrong() {
    let events =
        |lines: &[&str]| Canned::events(lines.iter().map(|l| format!("{l}\n\n")).collect(), None);
    let server = Server::start(vec![
        // A delta for a block that never started.
        events(&[
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}",
        ]),
        // A tool input that does not parse, after two tokens.
        events(&[
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"eval\",\"input\":{}}}",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": \"}}",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"[1,\"}}",
            "data: {\"type\":\"message_stop\"}",
        ]),
        // The provider's own error, mid-answer.
        events(&[
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}",
            "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}",
        ]),
    ]);
    let expected = [
        "a streamed delta for block 3, which was never started",
        "broke off after 2 token(s): the answer is not the protocol: a streamed tool input is not JSON",
        "broke off after 1 token(s): the provider stopped the answer: overloaded_error: Overloaded",
    ];
    for want in expected {
        let (asking, _) = ask(Cascade::new(vec![endpoint(
            "claude",
            Protocol::Anthropic,
            &server,
            T,
        )]));
        let error = asking.join().expect("asked").0.expect_err("refused");
        assert!(error.contains(want), "{want}: {error}");
    }
}
