//! Verify (the seed's cognitive-verify): every gate, highest priority first. The first reject
//! stops the walk; a modify is what later gates see; an approval request is remembered and the
//! walk goes on. A gate that fails (trap, fuel, deadline, memory) rejects: fail closed. Every
//! gate that ran is in the trace, in order, with its verdict, reason and time.

use std::time::Instant;

use crate::runtime::types as wit;
use crate::runtime::{Kind, Plugin, PluginError};
use crate::signal::{Action, GateRecord, GateTrace, Signal, TraceVerdict};

/// Anything that can act as a gate. The runtime's [`Plugin`] is the real one; unit tests may
/// stand in another at this boundary.
pub trait GateCheck: Send + Sync {
    /// The gate's name.
    fn name(&self) -> &str;
    /// The gate's version.
    fn version(&self) -> &str;
    /// Higher runs first.
    fn priority(&self) -> i32;
    /// The verdict on `action`.
    ///
    /// # Errors
    /// Any failure of the gate; the walk counts it as a rejection.
    fn check(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
    ) -> Result<wit::Verdict, PluginError>;
}

impl GateCheck for Plugin {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn version(&self) -> &str {
        &self.id.version
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn check(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
    ) -> Result<wit::Verdict, PluginError> {
        Plugin::check(self, action, signal)
    }
}

/// What the gates decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every gate passed: run this (possibly modified) action.
    Passed(Action),
    /// A gate refused.
    Rejected {
        /// The gate.
        gate: String,
        /// Its reason.
        reason: String,
    },
    /// No gate refused, but at least one wants a person's approval of this action.
    NeedsApproval {
        /// The action as it stood after the last gate.
        action: Action,
        /// `gate: reason`, one per gate that asked.
        reasons: Vec<String>,
    },
}

/// The outcome and the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Verification {
    /// What was decided.
    pub outcome: Outcome,
    /// Every gate that ran, in order.
    pub trace: GateTrace,
}

/// The gate plugins among `plugins`, in the order verify walks them: priority, highest first;
/// equal priorities by name, so the order never depends on load order.
pub fn ordered<'a>(plugins: impl IntoIterator<Item = &'a Plugin>) -> Vec<&'a dyn GateCheck> {
    let mut gates: Vec<&dyn GateCheck> = plugins
        .into_iter()
        .filter(|p| p.is(Kind::Gate))
        .map(|p| p as &dyn GateCheck)
        .collect();
    sort(&mut gates);
    gates
}

/// Sort gates into walk order.
pub fn sort(gates: &mut [&dyn GateCheck]) {
    gates.sort_by(|a, b| {
        b.priority()
            .cmp(&a.priority())
            .then_with(|| a.name().cmp(b.name()))
    });
}

/// Walk `gates` (already in order) over `action`.
pub fn verify(gates: &[&dyn GateCheck], action: &Action, signal: &Signal) -> Verification {
    let view = signal.view();
    let mut current = action.clone();
    let mut approvals = Vec::new();
    let mut trace = Vec::with_capacity(gates.len());
    for gate in gates {
        let start = Instant::now();
        let result = gate.check(&current.to_wit(), &view);
        let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let record = |verdict, reason: Option<String>| GateRecord {
            gate: gate.name().to_owned(),
            version: gate.version().to_owned(),
            priority: gate.priority(),
            verdict,
            reason,
            micros,
        };
        // A rejection, a failed gate or a malformed modification stops the walk (fail closed).
        let blocked = match result {
            Ok(wit::Verdict::Pass) => {
                trace.push(record(TraceVerdict::Pass, None));
                None
            }
            Ok(wit::Verdict::Modify(new)) => match Action::from_wit(&new) {
                Ok(mut new) => {
                    // The model's call id survives a gate's rewrite.
                    new.call_id = current.call_id.take();
                    trace.push(record(TraceVerdict::Modify, None));
                    current = new;
                    None
                }
                Err(why) => Some((
                    TraceVerdict::Error,
                    format!(
                        "gate {} returned a malformed modification: {why}",
                        gate.name()
                    ),
                )),
            },
            Ok(wit::Verdict::RequireApproval(reason)) => {
                approvals.push(format!("{}: {reason}", gate.name()));
                trace.push(record(TraceVerdict::RequireApproval, Some(reason)));
                None
            }
            Ok(wit::Verdict::Reject(reason)) => Some((TraceVerdict::Reject, reason)),
            Err(e) => Some((
                TraceVerdict::Error,
                format!("the gate failed, so the action is refused: {e}"),
            )),
        };
        if let Some((verdict, reason)) = blocked {
            trace.push(record(verdict, Some(reason.clone())));
            return Verification {
                outcome: Outcome::Rejected {
                    gate: gate.name().into(),
                    reason,
                },
                trace,
            };
        }
    }
    let outcome = if approvals.is_empty() {
        Outcome::Passed(current)
    } else {
        Outcome::NeedsApproval {
            action: current,
            reasons: approvals,
        }
    };
    Verification { outcome, trace }
}
