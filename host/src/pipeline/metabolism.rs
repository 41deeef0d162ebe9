//! The loop: Perceive → Reason → Act, again with the feedback, until there is none, the depth
//! limit is passed or an interrupt arrives; a failed cycle is recovered as seed 002 says.

use std::sync::atomic::Ordering;

use serde_json::json;

use super::cycle::Cycle;
use super::error::{PipelineError, Recovery};
use super::{Agent, Report, Step, StepOutcome};
use crate::signal::{Payload, Signal, SignalType};

impl Agent {
    /// Perceive: normalise a raw signal (sensor names lowercase, `_` as `-`).
    pub fn perceive(&self, mut signal: Signal) -> Signal {
        if let Some(s) = &mut signal.payload.sensor {
            *s = crate::signal::normal_sensor(s);
        }
        signal
    }

    /// Run `signal` and all the feedback it produces through the pipeline. Each round runs
    /// on the newest agent: after a reload, the rest of the turn is reasoned and verified
    /// under the plugin set now in force, never the one the turn began with.
    pub async fn run(&self, signal: Signal) -> Report {
        let mut report = Report::default();
        let mut current = Some(signal);
        let mut newer: Option<std::sync::Arc<Agent>> = None;
        while let Some(signal) = current.take() {
            if let Some(next) = newer.as_deref().unwrap_or(self).successor() {
                newer = Some(next);
            }
            let agent = newer.as_deref().unwrap_or(self);
            let dropped = |why: &str| Step {
                depth: signal.depth,
                sensor: signal.payload.sensor.clone(),
                proposal: None,
                trace: Vec::new(),
                outcome: StepOutcome::Dropped { why: why.into() },
            };
            if signal.depth > agent.config.max_depth {
                agent.log(
                    &signal.meta,
                    format!(
                        "metabolism: depth {} is past the limit of {}; dropped",
                        signal.depth, agent.config.max_depth
                    ),
                );
                report.steps.push(dropped(&format!(
                    "past the depth limit: {} rounds of feedback (tool calls, most often) without \
                     an answer; raise [pipeline] max_depth in passepartout.toml if this was meant",
                    agent.config.max_depth
                )));
                break;
            }
            if agent.interrupt.load(Ordering::Relaxed) {
                report.steps.push(dropped("interrupted"));
                break;
            }
            let signal = agent.perceive(signal);
            let mut state = Cycle::default();
            let cycle = match agent.reason(&signal, &mut state).await {
                Ok(reasoned) => agent.act(&signal, reasoned, &mut state).await,
                Err(e) => Err(e),
            };
            match cycle {
                Ok((step, feedback)) => {
                    // What is left is what no one was told of before it was written (the last
                    // mile's verdicts, an invalid rewrite): nothing ran on it.
                    if let Err(e) = agent.flush(&mut state).await {
                        tracing::error!("the journal lost the end of a cycle: {e}");
                    }
                    report.steps.push(step);
                    current = feedback;
                }
                Err(e) => {
                    state.defer("error", json!({ "error": e.to_string(), "depth": signal.depth, "sensor": signal.payload.sensor }));
                    if let Err(j) = agent.flush(&mut state).await {
                        tracing::error!("the journal lost the record of a failed cycle ({e}): {j}");
                    }
                    report.steps.push(Step {
                        depth: signal.depth,
                        sensor: signal.payload.sensor.clone(),
                        proposal: None,
                        trace: Vec::new(),
                        outcome: StepOutcome::Failed {
                            error: e.to_string(),
                        },
                    });
                    agent.rollback_after(&signal, state);
                    match agent.recover(&signal, &e) {
                        Some(next) => current = Some(next),
                        None if agent.config.recovery == Recovery::Abort => break,
                        None => {}
                    }
                }
            }
        }
        report
    }

    /// The seed's micro-rollback: a cycle that failed after an undo snapshot puts memory back
    /// (not for loop-error and tool-error signals, as in the seed), but only when what it
    /// would undo is this cycle's tool's alone.
    fn rollback_after(&self, signal: &Signal, cycle: Cycle) {
        if matches!(signal.sensor(), Some("loop-error" | "tool-error")) {
            return;
        }
        let Some((snap, left)) = cycle.undo else {
            return;
        };
        let Some(memory) = &self.memory else { return };
        // Checked and moved in one transaction: the root must still be the one the tool left,
        // and no write since the undo point may be anyone else's (another session's tool, an
        // auto-save, the CLI); moving the root back would throw those away too.
        match crate::blocking::in_place(|| memory.restore_if(&snap, &left)) {
            Ok(true) => {
                self.log(
                    &signal.meta,
                    format!("memory rolled back to snapshot #{}", snap.seq),
                );
                self.record(
                    "memory-rollback",
                    json!({ "seq": snap.seq, "root": snap.root }),
                );
            }
            Ok(false) => self.log(
                &signal.meta,
                format!(
                    "memory not rolled back to snapshot #{}: more than this cycle's tool wrote \
                     it since (another session, an ingest or the CLI); `passepartout memory \
                     rollback {}` undoes the tool's writes by hand, and theirs with them",
                    snap.seq, snap.seq
                ),
            ),
            Err(e) => tracing::error!("memory rollback to #{} failed: {e}", snap.seq),
        }
    }

    /// The seed's recovery: a failure at depth ≤ 2 that is not itself a loop-error or
    /// tool-error comes back as a loop-error event one level deeper; others are dropped.
    fn recover(&self, signal: &Signal, error: &PipelineError) -> Option<Signal> {
        self.log(&signal.meta, format!("metabolism: {error}"));
        let message = match &self.config.recovery {
            Recovery::Skip | Recovery::Abort => return None,
            Recovery::Fallback(text) => text.clone(),
            Recovery::Reinject => error.to_string(),
        };
        let terminal = matches!(signal.sensor(), Some("loop-error" | "tool-error"));
        if terminal || signal.depth > 2 {
            return None;
        }
        let mut payload = Payload {
            sensor: Some("loop-error".into()),
            text: Some(message.clone()),
            ..Payload::default()
        };
        payload.extra.insert("message".into(), json!(message));
        payload.extra.insert("depth".into(), json!(signal.depth));
        Some(Signal {
            kind: SignalType::Event,
            payload,
            meta: signal.meta.clone(),
            depth: signal.depth + 1,
        })
    }
}
