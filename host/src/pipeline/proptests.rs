//! Property: for arbitrary actions and arbitrary gates whose verdicts depend on the action's
//! content (rejecters, approvers, modifiers that settle after some rewrites, modifiers that
//! never settle, failing gates), at arbitrary priorities, the action an actuator receives is
//! byte-identical to one that every gate saw and passed, or asked approval for and a person
//! approved. Gates and the actuator are stand-ins at their trait boundaries; the pipeline, the
//! journal and the approvals are the real ones.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::json;

use super::actuators::{ActError, Actuator};
use super::{Agent, PipelineConfig, StepOutcome};
use crate::gates::GateCheck;
use crate::journal::Journal;
use crate::runtime::types as wit;
use crate::runtime::{PluginError, PluginId};
use crate::signal::{Action, Signal};

/// What a stand-in gate does, as a pure function of the action's `n` argument.
#[derive(Clone, Copy, Debug)]
enum V {
    Pass,
    /// Rejects when `n % 3 == r`.
    Reject(i64),
    /// Asks a person when `n % 2 == r`.
    Approve(i64),
    /// Raises `n` by one while it is below the bound, then returns the action unchanged.
    Settle(i64),
    /// Always raises `n`: never settles.
    Forever,
    /// Always fails (a trap).
    Fail,
    /// Passes every action but ones with `n >= bound`, which it rejects.
    Ceiling(i64),
}

struct FakeGate {
    name: String,
    priority: i32,
    verdict: V,
    /// Every action (WIT form) this gate was asked about.
    seen: Mutex<Vec<wit::Action>>,
}

impl FakeGate {
    fn new(name: &str, priority: i32, verdict: V) -> FakeGate {
        FakeGate {
            name: name.into(),
            priority,
            verdict,
            seen: Mutex::new(Vec::new()),
        }
    }

    fn decide(&self, action: &wit::Action) -> Result<wit::Verdict, PluginError> {
        let args: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&action.args).unwrap_or_default();
        let n = args
            .get("n")
            .and_then(serde_json::Value::as_i64)
            .unwrap_or(0);
        let bump = || {
            let mut a = action.clone();
            let mut args = args.clone();
            args.insert("n".into(), json!(n + 1));
            a.args = serde_json::Value::Object(args).to_string();
            wit::Verdict::Modify(a)
        };
        Ok(match self.verdict {
            V::Pass => wit::Verdict::Pass,
            V::Reject(r) if n.rem_euclid(3) == r => {
                wit::Verdict::Reject(format!("{} says no to {n}", self.name))
            }
            V::Approve(r) if n.rem_euclid(2) == r => {
                wit::Verdict::RequireApproval(format!("{} asks a person about {n}", self.name))
            }
            V::Reject(_) | V::Approve(_) => wit::Verdict::Pass,
            V::Settle(bound) if n < bound => bump(),
            // Unchanged: a pass.
            V::Settle(_) => wit::Verdict::Modify(action.clone()),
            V::Forever => bump(),
            V::Ceiling(bound) if n >= bound => {
                wit::Verdict::Reject(format!("{} caps n below {bound}", self.name))
            }
            V::Ceiling(_) => wit::Verdict::Pass,
            V::Fail => {
                return Err(PluginError::Trapped {
                    plugin: PluginId {
                        name: self.name.clone(),
                        version: "0.0.0".into(),
                    },
                    detail: "unreachable".into(),
                });
            }
        })
    }
}

#[async_trait::async_trait]
impl GateCheck for FakeGate {
    fn pure(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    async fn check(
        &self,
        action: &wit::Action,
        _signal: &wit::SignalView,
        _context: &Arc<crate::runtime::effects::ActionContext>,
    ) -> Result<wit::Verdict, PluginError> {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(action.clone());
        self.decide(action)
    }
}

/// An actuator that records what it ran, accepts only `n` below [`VALID_BELOW`] and counts how
/// often it was asked to validate.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Action>>>, Arc<std::sync::atomic::AtomicUsize>);

/// The `rec` actuator refuses an action whose `n` is this or more.
const VALID_BELOW: i64 = 4;

fn n_of(action: &Action) -> i64 {
    action
        .args
        .get("n")
        .and_then(serde_json::Value::as_i64)
        .unwrap_or(0)
}

/// A pipeline with no plugins, an in-memory journal and `recorder` as the `rec` actuator.
fn recording(recorder: &Recorder) -> Agent {
    Agent::new(
        Vec::new(),
        Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_actuator("rec", Box::new(recorder.clone()))
}

impl Recorder {
    fn ran(&self) -> Vec<Action> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn validations(&self) -> usize {
        self.1.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[async_trait::async_trait]
impl Actuator for Recorder {
    fn validate(&self, action: &Action) -> Result<(), ActError> {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n_of(action) >= VALID_BELOW {
            return Err(ActError::Invalid(format!("n must be below {VALID_BELOW}")));
        }
        Ok(())
    }

    async fn act(&self, action: &Action, _signal: &Signal) -> Result<String, ActError> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(action.clone());
        Ok("done".into())
    }
}

fn verdict() -> impl Strategy<Value = V> {
    prop_oneof![
        4 => Just(V::Pass),
        2 => (0i64..3).prop_map(V::Reject),
        2 => (0i64..2).prop_map(V::Approve),
        3 => (0i64..8).prop_map(V::Settle),
        1 => Just(V::Forever),
        1 => Just(V::Fail),
        2 => (0i64..8).prop_map(V::Ceiling),
    ]
}

/// How the gates judge `ran`: Ok(true) when some gate asks a person, Ok(false) when all pass,
/// Err when any would block or change it.
fn judged(gates: &[Arc<FakeGate>], ran: &Action) -> Result<bool, String> {
    let wit = ran.to_wit();
    let mut asks = false;
    for g in gates {
        match g.decide(&wit) {
            Ok(wit::Verdict::Pass) => {}
            Ok(wit::Verdict::Modify(m)) if m == wit => {}
            Ok(wit::Verdict::RequireApproval(_)) => asks = true,
            other => return Err(format!("gate {} would give {other:?} on {wit:?}", g.name)),
        }
        let seen = g.seen.lock().unwrap_or_else(|p| p.into_inner());
        if !seen.contains(&wit) {
            return Err(format!(
                "gate {} never saw the action that ran: {wit:?}",
                g.name
            ));
        }
    }
    Ok(asks)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn what_runs_is_what_every_gate_passed(
        gates in proptest::collection::vec((-3i32..3, verdict()), 0..7),
        n in 0i64..6,
        text in "\\PC{0,20}",
        approve in any::<bool>(),
    ) {
        let recorder = Recorder::default();
        let mut pipeline = recording(&recorder);
        let fakes: Vec<Arc<FakeGate>> = gates.iter().enumerate()
            .map(|(i, (priority, verdict))| Arc::new(FakeGate::new(&format!("g{i}"), *priority, *verdict)))
            .collect();
        for g in &fakes {
            pipeline = pipeline.with_gate(g.clone());
        }

        let action = json!({ "target": "rec", "text": text, "args": { "n": n } });
        let report = crate::blocking::wait(pipeline.run(Signal::request(act(action), Default::default())));
        let first = &report.steps[0];

        // Before any person approved: everything that ran, every gate passed as it is, and
        // the actuator accepted it, asked once (the last mile reuses Reason's check).
        let ran = recorder.ran();
        prop_assert!(ran.len() <= 1, "ran twice: {ran:?}");
        prop_assert!(ran.iter().all(|a| n_of(a) < VALID_BELOW), "ran an invalid action: {ran:?}");
        if !ran.is_empty() {
            prop_assert_eq!(recorder.validations(), 1, "validated more than once");
        }
        if let StepOutcome::Invalid { reason } = &first.outcome {
            prop_assert!(reason.contains("n must be below"), "{reason}");
        }
        for a in &ran {
            let asks = judged(&fakes, a).map_err(TestCaseError::fail)?;
            prop_assert!(!asks, "an action a gate wanted approved ran unapproved: {a:?}");
            prop_assert!(matches!(first.outcome, StepOutcome::Ran { .. }), "{:?}", first.outcome);
        }
        // Rounds in the trace never go backwards and stay within the bound.
        let rounds: Vec<u32> = first.trace.iter().map(|g| g.round).collect();
        prop_assert!(rounds.windows(2).all(|w| w[0] <= w[1]), "{rounds:?}");
        prop_assert!(rounds.iter().all(|r| (1..=crate::gates::MAX_ROUNDS).contains(r)), "{rounds:?}");
        // Only pass-through gates: the action runs unchanged, when it is valid.
        if fakes.iter().all(|g| matches!(g.verdict, V::Pass)) {
            prop_assert_eq!(ran.len(), usize::from(n < VALID_BELOW));
        }
        if let StepOutcome::Suspended { token, .. } = &first.outcome {
            prop_assert!(ran.is_empty(), "an action awaiting approval reached the actuator");
            if approve {
                // The last mile may still refuse or re-suspend; whatever runs must be judged.
                let _ = crate::blocking::wait(pipeline.approve(token, None, None));
                let after = recorder.ran();
                prop_assert!(after.len() <= 1);
                prop_assert!(after.iter().all(|a| n_of(a) < VALID_BELOW), "ran an invalid action: {after:?}");
                for a in &after {
                    judged(&fakes, a).map_err(TestCaseError::fail)?;
                }
            } else {
                crate::blocking::wait(pipeline.deny(token, None, None)).expect("deny");
                prop_assert!(recorder.ran().is_empty());
            }
        }
        prop_assert_eq!(pipeline.journal().verify().expect("read"), Ok(pipeline.journal().records(None).expect("read").len()));
    }
}

/// A modifier below a rejecter cannot slip its rewrite past it, and the trace shows both rounds.
#[test]
fn a_low_modifier_restarts_the_walk() {
    let recorder = Recorder::default();
    let pipeline = recording(&recorder)
        .with_gate(Arc::new(FakeGate::new("high", 100, V::Ceiling(1))))
        .with_gate(Arc::new(FakeGate::new("low", -1000, V::Settle(5))));
    let report = crate::blocking::wait(pipeline.run(Signal::request(
        act(json!({ "target": "rec", "args": { "n": 0 } })),
        Default::default(),
    )));
    let step = &report.steps[0];
    assert!(
        matches!(&step.outcome, StepOutcome::Rejected { gate, .. } if gate == "high"),
        "{:?}",
        step.outcome
    );
    assert!(recorder.ran().is_empty());
    let walk: Vec<(String, u32)> = step
        .trace
        .iter()
        .map(|g| (g.gate.clone(), g.round))
        .collect();
    assert_eq!(
        walk,
        [("high".into(), 1), ("low".into(), 1), ("high".into(), 2)],
        "{walk:?}"
    );
}

#[test]
fn gates_that_never_settle_are_a_rejection_naming_them() {
    let recorder = Recorder::default();
    let pipeline =
        recording(&recorder).with_gate(Arc::new(FakeGate::new("spinner", 0, V::Forever)));
    let report = crate::blocking::wait(pipeline.run(Signal::request(
        act(json!({ "target": "rec", "args": { "n": 0 } })),
        Default::default(),
    )));
    let StepOutcome::Rejected { gate, reason, .. } = &report.steps[0].outcome else {
        panic!("{:?}", report.steps[0].outcome)
    };
    assert_eq!(gate, "spinner");
    assert!(
        reason.contains("kept rewriting") && reason.contains("spinner"),
        "{reason}"
    );
    assert!(recorder.ran().is_empty());
}

/// A gate that passes the first time it is asked and rejects after: the last-mile verify must
/// catch what changed between Reason and Act.
struct Fickle(std::sync::atomic::AtomicU32);

#[async_trait::async_trait]
impl GateCheck for Fickle {
    fn name(&self) -> &str {
        "fickle"
    }
    fn pure(&self) -> bool {
        false
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn priority(&self) -> i32 {
        0
    }
    async fn check(
        &self,
        _action: &wit::Action,
        _signal: &wit::SignalView,
        _context: &Arc<crate::runtime::effects::ActionContext>,
    ) -> Result<wit::Verdict, PluginError> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(if n == 0 {
            wit::Verdict::Pass
        } else {
            wit::Verdict::Reject("changed my mind".into())
        })
    }
}

#[test]
fn the_last_mile_verify_blocks_what_reason_let_through() {
    let recorder = Recorder::default();
    let pipeline =
        recording(&recorder).with_gate(Arc::new(Fickle(std::sync::atomic::AtomicU32::new(0))));
    let signal = Signal::request(
        act(json!({ "target": "rec", "text": "hello" })),
        Default::default(),
    );
    let report = crate::blocking::wait(pipeline.run(signal));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Rejected { gate, .. } if gate == "fickle"),
        "{:?}",
        report.steps[0].outcome
    );
    assert!(
        recorder
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty(),
        "nothing ran"
    );
}

/// A pipeline over `journal` whose one gate asks a person about every action, `recorder` as the
/// `rec` actuator.
fn asking(recorder: &Recorder, journal: Journal, config: PipelineConfig) -> Agent {
    Agent::new(Vec::new(), journal, config)
        .expect("pipeline")
        .with_actuator("rec", Box::new(recorder.clone()))
        .with_gate(Arc::new(FakeGate::new("ask", 0, V::Approve(0))))
}

/// A direct request to the `rec` actuator.
fn hello() -> Signal {
    Signal::request(
        act(json!({ "target": "rec", "text": "hello" })),
        Default::default(),
    )
}

/// A journal that refuses the verdicts (a real SQLite trigger aborts their insert) while the
/// approvals table still takes writes: no person is asked about an action whose verdicts are
/// not on disk, and nothing runs.
#[test]
fn no_person_is_asked_when_the_verdicts_cannot_be_journaled() {
    let recorder = Recorder::default();
    let journal = refusing(Journal::in_memory().expect("journal"), "verdict");
    let pipeline = asking(&recorder, journal, PipelineConfig::default());
    let report = crate::blocking::wait(pipeline.run(hello()));
    let outcome = &report.steps[0].outcome;
    assert!(
        matches!(outcome, StepOutcome::Failed { error }
            if error.contains("verdicts refused by the test") && error.contains("no one was told or asked")),
        "{outcome:?}"
    );
    let waiting = waiting(&pipeline);
    assert!(waiting.is_empty(), "a person was asked: {waiting:?}");
    assert!(recorder.ran().is_empty(), "nothing ran");
}

#[test]
fn an_expired_approval_cannot_be_used() {
    let recorder = Recorder::default();
    let config = PipelineConfig {
        approval_expiry: std::time::Duration::ZERO,
        ..PipelineConfig::default()
    };
    let pipeline = asking(&recorder, Journal::in_memory().expect("journal"), config);
    let report = crate::blocking::wait(pipeline.run(hello()));
    let StepOutcome::Suspended { token, .. } = &report.steps[0].outcome else {
        panic!("suspended")
    };
    std::thread::sleep(std::time::Duration::from_millis(5));
    let err = crate::blocking::wait(pipeline.approve(token, None, None)).expect_err("expired");
    assert!(err.to_string().contains("expired"), "{err}");
    assert!(
        recorder
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    );
}

/// An approval answers the questions the person was asked: a gate asking something new at
/// approval time (added by a reload) suspends the action again with its question.
#[test]
fn an_approval_does_not_answer_a_question_nobody_asked() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("journal.db");
    let token = suspended_on(&db, None);
    // The reloaded set has a second gate with a question of its own.
    let recorder = Recorder::default();
    let second = Agent::new(
        Vec::new(),
        Journal::open(&db).expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_actuator("rec", Box::new(recorder.clone()))
    .with_gate(Arc::new(FakeGate::new("ask", 0, V::Approve(0))))
    .with_gate(Arc::new(FakeGate::new("new", 1, V::Approve(0))));
    let report =
        crate::blocking::wait(second.approve(&token, None, Some("a test"))).expect("approve");
    let StepOutcome::Suspended {
        reasons,
        token: again,
    } = &report.steps[0].outcome
    else {
        panic!("asked again: {:?}", report.steps[0].outcome)
    };
    assert!(reasons.iter().any(|r| r.starts_with("new:")), "{reasons:?}");
    assert!(recorder.ran().is_empty(), "nothing ran on the old answer");
    // Answering the new question runs it.
    crate::blocking::wait(second.approve(again, None, None)).expect("approve again");
    assert_eq!(recorder.ran().len(), 1);
}

/// The token of `{"target": "rec", "args": {"n": 0}}` suspended by an agent on the journal at
/// The actions waiting for a person in `agent`'s approvals table.
fn waiting(agent: &Agent) -> Vec<crate::approvals::Pending> {
    crate::blocking::in_place(|| {
        crate::approvals::Approvals::new(agent.journal())
            .and_then(|a| a.pending())
            .expect("approvals")
    })
}

/// `journal`, whose database refuses (a real SQLite trigger aborts the insert) every record of
/// `kind`, with the error "`kind`s refused by the test".
fn refusing(journal: Journal, kind: &str) -> Journal {
    journal
        .with_conn(|c| {
            c.execute_batch(&format!(
                "CREATE TRIGGER \"refuse {kind}\" BEFORE INSERT ON journal \
                 WHEN NEW.kind = '{kind}' \
                 BEGIN SELECT RAISE(ABORT, '{kind}s refused by the test'); END;"
            ))
        })
        .expect("trigger");
    journal
}

/// `db` whose one gate asks a person about it; asked by `source` (told what became of it),
/// when given.
fn suspended_on(db: &std::path::Path, source: Option<&str>) -> String {
    let first = asking(
        &Recorder::default(),
        Journal::open(db).expect("journal"),
        PipelineConfig::default(),
    );
    let signal = Signal::request(
        act(json!({ "target": "rec", "args": { "n": 0 } })),
        source
            .map(crate::signal::Meta::from_source)
            .unwrap_or_default(),
    );
    match &crate::blocking::wait(first.run(signal)).steps[0].outcome {
        StepOutcome::Suspended { token, .. } => token.clone(),
        other => panic!("suspended: {other:?}"),
    }
}

/// At an approved action's last mile, a journal that refuses the verdicts (a real SQLite
/// trigger) stops it before a person is asked again (a gate added since asks something new)
/// or its source is told of a rejection (a gate added since refuses it): nothing runs,
/// nobody is asked, and the step says why.
#[test]
fn at_the_last_mile_nobody_is_asked_or_told_on_verdicts_not_journaled() {
    for (gate, verdict) in [("new", V::Approve(0)), ("no", V::Reject(0))] {
        let dir = tempfile::tempdir().expect("dir");
        let db = dir.path().join("journal.db");
        // Asked by `rec`: what it is told, it records as run.
        let token = suspended_on(&db, Some("rec"));
        let journal = refusing(Journal::open(&db).expect("journal"), "verdict");
        let recorder = Recorder::default();
        let second = asking(&recorder, journal, PipelineConfig::default())
            .with_gate(Arc::new(FakeGate::new(gate, 1, verdict)));
        let report = crate::blocking::wait(second.approve(&token, None, None)).expect("approve");
        let outcome = &report.steps[0].outcome;
        assert!(
            matches!(outcome, StepOutcome::Failed { error }
                if error.contains("verdicts refused by the test")
                    && error.contains("no one was told or asked")),
            "{gate}: {outcome:?}"
        );
        let waiting = waiting(&second);
        assert!(
            waiting.is_empty(),
            "{gate}: a person was asked: {waiting:?}"
        );
        assert!(
            recorder.ran().is_empty(),
            "{gate}: nothing runs, and the source is told nothing: {:?}",
            recorder.ran()
        );
    }
}

/// An approved action that ran, whose result the journal refuses (a real SQLite trigger
/// aborts its insert): the result is given to no one, and the approval stays running (to be
/// listed as interrupted once the process ends), never done without its result.
#[test]
fn an_approved_result_the_journal_refuses_is_withheld_and_the_approval_stays_running() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("journal.db");
    let token = suspended_on(&db, None);
    let journal = refusing(Journal::open(&db).expect("journal"), "tool-result");
    let recorder = Recorder::default();
    let agent = asking(&recorder, journal, PipelineConfig::default());
    let report = crate::blocking::wait(agent.approve(&token, None, None)).expect("approve");
    let outcome = &report.steps[0].outcome;
    assert!(
        matches!(outcome, StepOutcome::Failed { error }
            if error.contains("tool-results refused by the test")
                && error.contains("its result is withheld")),
        "{outcome:?}"
    );
    assert_eq!(recorder.ran().len(), 1, "it ran");
    let status: String = agent
        .journal()
        .with_conn(|c| {
            c.query_row(
                "SELECT status FROM approvals WHERE token = ?1",
                [&token],
                |r| r.get(0),
            )
        })
        .expect("status");
    assert_eq!(status, "running");
}

/// An action whose arguments nest past [`crate::signal::MAX_ARGS_NESTING`] (here 125 deep, as
/// a hostile client's frame or a model's tool call can be: serde reads up to 127) is invalid
/// before any gate asks a person about it. Suspended, its row (the action inside its signal)
/// could not be read back: never listed, approved or denied, it held one of the places for
/// waiting approvals for a day. What is journaled of it reads back.
#[test]
fn an_action_nested_too_deep_is_invalid_and_never_waits_for_a_person() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("journal.db");
    let recorder = Recorder::default();
    let agent = asking(
        &recorder,
        Journal::open(&db).expect("journal"),
        PipelineConfig::default(),
    );
    // The first step's outcome of an action to `rec` whose `x` nests `levels` arrays deep.
    let nested = |levels: usize| {
        let mut deep = json!(0);
        for _ in 0..levels {
            deep = json!([deep]);
        }
        let signal = Signal::request(
            act(json!({ "target": "rec", "args": { "n": 0, "x": deep } })),
            Default::default(),
        );
        crate::blocking::wait(agent.run(signal)).steps[0]
            .outcome
            .clone()
    };
    let outcome = nested(125);
    assert!(
        matches!(&outcome, StepOutcome::Invalid { reason } if reason.contains("nest 126 levels")),
        "{outcome:?}"
    );
    let waiting = waiting(&agent);
    assert!(waiting.is_empty(), "{waiting:?}");
    assert!(recorder.ran().is_empty());
    agent
        .journal()
        .records(None)
        .expect("the journal reads back");
    // As deep as may be: valid, and asked about as any other.
    let outcome = nested(crate::signal::MAX_ARGS_NESTING - 1);
    assert!(
        matches!(outcome, StepOutcome::Suspended { .. }),
        "{outcome:?}"
    );
}

/// A pure gate is asked once per turn for the action that runs: the last mile reuses the
/// walk's pass, whether the gate passed or rewrote the action into itself.
#[test]
fn the_last_mile_does_not_ask_a_pure_gate_twice() {
    for verdict in [V::Pass, V::Settle(0)] {
        asked_once(verdict);
    }
}

fn asked_once(verdict: V) {
    let recorder = Recorder::default();
    let gate = Arc::new(FakeGate::new("counted", 0, verdict));
    let pipeline = recording(&recorder).with_gate(gate.clone());
    let signal = Signal::request(
        act(json!({ "target": "rec", "text": "hello" })),
        Default::default(),
    );
    let report = crate::blocking::wait(pipeline.run(signal));
    assert!(
        matches!(report.steps[0].outcome, StepOutcome::Ran { .. }),
        "{:?}",
        report.steps[0].outcome
    );
    assert_eq!(recorder.ran().len(), 1);
    assert_eq!(
        gate.seen.lock().unwrap_or_else(|p| p.into_inner()).len(),
        1,
        "asked once ({:?})",
        gate.verdict
    );
    assert_eq!(
        report.steps[0].trace.len(),
        1,
        "its verdict is in the trace once"
    );
}

/// The action `value` describes (as a client would send it).
fn act(value: serde_json::Value) -> crate::signal::Action {
    serde_json::from_value(value).expect("an action")
}

/// A stand-in gate whose code or configuration is `config` ([`GateCheck::identity`]).
struct Configured(Arc<FakeGate>, &'static str);

#[async_trait::async_trait]
impl GateCheck for Configured {
    fn pure(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        self.0.name()
    }
    fn version(&self) -> &str {
        self.0.version()
    }
    fn priority(&self) -> i32 {
        self.0.priority()
    }
    fn identity(&self) -> String {
        format!("{}@{}\0{}", self.name(), self.version(), self.1)
    }
    async fn check(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
        context: &Arc<crate::runtime::effects::ActionContext>,
    ) -> Result<wit::Verdict, PluginError> {
        self.0.check(action, signal, context).await
    }
}

/// A remembered pass answers only the same gate with the same configuration: a gate of the
/// same name and version whose code or config differs is asked again.
#[test]
fn a_pass_is_remembered_for_the_same_code_and_config_only() {
    let gate = Arc::new(FakeGate::new("g", 0, V::Pass));
    let catalog = crate::runtime::effects::Catalog::new(std::iter::empty());
    let action = act(json!({ "target": "rec", "text": "hello" }));
    let memo = crate::gates::Memo::default();
    let asked = || gate.seen.lock().unwrap_or_else(|p| p.into_inner()).len();
    for (config, expected) in [("a", 1), ("a", 1), ("b", 2), ("a", 2)] {
        passes(&Configured(gate.clone(), config), &catalog, &action, &memo);
        assert_eq!(asked(), expected, "config {config}");
    }
}

/// Walk `gate` over `action` with `memo`: it must pass.
fn passes(
    gate: &dyn GateCheck,
    catalog: &crate::runtime::effects::Catalog,
    action: &Action,
    memo: &crate::gates::Memo,
) {
    let signal = Signal::request(action.clone(), Default::default());
    let v = crate::blocking::wait(crate::gates::verify_with(
        &[gate],
        catalog,
        action,
        &signal,
        Some(memo),
        None,
    ));
    assert!(
        matches!(v.outcome, crate::gates::Outcome::Passed(_)),
        "{:?}",
        v.outcome
    );
}

/// A tool's own gate (asked only about calls of `mine`) that rewrites every call of it into
/// `into`.
struct Guard {
    into: serde_json::Value,
}

#[async_trait::async_trait]
impl GateCheck for Guard {
    fn pure(&self) -> bool {
        true
    }
    fn name(&self) -> &str {
        "guard"
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn priority(&self) -> i32 {
        0
    }
    fn applies_to(&self, action: &Action) -> bool {
        action.target == "tool" && action.tool.as_deref() == Some("mine")
    }
    async fn check(
        &self,
        _action: &wit::Action,
        _signal: &wit::SignalView,
        _context: &Arc<crate::runtime::effects::ActionContext>,
    ) -> Result<wit::Verdict, PluginError> {
        Ok(wit::Verdict::Modify(act(self.into.clone()).to_wit()))
    }
}

/// A tool's own gate may narrow its tool's calls, never turn one into another tool's call, a
/// shell command or a reply.
#[test]
fn a_tools_own_gate_rewrites_only_into_calls_of_its_tools() {
    let catalog = crate::runtime::effects::Catalog::new(std::iter::empty());
    let call = act(json!({ "target": "tool", "tool": "mine", "args": { "path": "/etc" } }));
    let signal = Signal::request(call.clone(), Default::default());
    let walk = |into: serde_json::Value| {
        crate::blocking::wait(crate::gates::verify(
            &[&Guard { into }],
            &catalog,
            &call,
            &signal,
        ))
        .outcome
    };
    for into in [
        json!({ "target": "tool", "tool": "shell", "args": { "program": "id" } }),
        json!({ "target": "shell", "args": { "cmd": "id" } }),
        json!({ "target": "user", "text": "done" }),
    ] {
        let outcome = walk(into.clone());
        assert!(
            matches!(&outcome, crate::gates::Outcome::Rejected { gate, reason }
                if gate == "guard" && reason.contains("only calls of its own plugin's tools")),
            "{into}: {outcome:?}"
        );
    }
    // Into a narrower call of its own tool: the rewrite stands (the next round passes it, the
    // guard rewriting it into itself).
    let narrower = json!({ "target": "tool", "tool": "mine", "args": { "path": "/tmp" } });
    let outcome = walk(narrower.clone());
    assert_eq!(outcome, crate::gates::Outcome::Passed(act(narrower)));
}

/// MCP tools whose identity changes when the test says (a server that changed its tools while
/// a turn ran).
#[derive(Debug, Default)]
struct Shifting(std::sync::atomic::AtomicU64);

impl crate::runtime::effects::ExternalTools for Shifting {
    fn identity(&self, name: &str) -> Option<crate::runtime::effects::ToolIdentity> {
        Some(crate::runtime::effects::ToolIdentity {
            plugin: "mcp:server".into(),
            version: self
                .0
                .load(std::sync::atomic::Ordering::Relaxed)
                .to_string(),
            tool: name.into(),
            read_only: false,
            declares_effects: false,
            component: String::new(),
        })
    }

    fn context(
        &self,
        name: &str,
        _args: &serde_json::Map<String, serde_json::Value>,
    ) -> Option<crate::runtime::effects::ActionContext> {
        Some(crate::runtime::effects::ActionContext {
            tool: self.identity(name),
            effects: Default::default(),
        })
    }
}

/// A remembered pass answers only what the gate was told then: when the tool the action names
/// changes within the turn, the gate is asked again.
#[test]
fn a_pass_is_not_remembered_across_a_change_in_the_tool_the_gates_are_told_of() {
    let gate = FakeGate::new("g", 0, V::Pass);
    let tools = Arc::new(Shifting::default());
    let catalog =
        crate::runtime::effects::Catalog::new(std::iter::empty()).with_external(tools.clone());
    let action = act(json!({ "target": "tool", "tool": "search", "args": {} }));
    let memo = crate::gates::Memo::default();
    let asked = || gate.seen.lock().unwrap_or_else(|p| p.into_inner()).len();
    for (version, expected) in [(0, 1), (0, 1), (1, 2), (1, 2)] {
        tools.0.store(version, std::sync::atomic::Ordering::Relaxed);
        passes(&gate, &catalog, &action, &memo);
        assert_eq!(asked(), expected, "version {version}");
    }
}

/// An actuator of `tool` actions that records as [`Recorder`] does; the server's tools change
/// (its identity moves on) right after it validates.
struct ShiftsOnValidate(Recorder, Arc<Shifting>);

#[async_trait::async_trait]
impl Actuator for ShiftsOnValidate {
    fn validate(&self, action: &Action) -> Result<(), ActError> {
        let checked = self.0.validate(action);
        self.1.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        checked
    }

    async fn act(&self, action: &Action, signal: &Signal) -> Result<String, ActError> {
        self.0.act(action, signal).await
    }
}

/// Reason's check stands for the last mile only while the action's name leads to the tool it
/// was checked against: an MCP server's tool that changed in between (re-pinned with another
/// schema) has the action checked again before it runs.
#[test]
fn an_action_is_validated_again_when_its_tool_changed_since_reason() {
    let recorder = Recorder::default();
    let tools = Arc::new(Shifting::default());
    let mut pipeline = recording(&recorder).with_actuator(
        "tool",
        Box::new(ShiftsOnValidate(recorder.clone(), tools.clone())),
    );
    pipeline.catalog = std::mem::take(&mut pipeline.catalog).with_external(tools.clone());
    let action = act(json!({ "target": "tool", "tool": "search", "args": {} }));
    let report = crate::blocking::wait(pipeline.run(Signal::request(action, Default::default())));
    assert!(
        matches!(report.steps[0].outcome, StepOutcome::Ran { .. }),
        "{:?}",
        report.steps[0].outcome
    );
    assert_eq!(recorder.ran().len(), 1);
    assert_eq!(
        recorder.validations(),
        2,
        "checked again against the changed tool"
    );
}

/// Only Reason's own check lets the last mile skip the actuator's: an approved decision made
/// outside the pipeline (every type of it is public) with a memo of its own, for an action the
/// actuator refuses, runs nothing.
#[test]
fn a_decision_made_outside_reason_is_validated_before_it_runs() {
    let recorder = Recorder::default();
    let pipeline = recording(&recorder);
    let action = act(json!({ "target": "rec", "args": { "n": VALID_BELOW } }));
    let signal = Signal::request(action.clone(), Default::default());
    let forged = super::reason::Reasoned::Approved {
        action,
        trace: Vec::new(),
        memo: crate::gates::Memo::default(),
    };
    let mut cycle = super::cycle::Cycle::default();
    let (step, _) = crate::blocking::wait(pipeline.act(&signal, forged, &mut cycle)).expect("act");
    assert!(
        matches!(&step.outcome, StepOutcome::Invalid { reason } if reason.contains("n must be below")),
        "{:?}",
        step.outcome
    );
    assert!(recorder.ran().is_empty(), "{:?}", recorder.ran());
    assert_eq!(recorder.validations(), 1);
}
