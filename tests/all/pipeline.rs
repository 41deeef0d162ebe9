//! The pipeline end to end with real WASM gates, tools and skills: direct requests, the model
//! path (a Provider implemented here, at the trait boundary), retries, approval, the loop.

use passepartout::blocking::wait;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use passepartout::journal::Journal;
use passepartout::pipeline::actuators::Outbox;
use passepartout::pipeline::{
    Agent, PipelineConfig, PipelineError, Provider, ProviderReply, ProviderRequest, Recovery,
    StepOutcome,
};
use passepartout::runtime::{Plugin, Policy};
use passepartout::signal::Signal;
use passepartout_tests::{
    ECHO_SKILL_MANIFEST, ECHO_SKILL_WASM, HOSTILE_GATE_MANIFEST, HOSTILE_GATE_WASM,
    HOSTILE_TOOL_MANIFEST, HOSTILE_TOOL_WASM, source,
};
use serde_json::json;

use crate::fresh_runtime;

/// A model that answers from a script and remembers what it was asked.
#[derive(Default)]
struct Script {
    replies: Mutex<VecDeque<ProviderReply>>,
    requests: Mutex<Vec<ProviderRequest>>,
}

struct Scripted(Arc<Script>);

#[async_trait::async_trait]
impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    async fn complete_with(
        &self,
        request: &ProviderRequest,
        _: Option<passepartout::pipeline::OnProgress<'_>>,
    ) -> Result<ProviderReply, PipelineError> {
        self.0.requests.lock().expect("lock").push(request.clone());
        self.0
            .replies
            .lock()
            .expect("lock")
            .pop_front()
            .ok_or_else(|| PipelineError::Llm {
                message: "script exhausted".into(),
                provider: Some("scripted".into()),
                cascade: vec!["scripted".into()],
                attempt_count: 1,
            })
    }
}

struct Setup {
    pipeline: Agent,
    outbox: Outbox,
    script: Arc<Script>,
    _cache: tempfile::TempDir,
}

fn plugins(
    policy: &str,
    extra: Vec<passepartout::runtime::PluginSource>,
) -> (Vec<Plugin>, tempfile::TempDir) {
    let (rt, cache) = fresh_runtime();
    // The gate and tools these tests are written around; the other standard plugins have
    // tests of their own (standard.rs).
    let mut sources = crate::builtins(&["shell-guard", "files", "eval"]);
    sources.extend(extra);
    let report = rt.load_all(&sources, &Policy::parse(policy).expect("policy"));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    (report.plugins, cache)
}

fn setup_with(
    policy: &str,
    extra: Vec<passepartout::runtime::PluginSource>,
    replies: Vec<ProviderReply>,
    config: PipelineConfig,
) -> Setup {
    let (plugins, cache) = plugins(policy, extra);
    let script = Arc::new(Script {
        replies: Mutex::new(replies.into()),
        requests: Mutex::new(Vec::new()),
    });
    let outbox = Outbox::new();
    let pipeline = Agent::new(plugins, Journal::in_memory().expect("journal"), config)
        .expect("pipeline")
        .with_provider(Box::new(Scripted(script.clone())))
        .with_actuator("cli", outbox.actuator("cli"));
    Setup {
        pipeline,
        outbox,
        script,
        _cache: cache,
    }
}

fn setup(replies: Vec<ProviderReply>) -> Setup {
    setup_with("", Vec::new(), replies, PipelineConfig::default())
}

fn with_hostile_gate(priority: i32, replies: Vec<ProviderReply>) -> Setup {
    let policy = format!("[plugins.hostile-gate]\npriority = {priority}\n");
    setup_with(
        &policy,
        vec![source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m)],
        replies,
        PipelineConfig::default(),
    )
}

fn request(action: serde_json::Value) -> Signal {
    Signal::request(
        serde_json::from_value(action).expect("an action"),
        passepartout::signal::Meta::from_source("cli"),
    )
}

fn user(text: &str) -> Signal {
    Signal::event("user-input", Some(text), Some("cli"))
}

fn kinds(journal: &Journal) -> Vec<String> {
    journal
        .records(None)
        .expect("records")
        .into_iter()
        .map(|r| r.kind)
        .collect()
}

fn eval_call(expr: &str) -> ProviderReply {
    ProviderReply::ToolCall {
        id: "call_t".into(),
        name: "eval".into(),
        arguments: json!({ "expression": expr }),
    }
}

#[test]
fn a_direct_request_runs_through_the_gates_then_the_tool() {
    let s = setup(vec![]);
    let report = wait(s.pipeline.run(request(
        json!({"tool": "eval", "args": {"expression": "(+ 1 2)"}}),
    )));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "3".into()
        }
    );
    assert_eq!(
        report.steps[0]
            .trace
            .iter()
            .map(|g| g.gate.as_str())
            .collect::<Vec<_>>(),
        ["shell-guard"]
    );
    // The tool's output goes round the loop once more as a tool-output event.
    assert_eq!(report.steps[1].sensor.as_deref(), Some("tool-output"));
    assert_eq!(report.steps.len(), 2);
    assert_eq!(s.outbox.sent(), [("cli".to_owned(), "3".to_owned())]);
    assert_eq!(
        kinds(s.pipeline.journal()),
        ["proposal", "verdict", "tool-result"],
        "the verdict once: the last mile reuses the pass given in the same turn"
    );
    assert_eq!(s.pipeline.journal().verify().expect("read"), Ok(3));
    assert!(
        s.script.requests.lock().expect("lock").is_empty(),
        "direct requests skip the model"
    );
}

#[test]
fn a_direct_request_never_skips_the_gates() {
    let s = setup(vec![]);
    let report = wait(s.pipeline.run(request(
        json!({"tool": "shell", "args": {"cmd": "rm -rf /"}}),
    )));
    match &report.steps[0].outcome {
        StepOutcome::Rejected { gate, reason, .. } => {
            assert_eq!(gate, "shell-guard");
            assert!(reason.contains("rm -r /"), "{reason}");
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert!(
        !kinds(s.pipeline.journal()).contains(&"tool-result".to_owned()),
        "nothing ran"
    );
}

#[test]
fn a_failing_gate_rejects_and_is_named() {
    let s = with_hostile_gate(10, vec![]);
    let report = wait(s.pipeline.run(request(
        json!({"tool": "eval", "args": {"do": "spin", "expression": "1"}}),
    )));
    match &report.steps[0].outcome {
        StepOutcome::Rejected { gate, reason, .. } => {
            assert_eq!(gate, "hostile-gate");
            assert!(reason.contains("ran out of fuel"), "{reason}");
        }
        other => panic!("expected fail-closed rejection, got {other:?}"),
    }
    let trace = &report.steps[0].trace;
    assert_eq!(
        trace.iter().map(|g| g.gate.as_str()).collect::<Vec<_>>(),
        ["shell-guard", "hostile-gate"]
    );
    assert_eq!(trace[1].verdict, passepartout::signal::TraceVerdict::Error);
}

#[test]
fn a_modification_is_what_later_gates_and_the_actuator_see() {
    // hostile-gate (priority 200) runs before shell-guard (100) and rewrites the args.
    let s = with_hostile_gate(200, vec![]);
    let report = wait(s.pipeline.run(request(json!({"tool": "eval", "args": {"do": "modify", "command": "rm -rf /", "expression": "(+ 1 2)"}}))));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "42".into()
        }
    );
}

#[test]
fn approval_suspends_then_runs_on_approve_and_drops_on_deny() {
    let s = with_hostile_gate(10, vec![]);
    let ask = || {
        wait(s.pipeline.run(request(
            json!({"tool": "eval", "args": {"do": "approve", "expression": "(+ 1 2)"}}),
        )))
    };
    let report = ask();
    let StepOutcome::Suspended { token, reasons } = &report.steps[0].outcome else {
        panic!("expected suspension, got {:?}", report.steps[0].outcome);
    };
    assert_eq!(
        reasons,
        &["hostile-gate: a person must agree to this".to_owned()]
    );
    assert!(
        s.outbox.sent()[0].1.contains(token.as_str()),
        "the asking client is told the token"
    );
    assert!(
        !kinds(s.pipeline.journal()).contains(&"tool-result".to_owned()),
        "nothing ran yet"
    );

    let approved = wait(s.pipeline.approve(token, None, None)).expect("approve");
    assert_eq!(
        approved.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "3".into()
        }
    );
    assert!(
        wait(s.pipeline.approve(token, None, None)).is_err(),
        "a token is used once"
    );

    let report = ask();
    let StepOutcome::Suspended { token, .. } = &report.steps[0].outcome else {
        panic!("suspended")
    };
    let dropped = wait(s.pipeline.deny(token, None, None)).expect("deny");
    assert_eq!(dropped.tool.as_deref(), Some("eval"));
    let journal = kinds(s.pipeline.journal());
    assert_eq!(
        journal.iter().filter(|k| *k == "approval").count(),
        2,
        "both decisions journaled"
    );
    assert_eq!(
        journal.iter().filter(|k| *k == "tool-result").count(),
        1,
        "only the approved one ran"
    );
}

#[test]
fn an_approval_does_not_run_a_tool_whose_code_changed_under_the_same_version() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("journal.db");
    // The hostile tool beside the gate that asks a person about `{"do": "approve"}`, its
    // component `bytes`, on one journal: what one daemon suspends, the next one approves.
    let agent = |bytes: &[u8]| {
        let mut tool = source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| m);
        tool.component = bytes.to_vec().into();
        let gate = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m);
        let (plugins, cache) = plugins("[plugins.hostile-gate]\npriority = 10\n", vec![tool, gate]);
        let journal = Journal::open(&db).expect("journal");
        let agent = Agent::new(plugins, journal, PipelineConfig::default()).expect("agent");
        (agent, cache)
    };
    let built = std::fs::read(HOSTILE_TOOL_WASM).expect("component");
    // The same plugin name, version and behaviour, other bytes (a custom section): what a
    // plugin rebuilt, or replaced, without a new version looks like.
    let mut rebuilt = built.clone();
    rebuilt.extend_from_slice(&[0x00, 0x08, 0x07]);
    rebuilt.extend_from_slice(b"rebuilt");
    let suspended = |report: &passepartout::pipeline::Report| match &report.steps[0].outcome {
        StepOutcome::Suspended { token, reasons } => (token.clone(), reasons.clone()),
        other => panic!("expected a suspension, got {other:?}"),
    };

    let (first, _cache) = agent(&built);
    let asked = request(json!({"tool": "args", "args": {"do": "approve"}}));
    let (token, _) = suspended(&wait(first.run(asked)));
    drop(first);

    let (second, _cache) = agent(&rebuilt);
    let again = wait(second.approve(&token, None, None)).expect("approve");
    let (token, reasons) = suspended(&again);
    assert!(
        reasons
            .last()
            .is_some_and(|r| r.contains("its code changed")),
        "{reasons:?}"
    );
    assert!(
        !kinds(second.journal()).contains(&"tool-result".to_owned()),
        "what was approved was other code: nothing ran"
    );
    // Approved again, of the code that is there now: it runs.
    let ran = wait(second.approve(&token, None, None)).expect("approve");
    assert!(
        matches!(ran.steps[0].outcome, StepOutcome::Ran { .. }),
        "{:?}",
        ran.steps[0].outcome
    );
}

/// A person is never asked to approve what cannot run: when, at an approved action's last
/// mile, a gate added since rewrites it into a call of a tool there is none of, it is refused
/// as invalid (and journaled so), not suspended for a person to approve and refused
/// afterwards; whether the gates' only change is the rewrite, or they also ask something new
/// about the rewritten call.
#[test]
fn an_approved_action_rewritten_into_one_that_cannot_run_is_invalid_not_asked_again() {
    for asks_anew in [true, false] {
        rewritten_into_nothing(asks_anew);
    }
}

fn rewritten_into_nothing(asks_anew: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("journal.db");
    // The approval gate asks about every call of the hostile tool's `args`; the second agent
    // also has the hostile gate, which retools what it sees, and (`asks_anew`) an approval
    // gate that asks about calls of the tool it retools into too.
    let agent = |second: bool| {
        let mut sources = crate::builtins(&["approval"]);
        sources.push(source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| m));
        if second {
            sources.push(source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m));
        }
        let dangerous = if second && asks_anew {
            r#"["args", "no-such-tool"]"#
        } else {
            r#"["args"]"#
        };
        let policy = format!(
            "[plugins.approval.config]\ndangerous_tools = {dangerous}\n\
             [plugins.hostile-gate]\npriority = 10\n"
        );
        let (plugins, cache) = plugins(&policy, sources);
        let journal = Journal::open(&db).expect("journal");
        let agent = Agent::new(plugins, journal, PipelineConfig::default()).expect("agent");
        (agent, cache)
    };
    let (first, _cache) = agent(false);
    let asked = request(json!({
        "tool": "args",
        "args": { "do": "retool", "to": "no-such-tool", "path": "/workspace/x" }
    }));
    let report = wait(first.run(asked));
    let StepOutcome::Suspended { token, .. } = &report.steps[0].outcome else {
        panic!("expected a suspension, got {:?}", report.steps[0].outcome)
    };
    drop(first);

    let (second, _cache) = agent(true);
    let decided = wait(second.approve(token, None, None)).expect("approve");
    let StepOutcome::Invalid { reason } = &decided.steps[0].outcome else {
        panic!(
            "asks anew {asks_anew}: a call of a tool there is none of was put to a person: {:?}",
            decided.steps[0].outcome
        )
    };
    assert!(reason.contains("no-such-tool"), "{reason}");
    if asks_anew {
        assert!(
            decided.steps[0].trace.iter().any(|g| g.gate == "approval"
                && g.round == 2
                && g.verdict == passepartout::signal::TraceVerdict::RequireApproval),
            "the approval gate asked about the rewrite: {:?}",
            decided.steps[0].trace
        );
    }
    let pending = passepartout::approvals::Approvals::new(second.journal())
        .expect("approvals")
        .pending()
        .expect("pending");
    assert!(pending.is_empty(), "nobody is asked: {pending:?}");
    assert!(
        kinds(second.journal()).contains(&"invalid".to_owned()),
        "the journal says why nothing ran"
    );
}

#[test]
fn the_model_calls_a_tool_and_its_output_comes_back() {
    let s = setup(vec![
        eval_call("(+ 1 2)"),
        ProviderReply::Text("It is 3.".into()),
    ]);
    let report = wait(s.pipeline.run(user("what is 1 + 2?")));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "3".into()
        }
    );
    // The tool's output goes back to the model, which answers the user.
    assert_eq!(report.steps[1].sensor.as_deref(), Some("tool-output"));
    assert_eq!(
        report.steps[1].outcome,
        StepOutcome::Ran {
            target: "cli".into(),
            result: "It is 3.".into()
        }
    );
    let requests = s.script.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[1].prompt, "what is 1 + 2?",
        "the conversation keeps the user's prompt"
    );
    assert_eq!(requests[1].turns.len(), 1);
    assert_eq!(requests[1].turns[0].id, "call_t");
    assert_eq!(requests[1].turns[0].result, "3");
    assert!(!requests[1].turns[0].is_error);
    let r = &requests[0];
    assert_eq!(r.prompt, "what is 1 + 2?");
    let at = |needle: &str| {
        r.system
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing from {}", r.system))
    };
    assert_eq!(at("IDENTITY: Agent"), 0);
    assert!(
        at("TOOLS:") < at("CONTEXT:") && at("CONTEXT:") < at("LOGS:"),
        "the seed's order"
    );
    let eval = r
        .tools
        .iter()
        .find(|t| t.name == "eval")
        .expect("eval offered as a function");
    assert_eq!(eval.parameters["required"], json!(["expression"]));
}

#[test]
fn a_rejection_is_fed_back_and_the_model_tries_again() {
    let s = setup(vec![
        ProviderReply::ToolCall {
            id: "call_t".into(),
            name: "shell".into(),
            arguments: json!({"command": "rm -rf /"}),
        },
        ProviderReply::Text(
            "```json\n{\"Tool\": \"eval\", \"ARGS\": {\"expression\": \"(* 6 7)\"}}\n```".into(),
        ),
    ]);
    let report = wait(s.pipeline.run(user("clean up")));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "42".into()
        }
    );
    let requests = s.script.requests.lock().expect("lock");
    assert_eq!(requests.len(), 2);
    assert!(!requests[0].system.contains("PREVIOUS PROPOSAL REJECTED"));
    assert!(
        requests[1]
            .system
            .contains("PREVIOUS PROPOSAL REJECTED: gate shell-guard rejected tool shell"),
        "{}",
        requests[1].system
    );
}

#[test]
fn three_rejections_end_the_attempt() {
    let shell = || ProviderReply::ToolCall {
        id: "call_t".into(),
        name: "shell".into(),
        arguments: json!({"command": "mkfs.ext4 /dev/sda"}),
    };
    let s = setup(vec![shell(), shell(), shell(), eval_call("1")]);
    let report = wait(s.pipeline.run(user("format it")));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Rejected { gate, attempts: 3, .. } if gate == "shell-guard"),
        "{:?}",
        report.steps[0].outcome
    );
    assert_eq!(s.script.requests.lock().expect("lock").len(), 3);
    assert!(
        s.outbox.sent()[0]
            .1
            .starts_with("rejected by gate shell-guard")
    );
}

#[test]
fn approval_required_is_not_a_rejection() {
    let s = with_hostile_gate(
        10,
        vec![ProviderReply::ToolCall {
            id: "call_t".into(),
            name: "eval".into(),
            arguments: json!({"do": "approve", "expression": "1"}),
        }],
    );
    let report = wait(s.pipeline.run(user("do it")));
    assert!(matches!(
        report.steps[0].outcome,
        StepOutcome::Suspended { .. }
    ));
    assert_eq!(s.script.requests.lock().expect("lock").len(), 1, "no retry");
}

#[test]
fn a_plain_answer_is_a_reply_to_the_client() {
    let s = setup(vec![ProviderReply::Text("Hello! (+ 1 2)".into())]);
    let report = wait(s.pipeline.run(user("hi")));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "cli".into(),
            result: "Hello! (+ 1 2)".into()
        }
    );
    assert_eq!(
        report.steps.len(),
        1,
        "cli is a silent actuator: no feedback"
    );
    assert_eq!(
        s.outbox.sent(),
        [("cli".to_owned(), "Hello! (+ 1 2)".to_owned())]
    );
}

#[test]
fn only_user_input_and_chat_messages_reach_the_model() {
    let s = setup(vec![eval_call("1")]);
    let report = wait(s.pipeline.run(Signal::event("heartbeat", None, None)));
    assert_eq!(report.steps[0].outcome, StepOutcome::Nothing);
    assert!(s.script.requests.lock().expect("lock").is_empty());
}

#[test]
fn without_a_model_user_input_gets_a_clear_error_and_direct_requests_still_work() {
    let (plugins, _cache) = plugins("", Vec::new());
    let outbox = Outbox::new();
    let pipeline = Agent::new(
        plugins,
        Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_actuator("cli", outbox.actuator("cli"));
    let report = wait(pipeline.run(user("hello")));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Failed { error } if error.contains("OPENAI_API_KEY")),
        "{:?}",
        report.steps[0].outcome
    );
    // Seed recovery: re-injected as a loop-error event one level deeper, which ends there.
    assert_eq!(report.steps[1].sensor.as_deref(), Some("loop-error"));
    assert_eq!(report.steps[1].depth, 1);
    assert_eq!(report.steps.len(), 2);
    let report = wait(pipeline.run(request(
        json!({"tool": "eval", "args": {"expression": "(+ 2 2)"}}),
    )));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "4".into()
        }
    );
}

#[test]
fn recovery_can_skip_instead() {
    let config = PipelineConfig {
        recovery: Recovery::Skip,
        ..PipelineConfig::default()
    };
    let s = setup_with("", Vec::new(), vec![], config);
    let report = wait(s.pipeline.run(user("hello")));
    assert_eq!(report.steps.len(), 1, "the failed signal is dropped");
}

#[test]
fn the_depth_limit_and_the_interrupt_stop_the_loop() {
    let s = setup(vec![]);
    let mut deep = Signal::event("heartbeat", None, None);
    deep.depth = 11;
    assert!(matches!(
        wait(s.pipeline.run(deep)).last(),
        Some(StepOutcome::Dropped { .. })
    ));
    let mut ok = Signal::event("heartbeat", None, None);
    ok.depth = 10;
    assert_eq!(wait(s.pipeline.run(ok)).last(), Some(&StepOutcome::Nothing));
    s.pipeline
        .interrupt_flag()
        .store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(
        matches!(wait(s.pipeline.run(user("hi"))).last(), Some(StepOutcome::Dropped { why }) if why == "interrupted")
    );
}

#[test]
fn a_triggered_skill_supplies_the_prompt() {
    let s = setup_with(
        "",
        vec![source(ECHO_SKILL_WASM, ECHO_SKILL_MANIFEST, |m| m)],
        vec![
            ProviderReply::Text("ok".into()),
            ProviderReply::Text("ok".into()),
        ],
        PipelineConfig::default(),
    );
    wait(s.pipeline.run(user("plain words")));
    wait(s.pipeline.run(user("say it #echo")));
    let requests = s.script.requests.lock().expect("lock");
    assert_eq!(requests[0].prompt, "plain words");
    assert_eq!(requests[1].prompt, "ECHO SKILL PROMPT for: say it #echo");
    let skill = s
        .pipeline
        .plugins()
        .iter()
        .find(|p| p.id.name == "echo-skill")
        .expect("skill");
    let t = skill.telemetry.snapshot();
    assert_eq!(
        (t.executions, t.failures),
        (3, 0),
        "two triggers and one prompt"
    );
}

#[test]
fn a_skill_is_not_asked_about_sensors_its_manifest_does_not_list() {
    let heartbeat_only =
        |m: String| m.replace("component =", "sensors = [\"heartbeat\"]\ncomponent =");
    let s = setup_with(
        "",
        vec![source(ECHO_SKILL_WASM, ECHO_SKILL_MANIFEST, heartbeat_only)],
        vec![ProviderReply::Text("ok".into())],
        PipelineConfig::default(),
    );
    let executions = || {
        s.pipeline
            .plugins()
            .iter()
            .find(|p| p.id.name == "echo-skill")
            .expect("skill")
            .telemetry
            .snapshot()
            .executions
    };
    // User input it would take up, and a direct request with its tool-output feedback: the
    // skill is not listening, so no instance is made and the model gets the plain text.
    wait(s.pipeline.run(user("say it #echo")));
    let report = wait(s.pipeline.run(request(
        json!({ "tool": "eval", "args": { "expression": "(+ 1 2)" } }),
    )));
    assert!(
        report.steps.len() >= 2,
        "the tool's output came back: {report:?}"
    );
    assert_eq!(executions(), 0);
    assert_eq!(
        s.script.requests.lock().expect("lock")[0].prompt,
        "say it #echo"
    );
    // A heartbeat it listens to: asked (and it declines).
    wait(s.pipeline.run(Signal::event("heartbeat", None, None)));
    assert_eq!(executions(), 1);
}

#[test]
fn a_skill_is_asked_once_per_signal_however_many_proposals_the_model_makes() {
    let shell = || ProviderReply::ToolCall {
        id: "call_t".into(),
        name: "shell".into(),
        arguments: json!({"command": "mkfs.ext4 /dev/sda"}),
    };
    let s = setup_with(
        "",
        vec![source(ECHO_SKILL_WASM, ECHO_SKILL_MANIFEST, |m| m)],
        vec![shell(), shell(), shell()],
        PipelineConfig::default(),
    );
    let report = wait(s.pipeline.run(user("format it #echo")));
    assert!(matches!(
        &report.steps[0].outcome,
        StepOutcome::Rejected { attempts: 3, .. }
    ));
    let requests = s.script.requests.lock().expect("lock");
    assert_eq!(requests.len(), 3);
    assert!(
        requests
            .iter()
            .all(|r| r.prompt == "ECHO SKILL PROMPT for: format it #echo"),
        "every attempt carries the skill's prompt"
    );
    let skill = s
        .pipeline
        .plugins()
        .iter()
        .find(|p| p.id.name == "echo-skill")
        .expect("skill");
    assert_eq!(
        skill.telemetry.snapshot().executions,
        2,
        "one trigger and one prompt for three proposals"
    );
}

#[test]
fn skill_dependencies_are_ordered_and_a_skill_whose_dependencies_cannot_be_met_is_its_own_error() {
    // A cycle or a missing dependency was the whole set's error: one plugin's depends_on kept
    // every plugin from running (the daemon stayed on its stand-in, or kept an old set). It
    // is now that skill's load error, and the rest runs.
    let skill = |name: &'static str, deps: &'static str| {
        source(ECHO_SKILL_WASM, ECHO_SKILL_MANIFEST, move |m| {
            m.replace(
                "name = \"echo-skill\"",
                &format!("name = \"{name}\"\ndepends_on = [{deps}]"),
            )
        })
    };
    let (plugins_ok, _c1) = plugins("", vec![skill("base", ""), skill("top", "\"base\"")]);
    assert!(
        Agent::new(
            plugins_ok,
            Journal::in_memory().expect("journal"),
            PipelineConfig::default()
        )
        .is_ok()
    );
    let (rt, _c2) = fresh_runtime();
    let mut sources = crate::builtins(&["shell-guard", "eval"]);
    sources.extend([
        skill("base", ""),
        skill("a", "\"b\""),
        skill("b", "\"a\""),
        skill("selfish", "\"selfish\""),
        skill("lonely", "\"ghost\""),
        skill("behind", "\"lonely\", \"base\""),
    ]);
    let policy = Policy::default();
    let mut report = rt.load_all(&sources, &policy);
    // load_all drops nothing (`plugin install` audits a plugin alone, where every dependency
    // would look missing); the loader of the whole set does.
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    report.drop_unordered_skills(&policy);
    let why = |name: &str| -> String {
        report
            .errors
            .iter()
            .find(|e| e.plugin_name() == Some(name))
            .map(|e| e.to_string())
            .unwrap_or_else(|| panic!("{name} is not an error: {:?}", report.errors))
    };
    for name in ["a", "b", "selfish"] {
        assert!(why(name).contains("cycle"), "{name}: {}", why(name));
    }
    assert!(why("lonely").contains("\"ghost\""), "{}", why("lonely"));
    assert!(
        why("behind").contains("waits on lonely"),
        "{}",
        why("behind")
    );
    let loaded: Vec<&str> = report.plugins.iter().map(|p| p.id.name.as_str()).collect();
    assert_eq!(loaded, ["shell-guard", "eval", "base"]);
    assert!(
        report.missing_gates.is_empty(),
        "{:?}",
        report.missing_gates
    );
    Agent::new(
        report.plugins,
        Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("the rest runs");
}

#[test]
fn a_target_with_no_actuator_runs_nothing() {
    let s = setup(vec![]);
    let report = wait(
        s.pipeline
            .run(request(json!({"target": "telegram", "text": "hi"}))),
    );
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Invalid { reason } if reason.contains("\"telegram\" has no actuator")),
        "{:?}",
        report.steps[0].outcome
    );
}

#[test]
fn a_tool_past_its_deadline_becomes_a_tool_error_event() {
    let policy = "[plugins.hostile-tool]\nlimits = { tool_timeout_ms = { spin = 150 } }\n";
    let s = setup_with(
        policy,
        vec![source(
            passepartout_tests::HOSTILE_TOOL_WASM,
            passepartout_tests::HOSTILE_TOOL_MANIFEST,
            |m| m,
        )],
        vec![],
        PipelineConfig::default(),
    );
    let report = wait(s.pipeline.run(request(json!({"tool": "spin"}))));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::ToolFailed { tool, message } if tool == "spin" && message.contains("timed out after 150 ms")),
        "{:?}",
        report.steps[0].outcome
    );
    assert_eq!(
        report.steps[1].sensor.as_deref(),
        Some("tool-error"),
        "the failure goes round the loop"
    );
    assert!(
        s.outbox.sent()[0].1.starts_with("ERROR [spin]: "),
        "{:?}",
        s.outbox.sent()
    );
}

/// An actuator that, as it runs, reads the journal's file through a connection of its own:
/// what it sees is what a crash at that moment would leave.
struct JournalProbe {
    path: std::path::PathBuf,
    seen: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl passepartout::pipeline::Actuator for JournalProbe {
    async fn act(
        &self,
        _action: &passepartout::signal::Action,
        _signal: &Signal,
    ) -> Result<String, passepartout::pipeline::actuators::ActError> {
        let journal = Journal::open(&self.path).expect("a second connection");
        *self.seen.lock().expect("lock") = kinds(&journal);
        Ok("sent".into())
    }
}

/// An agent on an on-disk journal with a [`JournalProbe`] as its `telegram` actuator.
struct Probed {
    agent: Agent,
    path: std::path::PathBuf,
    /// What the probe saw in the journal as it ran (`seen` until it runs).
    seen: Arc<Mutex<Vec<String>>>,
    _cache: tempfile::TempDir,
}

impl Probed {
    fn new(dir: &tempfile::TempDir, seen: Vec<String>) -> Probed {
        let path = dir.path().join("journal.db");
        let (plugins, cache) = plugins("", Vec::new());
        let seen = Arc::new(Mutex::new(seen));
        let probe = JournalProbe {
            path: path.clone(),
            seen: seen.clone(),
        };
        let agent = Agent::new(
            plugins,
            Journal::open(&path).expect("journal"),
            PipelineConfig::default(),
        )
        .expect("agent")
        .with_actuator("telegram", Box::new(probe));
        Probed {
            agent,
            path,
            seen,
            _cache: cache,
        }
    }
}

#[test]
fn what_may_change_the_world_runs_only_once_its_proposal_and_verdicts_are_on_disk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let probed = Probed::new(&dir, Vec::new());
    let (agent, path, seen) = (&probed.agent, &probed.path, &probed.seen);
    // An actuator that is not a read-only tool (a message leaves the machine): write-ahead.
    let report = wait(agent.run(request(json!({"target": "telegram", "text": "hi"}))));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Ran { result, .. } if result == "sent"),
        "{:?}",
        report.steps[0].outcome
    );
    assert_eq!(
        *seen.lock().expect("lock"),
        ["proposal", "verdict"],
        "the proposal and its verdict were durable before the actuator ran"
    );
    // A read-only tool: its records and its result are committed together, before the run
    // answers; nothing is left unwritten.
    let before = kinds(agent.journal()).len();
    let report = wait(agent.run(request(
        json!({"tool": "eval", "args": {"expression": "(+ 1 2)"}}),
    )));
    assert!(matches!(&report.steps[0].outcome, StepOutcome::Ran { result, .. } if result == "3"));
    let reopened = Journal::open(path).expect("reopen");
    assert_eq!(
        kinds(&reopened)[before..before + 3],
        ["proposal", "verdict", "tool-result"]
    );
    assert!(reopened.verify().expect("read").is_ok());
}

#[test]
fn a_journal_that_cannot_be_written_stops_the_action_before_it_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let probed = Probed::new(&dir, vec!["never ran".to_owned()]);
    let (agent, path, seen) = (&probed.agent, &probed.path, &probed.seen);
    // Another process holds the database (past the 5 s busy timeout): nothing can be written.
    let holder = rusqlite::Connection::open(path).expect("second connection");
    holder.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    let report = wait(agent.run(request(json!({"target": "telegram", "text": "hi"}))));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Failed { error } if error.contains("journal cannot be written") && error.ends_with("nothing ran")),
        "{:?}",
        report.steps[0].outcome
    );
    assert_eq!(
        *seen.lock().expect("lock"),
        ["never ran"],
        "the actuator never ran"
    );
    holder.execute_batch("ROLLBACK").expect("unlock");
}

/// The agent a reload replaces, and where the one in force is kept.
type Replacement = (std::sync::Weak<Agent>, passepartout::pipeline::InForce);

/// A model that, asked, has a reload replace the agent asking it, then answers from a script:
/// the reload comes while the turn waits for the model.
struct ReloadWhileAsked {
    script: Arc<Script>,
    swap: Arc<Mutex<Option<Replacement>>>,
}

#[async_trait::async_trait]
impl Provider for ReloadWhileAsked {
    fn name(&self) -> &str {
        "reloading"
    }
    async fn complete_with(
        &self,
        request: &ProviderRequest,
        progress: Option<passepartout::pipeline::OnProgress<'_>>,
    ) -> Result<ProviderReply, PipelineError> {
        if let Some((old, new)) = self.swap.lock().expect("lock").take()
            && let Some(old) = old.upgrade()
        {
            old.supersede(new);
        }
        Scripted(self.script.clone())
            .complete_with(request, progress)
            .await
    }
}

/// Agent A, whose set has no gate, and agent B, which replaces it when A first asks the model
/// (A's set with the shell guard added): each with its own scripted model.
fn replaced_mid_turn(
    a_replies: Vec<ProviderReply>,
    b_replies: Vec<ProviderReply>,
) -> (Arc<Agent>, Arc<Script>, Arc<Script>, tempfile::TempDir) {
    let (rt, cache) = fresh_runtime();
    let load = |names: &[&str]| {
        let report = rt.load_all(&crate::builtins(names), &Policy::default());
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        report.plugins
    };
    let script = |replies: Vec<ProviderReply>| {
        Arc::new(Script {
            replies: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
        })
    };
    let (a_script, b_script) = (script(a_replies), script(b_replies));
    // One database, a journal each, as a reload opens its own.
    let db = cache.path().join("journal.db");
    let journal = || Journal::open(&db).expect("journal");
    let swap = Arc::new(Mutex::new(None));
    let a = Arc::new(
        Agent::new(load(&["eval"]), journal(), PipelineConfig::default())
            .expect("agent A")
            .with_provider(Box::new(ReloadWhileAsked {
                script: a_script.clone(),
                swap: swap.clone(),
            }))
            .with_actuator("cli", Outbox::new().actuator("cli")),
    );
    let b = Arc::new(
        Agent::new(
            load(&["shell-guard", "eval"]),
            journal(),
            PipelineConfig::default(),
        )
        .expect("agent B")
        .with_provider(Box::new(Scripted(b_script.clone())))
        .with_actuator("cli", Outbox::new().actuator("cli")),
    );
    let in_force = Arc::new(std::sync::RwLock::new(b));
    *swap.lock().expect("lock") = Some((Arc::downgrade(&a), in_force));
    (a, a_script, b_script, cache)
}

#[test]
fn an_action_proposed_before_a_reload_is_verified_and_run_by_the_agent_that_replaced_it() {
    let destructive = ProviderReply::ToolCall {
        id: "call_rm".into(),
        name: "eval".into(),
        arguments: json!({ "expression": "(+ 1 2)", "command": "rm -rf /" }),
    };
    let (a, _, _, _cache) = replaced_mid_turn(vec![destructive], vec![]);
    let report = wait(a.run(user("clean up")));
    match &report.steps[0].outcome {
        StepOutcome::Rejected { gate, .. } => assert_eq!(gate, "shell-guard"),
        other => panic!("the old set's pass ran it: {other:?}"),
    }
    assert!(
        !kinds(a.journal()).contains(&"tool-result".to_owned()),
        "nothing ran"
    );
}

#[test]
fn after_a_reload_a_running_turn_takes_its_next_round_on_the_new_agent() {
    let (a, a_script, b_script, _cache) = replaced_mid_turn(
        vec![eval_call("(+ 1 2)")],
        vec![ProviderReply::Text("It is 3.".into())],
    );
    let report = wait(a.run(user("what is 1 + 2?")));
    assert_eq!(
        report.steps[0].outcome,
        StepOutcome::Ran {
            target: "tool".into(),
            result: "3".into()
        }
    );
    // The tool's output went to the model of the agent in force, with the conversation.
    assert_eq!(a_script.requests.lock().expect("lock").len(), 1);
    let b_asked = b_script.requests.lock().expect("lock");
    assert_eq!(
        b_asked.len(),
        1,
        "the next round asks the new agent's model"
    );
    assert_eq!(b_asked[0].turns.len(), 1);
    assert_eq!(b_asked[0].turns[0].result, "3");
    // The new agent's gates judged the round's answer.
    assert!(
        report.steps[1]
            .trace
            .iter()
            .any(|g| g.gate == "shell-guard"),
        "{:?}",
        report.steps[1]
    );
}
