//! Property: for arbitrary actions and arbitrary gate verdicts, nothing reaches an actuator
//! unless every gate passed or a person approved, and the trace names every gate that ran, in
//! priority order. Gates and the actuator are stand-ins at their trait boundaries; the
//! pipeline, the journal and the approvals are the real ones.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::json;

use super::actuators::{ActError, Actuator};
use super::{Pipeline, PipelineConfig, StepOutcome};
use crate::gates::GateCheck;
use crate::journal::Journal;
use crate::runtime::types as wit;
use crate::runtime::{PluginError, PluginId};
use crate::signal::{Action, Signal};

#[derive(Clone, Copy, Debug)]
enum V {
    Pass,
    Reject,
    Approve,
    Modify,
    Fail,
}

struct FakeGate {
    name: String,
    priority: i32,
    verdict: V,
}

impl GateCheck for FakeGate {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn check(
        &self,
        action: &wit::Action,
        _signal: &wit::SignalView,
    ) -> Result<wit::Verdict, PluginError> {
        Ok(match self.verdict {
            V::Pass => wit::Verdict::Pass,
            V::Reject => wit::Verdict::Reject(format!("{} says no", self.name)),
            V::Approve => wit::Verdict::RequireApproval(format!("{} asks a person", self.name)),
            V::Modify => {
                let mut a = action.clone();
                a.args = json!({ "modified_by": self.name }).to_string();
                wit::Verdict::Modify(a)
            }
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

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Action>>>);

impl Actuator for Recorder {
    fn act(&self, action: &Action, _signal: &Signal) -> Result<String, ActError> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(action.clone());
        Ok("done".into())
    }
}

fn verdict() -> impl Strategy<Value = V> {
    prop_oneof![4 => Just(V::Pass), 1 => Just(V::Reject), 1 => Just(V::Approve), 1 => Just(V::Modify), 1 => Just(V::Fail)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn nothing_reaches_an_actuator_unless_every_gate_allows_it(
        gates in proptest::collection::vec((-3i32..3, verdict()), 0..7),
        text in "\\PC{0,40}",
        args in proptest::collection::btree_map("[a-z]{1,6}", "\\PC{0,10}", 0..4),
        approve in any::<bool>(),
    ) {
        let recorder = Recorder::default();
        let mut pipeline = Pipeline::new(Vec::new(), Journal::in_memory().expect("journal"), PipelineConfig::default())
            .expect("pipeline")
            .with_actuator("rec", Box::new(recorder.clone()));
        let fakes: Vec<FakeGate> = gates.iter().enumerate()
            .map(|(i, (priority, verdict))| FakeGate { name: format!("g{i}"), priority: *priority, verdict: *verdict })
            .collect();
        let mut order: Vec<&FakeGate> = fakes.iter().collect();
        order.sort_by(|a, b| b.priority.cmp(&a.priority).then_with(|| a.name.cmp(&b.name)));
        let expected_walk: Vec<String> = match order.iter().position(|g| matches!(g.verdict, V::Reject | V::Fail)) {
            Some(stop) => order[..=stop].iter().map(|g| g.name.clone()).collect(),
            None => order.iter().map(|g| g.name.clone()).collect(),
        };
        let blocked = order.iter().any(|g| matches!(g.verdict, V::Reject | V::Fail));
        let wants_approval = order.iter().any(|g| matches!(g.verdict, V::Approve));
        let last_modifier = order.iter().rev().find(|g| matches!(g.verdict, V::Modify)).map(|g| g.name.clone());
        for g in fakes {
            pipeline = pipeline.with_gate(Arc::new(g));
        }

        let action = json!({ "target": "rec", "text": text, "args": args });
        let report = pipeline.run(Signal::request(action, Default::default()));
        let first = &report.steps[0];
        let walked: Vec<String> = first.trace.iter().map(|g| g.gate.clone()).collect();

        let ran = recorder.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if blocked {
            prop_assert!(ran.is_empty(), "a blocked action reached the actuator");
            prop_assert!(matches!(first.outcome, StepOutcome::Rejected { .. }), "{:?}", first.outcome);
            prop_assert_eq!(walked, expected_walk);
        } else if wants_approval {
            prop_assert!(ran.is_empty(), "an action awaiting approval reached the actuator");
            prop_assert_eq!(walked, expected_walk);
            let StepOutcome::Suspended { token, .. } = &first.outcome else {
                return Err(TestCaseError::fail(format!("expected suspension, got {:?}", first.outcome)));
            };
            if approve {
                pipeline.approve(token).expect("approve");
                prop_assert_eq!(recorder.0.lock().unwrap_or_else(|p| p.into_inner()).len(), 1);
            } else {
                pipeline.deny(token).expect("deny");
                prop_assert!(recorder.0.lock().unwrap_or_else(|p| p.into_inner()).is_empty());
            }
        } else {
            prop_assert_eq!(ran.len(), 1, "an allowed action runs exactly once");
            prop_assert!(matches!(first.outcome, StepOutcome::Ran { .. }), "{:?}", first.outcome);
            // The last-mile walk is the trace reported; it visits every gate, in order.
            prop_assert_eq!(walked, expected_walk);
            if let Some(name) = last_modifier {
                prop_assert_eq!(&ran[0].args["modified_by"], &json!(name));
            }
        }
        prop_assert_eq!(pipeline.journal().verify().expect("read"), Ok(pipeline.journal().records(None).expect("read").len()));
    }
}

/// A gate that passes the first time it is asked and rejects after: the last-mile verify must
/// catch what changed between Reason and Act.
struct Fickle(std::sync::atomic::AtomicU32);

impl GateCheck for Fickle {
    fn name(&self) -> &str {
        "fickle"
    }
    fn version(&self) -> &str {
        "0.0.0"
    }
    fn priority(&self) -> i32 {
        0
    }
    fn check(
        &self,
        _action: &wit::Action,
        _signal: &wit::SignalView,
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
    let pipeline = Pipeline::new(
        Vec::new(),
        Journal::in_memory().expect("journal"),
        PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_actuator("rec", Box::new(recorder.clone()))
    .with_gate(Arc::new(Fickle(std::sync::atomic::AtomicU32::new(0))));
    let signal = Signal::request(
        json!({ "target": "rec", "text": "hello" }),
        Default::default(),
    );
    let report = pipeline.run(signal);
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

#[test]
fn an_expired_approval_cannot_be_used() {
    let recorder = Recorder::default();
    let config = PipelineConfig {
        approval_expiry: std::time::Duration::ZERO,
        ..PipelineConfig::default()
    };
    let pipeline = Pipeline::new(Vec::new(), Journal::in_memory().expect("journal"), config)
        .expect("pipeline")
        .with_actuator("rec", Box::new(recorder.clone()))
        .with_gate(Arc::new(FakeGate {
            name: "ask".into(),
            priority: 0,
            verdict: V::Approve,
        }));
    let signal = Signal::request(
        json!({ "target": "rec", "text": "hello" }),
        Default::default(),
    );
    let report = pipeline.run(signal);
    let StepOutcome::Suspended { token, .. } = &report.steps[0].outcome else {
        panic!("suspended")
    };
    std::thread::sleep(std::time::Duration::from_millis(5));
    let err = pipeline.approve(token).expect_err("expired");
    assert!(err.to_string().contains("expired"), "{err}");
    assert!(
        recorder
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    );
}
