//! The HTTP providers against a real HTTP server on 127.0.0.1 that speaks each protocol from
//! fixtures: answers, tool calls, tool results sent back, every way of failing, the budget,
//! and the whole loop through the pipeline.

use passepartout::blocking::wait;
use std::time::Duration;

use passepartout::journal::Journal;
use passepartout::pipeline::actuators::Outbox;
use passepartout::pipeline::{
    Agent, PipelineConfig, PipelineError, Progress, Provider, ProviderReply, ProviderRequest,
    StepOutcome, ToolSchema, ToolTurn,
};
use passepartout::providers::http::CallError;
use passepartout::providers::{Cascade, Endpoint, Protocol, Secret};
use passepartout::runtime::Policy;
use passepartout::signal::Signal;
use passepartout_tests::http::{Canned, Server, fixture, openai_stream};
use serde_json::{Value, json};

use crate::fresh_runtime;

pub(crate) const KEY: &str = "sk-test-SECRET-never-print-me";

pub(crate) fn endpoint(
    name: &str,
    protocol: Protocol,
    server: &Server,
    timeout: Duration,
) -> Endpoint {
    let base_url = match protocol {
        Protocol::Openai => format!("{}/v1", server.url),
        Protocol::Anthropic => server.url.clone(),
    };
    Endpoint {
        name: name.into(),
        protocol,
        base_url,
        model: if protocol == Protocol::Openai {
            "test-model"
        } else {
            "test-claude"
        }
        .into(),
        key: Some(Secret::new(KEY)),
        timeout,
        client: passepartout::providers::config::client(),
        stream: true,
    }
}

pub(crate) fn openai(server: &Server) -> Endpoint {
    endpoint("openai", Protocol::Openai, server, Duration::from_secs(5))
}

fn eval_tool() -> ToolSchema {
    ToolSchema {
        name: "eval".into(),
        description: "Evaluate a Lisp expression.".into(),
        parameters: json!({"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}),
    }
}

pub(crate) fn request(turns: Vec<ToolTurn>) -> ProviderRequest {
    ProviderRequest {
        system: "IDENTITY: Agent".into(),
        prompt: "what is 1 + 2?".into(),
        tools: vec![eval_tool()],
        turns,
        skill: None,
        session: None,
    }
}

fn turn(id: &str) -> ToolTurn {
    ToolTurn {
        id: id.into(),
        name: "eval".into(),
        arguments: json!({"expression": "(+ 1 2)"}),
        result: "3".into(),
        is_error: false,
    }
}

fn fixture_json(path: &str) -> Value {
    serde_json::from_str(&fixture(path)).expect("fixture is JSON")
}

#[test]
fn openai_text_answer_and_the_exact_request() {
    let server = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let cascade = Cascade::new(vec![openai(&server)]);
    let reply = wait(cascade.complete(&request(vec![]))).expect("answer");
    assert_eq!(reply, ProviderReply::Text("Hello from the fixture.".into()));
    let r = &server.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(
        r.body,
        json!({
            "model": "test-model",
            "messages": [{"role": "system", "content": "IDENTITY: Agent"}, {"role": "user", "content": "what is 1 + 2?"}],
            "tools": [{"type": "function", "function": {"name": "eval", "description": "Evaluate a Lisp expression.", "parameters": eval_tool().parameters}}]
        })
    );
    assert_eq!(cascade.spent(), 49, "usage counted from the response");
}

#[test]
fn openai_tool_call_and_the_tool_result_sent_back() {
    let server = Server::start(vec![
        Canned::json(fixture("openai/tool_call.json")),
        Canned::json(fixture("openai/text.json")),
    ]);
    let cascade = Cascade::new(vec![openai(&server)]);
    let reply = wait(cascade.complete(&request(vec![]))).expect("answer");
    assert_eq!(
        reply,
        ProviderReply::ToolCall {
            id: "call_abc".into(),
            name: "eval".into(),
            arguments: json!({"expression": "(+ 1 2)"})
        }
    );
    wait(cascade.complete(&request(vec![turn("call_abc")]))).expect("answer");
    assert_eq!(
        server.requests()[1].body,
        fixture_json("openai/request_tool_result.json")
    );
}

#[test]
fn anthropic_text_tool_use_and_tool_result() {
    let server = Server::start(vec![
        Canned::json(fixture("anthropic/text.json")),
        Canned::json(fixture("anthropic/tool_use.json")),
        Canned::json(fixture("anthropic/text.json")),
    ]);
    let cascade = Cascade::new(vec![endpoint(
        "anthropic",
        Protocol::Anthropic,
        &server,
        Duration::from_secs(5),
    )]);
    assert_eq!(
        wait(cascade.complete(&request(vec![]))).expect("answer"),
        ProviderReply::Text("Hello from Claude's fixture.".into())
    );
    assert_eq!(
        wait(cascade.complete(&request(vec![]))).expect("answer"),
        ProviderReply::ToolCall {
            id: "toolu_01".into(),
            name: "eval".into(),
            arguments: json!({"expression": "(+ 1 2)"})
        }
    );
    wait(cascade.complete(&request(vec![turn("toolu_01")]))).expect("answer");
    let reqs = server.requests();
    assert_eq!(reqs[0].path, "/v1/messages");
    assert_eq!(reqs[0].header("x-api-key"), Some(KEY));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        reqs[2].body,
        fixture_json("anthropic/request_tool_result.json")
    );
    // Each count the larger of the reported one and the estimate: the prompt's estimate is 37
    // tokens (145 bytes), 43 with the tool's turn (170 bytes); the answers' 7, 7 and 7.
    assert_eq!(cascade.spent(), (37 + 7) + (40 + 20) + (43 + 7));
}

/// The first provider fails as `first` does; the second answers.
fn falls_through(first: Canned, timeout: Duration) -> (String, Server) {
    let bad = Server::start(vec![first]);
    let good = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let cascade = Cascade::new(vec![
        endpoint("bad", Protocol::Openai, &bad, timeout),
        endpoint("good", Protocol::Openai, &good, Duration::from_secs(5)),
    ]);
    let reply = wait(cascade.complete(&request(vec![]))).expect("the second provider answers");
    assert_eq!(reply, ProviderReply::Text("Hello from the fixture.".into()));
    assert_eq!(good.requests().len(), 1);
    (format!("{:?}", cascade.records()), bad)
}

#[test]
fn a_500_falls_through() {
    falls_through(
        Canned::status(500, "{\"error\": \"boom\"}"),
        Duration::from_secs(5),
    );
}

#[test]
fn a_timeout_falls_through() {
    let mut slow = Canned::json(fixture("openai/text.json"));
    slow.delay = Duration::from_millis(1500);
    falls_through(slow, Duration::from_millis(300));
}

#[test]
fn a_malformed_body_falls_through() {
    falls_through(Canned::json("this is not json"), Duration::from_secs(5));
    falls_through(
        Canned::json("{\"unexpected\": true}"),
        Duration::from_secs(5),
    );
}

#[test]
fn an_empty_choices_list_falls_through() {
    falls_through(
        Canned::json(fixture("openai/empty_choices.json")),
        Duration::from_secs(5),
    );
}

#[test]
fn a_429_with_retry_after_puts_the_provider_on_cooldown() {
    let mut limited = Canned::status(429, "{\"error\": \"slow down\"}");
    limited.headers.push(("retry-after".into(), "60".into()));
    let bad = Server::start(vec![limited]);
    let good = Server::start(vec![
        Canned::json(fixture("openai/text.json")),
        Canned::json(fixture("openai/text.json")),
    ]);
    let cascade = Cascade::new(vec![
        endpoint("bad", Protocol::Openai, &bad, Duration::from_secs(5)),
        endpoint("good", Protocol::Openai, &good, Duration::from_secs(5)),
    ]);
    wait(cascade.complete(&request(vec![]))).expect("falls through");
    wait(cascade.complete(&request(vec![]))).expect("second call");
    assert_eq!(
        bad.requests().len(),
        1,
        "the rate-limited provider is not asked again while cooling down"
    );
    assert_eq!(good.requests().len(), 2);
}

#[test]
fn all_failing_gives_one_error_listing_each_provider_and_why_without_the_key() {
    let a = Server::start(vec![Canned::status(503, "{\"error\": \"overloaded\"}")]);
    let b = Server::start(vec![Canned::json(fixture("openai/empty_choices.json"))]);
    let dead = endpoint(
        "dead",
        Protocol::Anthropic,
        &Server::start(vec![]),
        Duration::from_secs(5),
    );
    let mut dead = dead;
    dead.base_url = "http://127.0.0.1:9".into(); // nothing listens on the discard port
    let cascade = Cascade::new(vec![
        endpoint("a", Protocol::Openai, &a, Duration::from_secs(5)),
        endpoint("b", Protocol::Openai, &b, Duration::from_secs(5)),
        dead,
    ]);
    let err = wait(cascade.complete(&request(vec![]))).expect_err("all fail");
    let text = err.to_string();
    assert!(text.contains("a (test-model): HTTP 503"), "{text}");
    assert!(
        text.contains("b (test-model): the answer is not the protocol: empty `choices`"),
        "{text}"
    );
    assert!(
        text.contains("dead (test-claude): cannot connect"),
        "{text}"
    );
    assert!(
        !text.contains(KEY) && !format!("{err:?}").contains(KEY),
        "keys never appear in errors"
    );
    match err {
        PipelineError::Llm {
            cascade,
            attempt_count,
            provider,
            ..
        } => {
            assert_eq!(cascade, ["a", "b", "dead"]);
            assert_eq!(attempt_count, 3);
            assert_eq!(provider.as_deref(), Some("dead"));
        }
        other => panic!("expected an llm error, got {other:?}"),
    }
    assert!(
        !format!("{:?}", openai(&a)).contains(KEY),
        "Debug hides the key"
    );
}

#[test]
fn the_budget_stops_before_overspending() {
    let server = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let cascade = Cascade::new(vec![openai(&server)]).with_budget(Some(1100), None);
    wait(cascade.complete(&request(vec![]))).expect("within budget");
    match wait(cascade.complete(&request(vec![]))).expect_err("over budget") {
        PipelineError::Budget {
            remaining,
            requested,
            ..
        } => {
            assert_eq!(remaining, 1100 - 49);
            assert!(requested > remaining, "{requested}");
        }
        other => panic!("expected a budget error, got {other:?}"),
    }
    assert_eq!(
        server.requests().len(),
        1,
        "the refused call never reached the provider"
    );
}

fn pipeline(server: &Server) -> (Agent, Outbox, tempfile::TempDir) {
    let (rt, cache) = fresh_runtime();
    let report = rt.load_all(
        &crate::builtins(&["shell-guard", "files", "eval"]),
        &Policy::default(),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let outbox = Outbox::new();
    let p = Agent::new(
        report.plugins,
        Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_provider(Box::new(Cascade::new(vec![openai(server)])))
    .with_actuator("cli", outbox.actuator("cli"));
    (p, outbox, cache)
}

#[test]
fn end_to_end_the_model_calls_a_tool_and_answers_with_its_output() {
    let server = Server::start(vec![
        Canned::tool_call("call_1", "eval", &json!({"expression": "(+ 1 2)"})),
        Canned::text("1 + 2 = 3."),
    ]);
    let (p, outbox, _cache) = pipeline(&server);
    let report = wait(p.run(Signal::event(
        "user-input",
        Some("what is 1 + 2?"),
        Some("cli"),
    )));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "3".into()
        }
    );
    assert_eq!(report.steps[1].sensor.as_deref(), Some("tool-output"));
    assert_eq!(
        report.steps[1].outcome,
        StepOutcome::Ran {
            target: "cli".into(),
            result: "1 + 2 = 3.".into()
        }
    );
    assert_eq!(
        outbox.sent().last().map(|(_, t)| t.as_str()),
        Some("1 + 2 = 3.")
    );
    let second = &server.requests()[1].body;
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        4,
        "system, user, the assistant's call, the tool's result"
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "what is 1 + 2?"})
    );
    assert_eq!(messages[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "3"})
    );
    let kinds: Vec<String> = p
        .journal()
        .records(None)
        .expect("records")
        .into_iter()
        .map(|r| r.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "proposal",
            "verdict",
            "tool-result",
            "proposal",
            "verdict",
            "tool-result"
        ]
    );
}

#[test]
fn end_to_end_a_rejection_is_explained_and_the_next_proposal_runs() {
    let server = Server::start(vec![
        Canned::tool_call("call_1", "shell", &json!({"command": "rm -rf /"})),
        Canned::tool_call("call_2", "eval", &json!({"expression": "(* 6 7)"})),
        Canned::text("Done: 42."),
    ]);
    let (p, _outbox, _cache) = pipeline(&server);
    let report = wait(p.run(Signal::event(
        "user-input",
        Some("clean everything, then compute"),
        Some("cli"),
    )));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "42".into()
        }
    );
    assert_eq!(
        report.steps[1].outcome,
        StepOutcome::Ran {
            target: "cli".into(),
            result: "Done: 42.".into()
        }
    );
    let reqs = server.requests();
    let system = reqs[1].body["messages"][0]["content"]
        .as_str()
        .expect("system");
    assert!(
        system.contains("PREVIOUS PROPOSAL REJECTED: gate shell-guard rejected tool shell"),
        "{system}"
    );
    assert!(
        system.contains("rm -r / deletes a system directory"),
        "{system}"
    );
    let records = p.journal().records(None).expect("records");
    assert!(records.iter().any(|r| r.kind == "verdict"
        && r.body["verdict"] == "reject"
        && r.body["gate"] == "shell-guard"));
    assert_eq!(
        records.iter().filter(|r| r.kind == "tool-result").count(),
        2,
        "eval, then the reply"
    );
}

#[test]
fn the_selector_picks_a_model_by_skill_and_skips_a_provider_for_long_prompts() {
    let big = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let small = Server::start(vec![
        Canned::json(fixture("openai/text.json")),
        Canned::json(fixture("openai/text.json")),
    ]);
    let config = passepartout::settings::ConfigFile::parse(&format!(
        r#"
[[providers]]
name = "big"
protocol = "openai"
base_url = "{}/v1"
model = "big-model"

[[providers]]
name = "small"
protocol = "openai"
base_url = "{}/v1"
model = "small-model"

[[selector]]
provider = "big"
prompt_over_chars = 50
skip = true

[[selector]]
provider = "small"
skill = "gardener"
model = "tiny-model"
"#,
        big.url, small.url
    ))
    .expect("config parses")
    .providers();
    let cascade = Cascade::from_config(&config);
    let mut long = request(vec![]);
    long.prompt = "x".repeat(100);
    wait(cascade.complete(&long)).expect("answered by small");
    assert!(big.requests().is_empty(), "big is skipped for long prompts");
    assert_eq!(small.requests()[0].body["model"], "small-model");
    let mut gardening = long.clone();
    gardening.skill = Some("gardener".into());
    wait(cascade.complete(&gardening)).expect("answered");
    assert_eq!(small.requests()[1].body["model"], "tiny-model");
    assert!(
        passepartout::settings::ConfigFile::parse("[[providers]]\nname = 1\n")
            .is_err_and(|e| e.to_string().contains("name"))
    );
}

#[test]
fn a_hung_provider_opens_its_breaker_and_the_next_request_goes_straight_to_the_backup() {
    let mut hang = Canned::json(fixture("openai/text.json"));
    hang.delay = Duration::from_secs(3);
    let hung = Server::start(vec![hang.clone(), hang]);
    let good = Server::start(vec![
        Canned::json(fixture("openai/text.json")),
        Canned::json(fixture("openai/text.json")),
    ]);
    let cascade = Cascade::new(vec![
        endpoint("hung", Protocol::Openai, &hung, Duration::from_millis(400)),
        endpoint("good", Protocol::Openai, &good, Duration::from_secs(5)),
    ]);
    wait(cascade.complete(&request(vec![]))).expect("the backup answers");
    left_alone(&cascade, &["no answer within"]);
    assert_eq!(hung.requests().len(), 1, "the hung provider is left alone");
    assert_eq!(good.requests().len(), 2);
}

/// `cascade`'s first provider is open, for a reason that says each of `why`, its second
/// closed; the next request goes straight to the second (and is answered).
fn left_alone(cascade: &Cascade, why: &[&str]) {
    let health = cascade.health();
    assert_eq!(health[0].state, "open", "{health:?}");
    assert!(
        health[0]
            .why
            .as_deref()
            .is_some_and(|w| why.iter().all(|part| w.contains(part))),
        "{health:?}"
    );
    assert_eq!(health[1].state, "closed");
    let start = std::time::Instant::now();
    wait(cascade.complete(&request(vec![]))).expect("the backup answers");
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(100),
        "straight to the backup: {took:?}"
    );
}

#[test]
fn a_provider_that_fails_slowly_is_left_alone_like_a_hung_one() {
    // A 500 just inside the timeout costs nearly the whole timeout, on every call, as a
    // hung provider would; a quick 400 is the provider judging one request, and leaves it be.
    let mut slow = Canned::status(500, "{\"error\": \"overloaded\"}");
    slow.delay = Duration::from_millis(700);
    let quick = Canned::status(400, "{\"error\": \"context too long\"}");
    let sick = Server::start(vec![quick, slow.clone(), slow]);
    let good = Server::start(
        (0..3)
            .map(|_| Canned::json(fixture("openai/text.json")))
            .collect(),
    );
    let cascade = Cascade::new(vec![
        endpoint("sick", Protocol::Openai, &sick, Duration::from_secs(1)),
        endpoint("good", Protocol::Openai, &good, Duration::from_secs(5)),
    ]);
    wait(cascade.complete(&request(vec![]))).expect("the backup answers");
    assert_eq!(
        cascade.health()[0].state,
        "closed",
        "a quick 400 leaves it be"
    );
    wait(cascade.complete(&request(vec![]))).expect("the backup answers");
    left_alone(&cascade, &["500", "slowly"]);
    assert_eq!(sick.requests().len(), 2, "the slow provider is left alone");
    assert_eq!(good.requests().len(), 3);
}

#[test]
fn a_retry_after_of_any_size_or_form_never_panics() {
    for value in [
        "9300000000000000000",
        "18446744073709551615",
        "99999999999999999999999999",
        "Fri, 31 Dec 9999 23:59:59 GMT",
        "Thu, 01 Jan 1970 00:00:00 GMT",
        "soon",
    ] {
        let mut limited = Canned::status(429, "{\"error\": \"slow down\"}");
        limited.headers.push(("retry-after".into(), value.into()));
        let (_, bad) = falls_through(limited, Duration::from_secs(5));
        assert_eq!(bad.requests().len(), 1, "{value}");
    }
}

#[test]
fn a_cut_off_answer_and_a_redirect_say_what_happened() {
    let mut cut = Canned::json(fixture("openai/text.json"));
    cut.missing = 100;
    let mut moved = Canned::status(307, "");
    moved
        .headers
        .push(("location".into(), "http://127.0.0.1:1/v2".into()));
    let a = Server::start(vec![cut]);
    let b = Server::start(vec![moved]);
    let cascade = Cascade::new(vec![
        endpoint("a", Protocol::Openai, &a, Duration::from_secs(5)),
        endpoint("b", Protocol::Openai, &b, Duration::from_secs(5)),
    ]);
    let text = wait(cascade.complete(&request(vec![])))
        .expect_err("both fail")
        .to_string();
    assert!(
        text.contains("a (test-model): the answer was cut off"),
        "{text}"
    );
    assert!(
        text.contains("b (test-model): HTTP 307: redirects are not followed, on purpose")
            && text.contains("http://127.0.0.1:1/v2"),
        "{text}"
    );
}

#[test]
fn each_session_has_its_own_token_budget() {
    let server = Server::start(vec![
        Canned::json(fixture("openai/text.json")),
        Canned::json(fixture("openai/text.json")),
    ]);
    let cascade = Cascade::new(vec![openai(&server)]).with_budget(Some(1100), None);
    let mut alice = request(vec![]);
    alice.session = Some("boot:1".into());
    let mut bob = request(vec![]);
    bob.session = Some("boot:2".into());
    wait(cascade.complete(&alice)).expect("within alice's budget");
    let err = wait(cascade.complete(&alice)).expect_err("alice is over");
    assert!(
        err.to_string()
            .contains("this session has 1051 of its 1100 left"),
        "{err}"
    );
    wait(cascade.complete(&bob)).expect("bob has his own budget");
    assert_eq!(cascade.spent_by(Some("boot:1")), 49);
    assert_eq!(cascade.spent_by(Some("boot:2")), 49);
    assert_eq!(cascade.spent(), 0, "nothing spent outside a session");
}

#[test]
fn the_daily_budget_prices_well_known_models_and_skips_unpriced_ones() {
    // A million prompt tokens at gpt-4o's list price: $2.50.
    let server = Server::start(vec![Canned::json(
        json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": 1_000_000, "completion_tokens": 0}}).to_string(),
    )]);
    let mut priced = openai(&server);
    priced.model = "gpt-4o".into();
    let unpriced = Server::start(vec![]);
    let carried = passepartout::providers::cascade::Carried::default();
    // $1 a day: the first call (estimated at about a cent) is made, the second not.
    let cascade = Cascade::new(vec![
        endpoint("local", Protocol::Openai, &unpriced, Duration::from_secs(5)),
        priced.clone(),
    ])
    .with_budget(None, Some(1.0))
    .carrying(&carried);
    wait(cascade.complete(&request(vec![]))).expect("within the day's budget");
    assert!(
        unpriced.requests().is_empty(),
        "a model with no price cannot be counted, so it is not asked"
    );
    let records = cascade.records();
    // The prompt as reported; the answer ("hi"), reported as nothing, as one token.
    assert!(
        records[0]
            .cost
            .is_some_and(|c| (c - (2.5 + 10.0 / 1e6)).abs() < 1e-9),
        "{records:?}"
    );
    let err = wait(cascade.complete(&request(vec![]))).expect_err("over the day");
    assert!(matches!(err, PipelineError::DailySpend { .. }), "{err}");
    assert!(err.to_string().contains("daily_usd"), "{err}");
    // A provider the day can still afford answers: a local model priced at nothing.
    let free_server = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let mut free = endpoint(
        "free",
        Protocol::Openai,
        &free_server,
        Duration::from_secs(5),
    );
    free.model = "my-local".into();
    let zero = passepartout::providers::config::Price::default();
    let cascade = Cascade::new(vec![priced, free])
        .with_budget(None, Some(1.0))
        .with_prices([("my-local".to_owned(), zero)].into())
        .carrying(&carried);
    wait(cascade.complete(&request(vec![]))).expect("the free provider still fits the day");
    assert_eq!(free_server.requests().len(), 1);
}

#[test]
fn money_that_is_not_a_number_of_dollars_is_refused_naming_the_key() {
    for (toml, key) in [
        ("[budget]\ndaily_usd = nan\n", "daily_usd"),
        ("[budget]\ndaily_usd = -1.0\n", "daily_usd"),
        ("[prices.m]\ninput = -3.0\noutput = 1.0\n", "input"),
        ("[prices.m]\ninput = 3.0\noutput = inf\n", "output"),
    ] {
        let err = passepartout::settings::ConfigFile::parse(toml)
            .expect_err(toml)
            .to_string();
        assert!(
            err.contains(key) && err.contains("not a number of dollars"),
            "{toml}: {err}"
        );
    }
}

/// An Anthropic Messages answer calling tool `name` with call id `id`.
fn anthropic_tool_use(id: &str, name: &str) -> Canned {
    Canned::json(
        json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "test-claude", "content": [{"type": "tool_use", "id": id, "name": name, "input": {}}], "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 5}})
            .to_string(),
    )
}

/// One provider's answer, or why it is none.
type Answer = Result<(ProviderReply, passepartout::providers::Usage), CallError>;

/// What `endpoint` makes of its server's next answer, asked without following it.
fn asked(endpoint: &Endpoint) -> Answer {
    wait(endpoint.call(&request(vec![]), &endpoint.model, None))
}

/// `result` is the malformed-answer error, saying `what`.
fn malformed_saying(result: Answer, what: &str) {
    match result {
        Err(CallError::Malformed(m)) => assert!(m.contains(what), "{m}"),
        other => panic!("expected a malformed answer saying {what:?}, got {other:?}"),
    }
}

#[test]
fn a_tool_name_or_call_id_over_256_bytes_is_a_malformed_answer() {
    let long = "n".repeat(1 << 20);
    let at_limit = "n".repeat(256);
    let server = Server::start(vec![
        Canned::tool_call("call_1", &long, &json!({})),
        Canned::tool_call(&long, "eval", &json!({})),
        Canned::tool_call(&at_limit, &at_limit, &json!({})),
        anthropic_tool_use("toolu_1", &long),
        anthropic_tool_use(&long, "eval"),
        anthropic_tool_use(&at_limit, &at_limit),
    ]);
    let gpt = openai(&server);
    let claude = endpoint(
        "anthropic",
        Protocol::Anthropic,
        &server,
        Duration::from_secs(5),
    );
    for ep in [&gpt, &claude] {
        malformed_saying(asked(ep), "a tool name of 1048576 bytes (at most 256)");
        malformed_saying(asked(ep), "a tool call id of 1048576 bytes (at most 256)");
        let (reply, _) = asked(ep).expect("256 bytes is a name and an id still");
        assert_eq!(
            reply,
            ProviderReply::ToolCall {
                id: at_limit.clone(),
                name: at_limit.clone(),
                arguments: json!({}),
            }
        );
    }
}

#[test]
fn a_streamed_tool_name_over_256_bytes_is_a_malformed_answer() {
    let long = "n".repeat(64 << 10);
    let server = Server::start(vec![Canned::events(
        vec![
            openai_stream::tool(0, Some(("call_1", long.as_str())), "{}"),
            openai_stream::end("tool_calls", 10, 5),
        ],
        None,
    )]);
    let quiet = |_: &Progress| {};
    let ep = openai(&server);
    malformed_saying(
        wait(ep.call(&request(vec![]), &ep.model, Some(&quiet))),
        "a tool name of 65536 bytes (at most 256)",
    );
}

#[test]
fn a_hostile_tool_name_fails_with_a_short_error_through_the_cascade() {
    let server = Server::start(vec![Canned::tool_call(
        "call_1",
        &"n".repeat(1 << 20),
        &json!({}),
    )]);
    let cascade = Cascade::new(vec![openai(&server)]);
    let text = wait(cascade.complete(&request(vec![])))
        .expect_err("refused")
        .to_string();
    assert!(
        text.contains("the answer is not the protocol: a tool name of 1048576 bytes"),
        "{text}"
    );
    assert!(text.len() < 1024, "an error of {} bytes", text.len());
}

#[test]
fn a_server_that_under_reports_its_usage_still_runs_the_session_budget_out() {
    // About 200 KiB of answer reported as one token, and the prompt as none.
    let answer = "a".repeat(200 << 10);
    let lying = Canned::json(
        json!({"choices": [{"message": {"role": "assistant", "content": answer}}], "usage": {"prompt_tokens": 0, "completion_tokens": 1}})
            .to_string(),
    );
    let server = Server::start(vec![lying.clone(), lying.clone(), lying]);
    let cascade = Cascade::new(vec![openai(&server)]).with_budget(Some(10_000), None);
    let refused = (0..3).find_map(|_| wait(cascade.complete(&request(vec![]))).err());
    match refused {
        Some(PipelineError::Budget { message, .. }) => {
            assert!(message.contains("session_tokens"), "{message}");
        }
        other => panic!(
            "expected a budget error within 3 asks ({} tokens spent), got {other:?}",
            cascade.spent()
        ),
    }
    // Charged by the answer's length (4 bytes a token), the prompt by its estimate.
    let usage = cascade.records()[0].usage;
    assert_eq!(usage.output_tokens, (200 << 10) / 4, "{usage:?}");
    assert!(usage.input_tokens > 0, "{usage:?}");
    assert_eq!(
        server.requests().len(),
        cascade.records().len(),
        "the refused call never reached the server"
    );
}

#[test]
fn a_server_that_reports_impossible_usage_cannot_spend_the_day_nor_break_the_totals() {
    use passepartout::providers::cascade::MOST_REPORTED;
    use passepartout::providers::spend::SpendLog;
    let huge = Canned::json(
        json!({"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": u64::MAX, "completion_tokens": u64::MAX}})
            .to_string(),
    );
    let server = Server::start(vec![huge.clone(), huge]);
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("spend.db");
    let (log, today) = (
        SpendLog::open(&path).expect("spend log"),
        SpendLog::open(&path).expect("spend log"),
    );
    let cascade = Cascade::new(vec![openai(&server)]).with_spend_log(
        Box::new(move |r| log.record(r)),
        Box::new(move || today.spent_today().unwrap_or(f64::INFINITY)),
    );
    for _ in 0..2 {
        wait(cascade.complete(&request(vec![]))).expect("answered");
    }
    for r in cascade.records() {
        assert_eq!(r.usage.input_tokens, MOST_REPORTED, "{r:?}");
        assert_eq!(r.usage.output_tokens, MOST_REPORTED, "{r:?}");
    }
    // The totals `status` shows still read, rows from before the bound included.
    let reader = SpendLog::open(&path).expect("spend log");
    for output_tokens in [u64::MAX, 1] {
        reader
            .record(&passepartout::providers::cascade::UsageRecord {
                provider: "old".into(),
                model: "m".into(),
                usage: passepartout::providers::Usage {
                    input_tokens: u64::MAX,
                    output_tokens,
                },
                cost: None,
            })
            .expect("an old row");
    }
    let totals = reader.totals().expect("totals read");
    assert_eq!(totals.len(), 2);
    assert_eq!(totals[1].input_tokens, 2 * MOST_REPORTED, "{totals:?}");
}

#[test]
fn an_answer_that_is_not_the_protocol_is_paid_for_before_the_next_provider_is_asked() {
    // The model's tool call carries arguments that are not JSON: the provider billed it.
    let broken = Canned::json(
        json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "eval", "arguments": "{not json"}}]}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 1000}})
            .to_string(),
    );
    let bad = Server::start(vec![broken]);
    let good = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    let cascade = Cascade::new(vec![
        endpoint("bad", Protocol::Openai, &bad, Duration::from_secs(5)),
        endpoint("good", Protocol::Openai, &good, Duration::from_secs(5)),
    ])
    .with_budget(Some(1_000_000), None);
    let mut asked = request(vec![]);
    asked.session = Some("boot:1".into());
    wait(cascade.complete(&asked)).expect("the second provider answers");
    let records = cascade.records();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[0].provider, "bad");
    assert!(records[0].usage.input_tokens > 0, "{records:?}");
    assert!(
        cascade.spent_by(Some("boot:1")) > records[1].usage.input_tokens,
        "both calls are charged to the session"
    );
}

/// A server on 127.0.0.1 that answers its first request with `head` and then neither sends
/// more nor closes, until the sender returned is dropped (or a minute passes). Its URL.
fn stalling(head: &'static str) -> (String, std::sync::mpsc::Sender<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    let (hold, held) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else {
            return;
        };
        // The request's head; its small body comes with it or is left unread.
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            match conn.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
        let _ = conn.write_all(head.as_bytes());
        let _ = conn.flush();
        let _ = held.recv_timeout(Duration::from_secs(60));
    });
    (format!("http://{addr}"), hold)
}

#[test]
fn a_4xx_whose_body_never_comes_fails_in_seconds_not_at_the_timeout() {
    // The status came at once; the body it announces never does. Read under the call's whole
    // timeout, every call would cost 30 s, and a 4xx never opens the breaker.
    let (url, _hold) = stalling("HTTP/1.1 400 Bad Request\r\nContent-Length: 100000\r\n\r\n{");
    let mut ep = endpoint(
        "stalling",
        Protocol::Openai,
        &Server::start(vec![]),
        Duration::from_secs(30),
    );
    ep.base_url = format!("{url}/v1");
    let started = std::time::Instant::now();
    let answer = asked(&ep);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "the call took {took:?}");
    match answer {
        Err(CallError::Status(400, said)) => assert_eq!(said, "{", "what came is kept"),
        other => panic!("expected HTTP 400, got {other:?}"),
    }
}
