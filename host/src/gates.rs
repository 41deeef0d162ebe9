//! Verify (the seed's cognitive-verify): every gate, highest priority first. The first reject
//! stops the walk; an approval request is remembered and the walk goes on. A modify that changes
//! the action starts the walk again from the first gate with the new action (at most
//! [`MAX_ROUNDS`] rounds), so the action that runs is one every gate passed as it is: a gate
//! below another can never change what the one above approved. A gate that fails (trap, fuel,
//! deadline, memory) rejects: fail closed. Every gate that ran is in the trace, in order, with
//! its round, verdict, reason and time.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::runtime::effects::{ActionContext, Catalog};
use crate::runtime::types as wit;
use crate::runtime::{Plugin, PluginError};
use crate::signal::{Action, GateRecord, GateTrace, Signal, TraceVerdict};

/// Anything that can act as a gate. The runtime's [`Plugin`] is the real one; unit tests may
/// stand in another at this boundary.
#[async_trait::async_trait]
pub trait GateCheck: Send + Sync {
    /// The gate's name.
    fn name(&self) -> &str;
    /// The gate's version.
    fn version(&self) -> &str;
    /// Higher runs first.
    fn priority(&self) -> i32;
    /// What a remembered pass is keyed by besides the question ([`Memo`]): the same text only
    /// for the same code with the same configuration. By default the name and version; a
    /// plugin adds its component's sha256 and its effective config.
    fn identity(&self) -> String {
        format!("{}@{}", self.name(), self.version())
    }
    /// Whether the gate answers the same question the same way within one turn, so that a
    /// pass can be reused ([`Memo`]). A plugin gate is, and says so: each call is a fresh
    /// instance with no state, no files, no network and an empty environment. Not by default,
    /// so that a gate with state of its own is never memoised by omission.
    fn pure(&self) -> bool {
        false
    }
    /// Whether this gate is asked about `action`: every gate is asked about every action, but
    /// a tool's own gate (the `guarded-tool-plugin` world) only about actions naming one of its
    /// plugin's tools. Decided again for each round, so an action a gate rewrites into one
    /// naming another tool meets the gates that apply to that one.
    fn applies_to(&self, action: &Action) -> bool {
        let _ = action;
        true
    }
    /// The verdict on `action`, whose tool and effects are `context`.
    ///
    /// # Errors
    /// Any failure of the gate; the walk counts it as a rejection.
    async fn check(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<wit::Verdict, PluginError>;
    /// As [`GateCheck::check`], with the fuel the call used when the gate is metered (a
    /// plugin's is; a stand-in's is not).
    async fn check_fueled(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
        context: &Arc<ActionContext>,
    ) -> (Result<wit::Verdict, PluginError>, Option<u64>) {
        (self.check(action, signal, context).await, None)
    }
}

#[async_trait::async_trait]
impl GateCheck for Plugin {
    fn name(&self) -> &str {
        &self.id.name
    }
    /// A fresh instance per call, holding nothing that could change its answer.
    fn pure(&self) -> bool {
        true
    }
    fn version(&self) -> &str {
        &self.id.version
    }
    fn priority(&self) -> i32 {
        self.priority
    }
    fn identity(&self) -> String {
        format!(
            "{}@{}\0{}\0{}",
            self.id.name, self.id.version, self.sha256, self.config
        )
    }
    fn applies_to(&self, action: &Action) -> bool {
        !self.is(crate::runtime::Kind::Tool)
            || (action.target == "tool"
                && action
                    .tool
                    .as_deref()
                    .is_some_and(|t| self.tools.iter().any(|info| info.name == t)))
    }
    async fn check(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<wit::Verdict, PluginError> {
        Plugin::check_in_async(self, action, signal, context).await
    }
    async fn check_fueled(
        &self,
        action: &wit::Action,
        signal: &wit::SignalView,
        context: &Arc<ActionContext>,
    ) -> (Result<wit::Verdict, PluginError>, Option<u64>) {
        match Plugin::check_in_metered_async(self, action, signal, context).await {
            Ok((verdict, fuel)) => (Ok(verdict), Some(fuel)),
            Err(e) => (Err(e), None),
        }
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

/// The order verify walks gates in: priority, highest first; equal priorities by name, so the
/// order never depends on load order.
pub fn walk_order(a: &dyn GateCheck, b: &dyn GateCheck) -> std::cmp::Ordering {
    b.priority()
        .cmp(&a.priority())
        .then_with(|| a.name().cmp(b.name()))
}

/// The passes already given in one turn, by gate (its code and effective config,
/// [`GateCheck::identity`]), exact action and signal: a gate asked the
/// same question twice in a turn (the walk, then the last mile just before the action runs)
/// answers once, and the last mile costs nothing when no gate rewrote the action. A gate that
/// saw another action (one a gate below it rewrote), a changed plugin set (a new [`Memo`] per
/// turn, on the set the turn runs on), or an approval decided later (verified without a memo)
/// is asked again. Only passes are kept: anything else stops the action and is never reused.
/// It also holds the action Reason found valid in this turn (only the pipeline can mark one),
/// with the identity of the tool it named then, so that the last mile checks it against its
/// actuator again only when it changed, or when its name now leads to another tool (an MCP
/// server's tool re-pinned with another schema while the turn ran).
#[derive(Debug, Default)]
pub struct Memo(
    Mutex<HashSet<(String, String)>>,
    Mutex<Option<Box<Validated>>>,
);

/// An action found valid, and the tool it named then.
type Validated = (Action, Option<crate::runtime::effects::ToolIdentity>);

impl Clone for Memo {
    fn clone(&self) -> Memo {
        Memo(
            Mutex::new(self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()),
            Mutex::new(self.1.lock().unwrap_or_else(|p| p.into_inner()).clone()),
        )
    }
}

impl PartialEq for Memo {
    fn eq(&self, other: &Memo) -> bool {
        std::ptr::eq(self, other)
            || *self.0.lock().unwrap_or_else(|p| p.into_inner())
                == *other.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Memo {
    /// Note that `action`, naming the tool `tool`, was validated against its actuator in this
    /// turn.
    pub(crate) fn validated(
        &self,
        action: &Action,
        tool: Option<crate::runtime::effects::ToolIdentity>,
    ) {
        *self.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new((action.clone(), tool)));
    }

    /// Whether `action`, exactly, was validated in this turn while its name led to `tool`.
    pub(crate) fn was_validated(
        &self,
        action: &Action,
        tool: Option<&crate::runtime::effects::ToolIdentity>,
    ) -> bool {
        self.1
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|v| v.0 == *action && v.1.as_ref() == tool)
    }

    /// What `gate` is asked about `subject` ([`Memo::subject`]).
    fn key(gate: &dyn GateCheck, subject: &str) -> (String, String) {
        (gate.identity(), subject.to_owned())
    }

    /// The exact action, the signal's `view` (as text) and what the gates are told of the
    /// action's tool and effects, once per walk: the same for every gate of it. The context is
    /// in the key because an MCP server's tools can change while a turn runs.
    fn subject(action: &Action, view: &str, context: &ActionContext) -> String {
        format!(
            "{}\0{view}\0{}",
            serde_json::to_string(action).unwrap_or_default(),
            serde_json::to_string(context).unwrap_or_default()
        )
    }

    fn passed(&self, key: &(String, String)) -> bool {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(key)
    }

    fn remember(&self, key: (String, String)) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(key);
    }
}

/// How many rounds a walk may take: a gate that rewrites the action starts a new round, so a set
/// of gates that settles after three rewrites is fine; one that keeps rewriting is refused.
pub const MAX_ROUNDS: u32 = 4;

/// Walk `gates` (already in order) over `action`; each gate learns the action's tool and
/// effects from `catalog`.
///
/// The invariant: the action in [`Outcome::Passed`] or [`Outcome::NeedsApproval`] is exactly
/// the one every gate saw and passed (or asked approval for) in the final round. A `modify` that
/// changes the action restarts the walk from the first gate with the new action, so a gate can
/// never change what a gate above it approved; a `modify` that returns the action unchanged is a
/// pass. Only the final round's verdicts decide. A gate set still rewriting after
/// [`MAX_ROUNDS`] rounds is a rejection naming the gates that rewrote.
pub async fn verify(
    gates: &[&dyn GateCheck],
    catalog: &Catalog,
    action: &Action,
    signal: &Signal,
) -> Verification {
    verify_with(gates, catalog, action, signal, None, None).await
}

/// [`verify`], answering from `memo` what a gate already passed in this turn (such a gate is
/// not asked again and is not in the trace) and remembering the new passes; each verdict also
/// goes to `tap` as it is made.
pub async fn verify_with(
    gates: &[&dyn GateCheck],
    catalog: &Catalog,
    action: &Action,
    signal: &Signal,
    memo: Option<&Memo>,
    tap: Option<&Tap>,
) -> Verification {
    let view = signal.view();
    let memo = memo.map(|m| (m, format!("{view:?}")));
    let mut current = action.clone();
    let mut trace = Vec::with_capacity(gates.len());
    let mut rewriters: Vec<String> = Vec::new();
    for round in 1..=MAX_ROUNDS {
        match walk(
            gates,
            catalog,
            &mut current,
            &view,
            round,
            &mut trace,
            (memo.as_ref(), tap),
        )
        .await
        {
            Walk::Settled(approvals) => {
                let outcome = if approvals.is_empty() {
                    Outcome::Passed(current)
                } else {
                    Outcome::NeedsApproval {
                        action: current,
                        reasons: approvals,
                    }
                };
                return Verification { outcome, trace };
            }
            Walk::Rewritten(gate) => {
                if !rewriters.contains(&gate) {
                    rewriters.push(gate);
                }
            }
            Walk::Blocked { gate, reason } => {
                return Verification {
                    outcome: Outcome::Rejected { gate, reason },
                    trace,
                };
            }
        }
    }
    let gate = rewriters.last().cloned().unwrap_or_default();
    let reason = format!(
        "the gates kept rewriting the action: {} still changed it after {MAX_ROUNDS} rounds, so \
         no action settled that every gate passed; fix or disable the gate(s) that rewrite",
        rewriters.join(", ")
    );
    Verification {
        outcome: Outcome::Rejected { gate, reason },
        trace,
    }
}

/// One gate's verdict as a walk makes it, for those following walks live (the daemon's
/// `traces` subscription, docs/protocol.md).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LiveVerdict {
    /// The connection the request came on ([`crate::signal::Meta::client`]).
    #[serde(default)]
    pub client: Option<String>,
    /// The request ([`crate::signal::Meta::session`]).
    #[serde(default)]
    pub session: Option<String>,
    /// The action under check, as a person reads it.
    pub action: String,
    /// Whether it is the last-mile walk (the one just before the action runs).
    pub last_mile: bool,
    /// The verdict.
    pub record: GateRecord,
    /// The action as the gate rewrote it, as a person reads it (a `modify` verdict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewritten: Option<String>,
}

/// Where a walk sends each verdict as it makes it.
#[derive(Clone, Debug)]
pub struct Tap {
    /// Those following.
    pub sender: tokio::sync::broadcast::Sender<LiveVerdict>,
    /// The request's connection.
    pub client: Option<String>,
    /// The request.
    pub session: Option<String>,
    /// Whether it taps the last-mile walk.
    pub last_mile: bool,
}

impl Tap {
    fn send(&self, action: &Action, record: &GateRecord, rewritten: Option<&Action>) {
        // Nobody follows: not even the summary is made.
        if self.sender.receiver_count() == 0 {
            return;
        }
        // Bounded, whatever the action's names and the gate's reason hold.
        let cap = |s: &str, n: usize| s.chars().take(n).collect::<String>();
        let mut record = record.clone();
        record.reason = record.reason.map(|r| cap(&r, 2000));
        let _ = self.sender.send(LiveVerdict {
            client: self.client.clone(),
            session: self.session.clone(),
            action: cap(&crate::pipeline::reason::summary(action), 400),
            last_mile: self.last_mile,
            record,
            rewritten: rewritten.map(|new| cap(&rewrite_summary(action, new), 400)),
        });
    }
}

/// What a gate's rewrite of `old` into `new` looks like to a person: `new`'s summary; a
/// reply's text is never shown before every gate passed it, so a changed text is counted.
fn rewrite_summary(old: &Action, new: &Action) -> String {
    let summary = crate::pipeline::reason::summary(new);
    match (&old.text, &new.text) {
        (Some(a), Some(b)) if a != b && summary == crate::pipeline::reason::summary(old) => {
            format!(
                "{summary}, its text rewritten ({} → {} characters)",
                a.chars().count(),
                b.chars().count()
            )
        }
        _ => summary,
    }
}

/// Keep `record` in `trace`, and send it to `tap` (it was made on `action`).
fn note(trace: &mut GateTrace, tap: Option<&Tap>, action: &Action, record: GateRecord) {
    if let Some(t) = tap {
        t.send(action, &record, None);
    }
    trace.push(record);
}

/// How one round ended.
enum Walk {
    /// Every gate saw `current` and let it through; these asked for approval.
    Settled(Vec<String>),
    /// This gate changed the action: `current` is the new one, walk again.
    Rewritten(String),
    /// A gate refused, failed, or returned a malformed modification.
    Blocked { gate: String, reason: String },
}

/// One round: every gate in order over `current`, until one blocks or rewrites it.
async fn walk(
    gates: &[&dyn GateCheck],
    catalog: &Catalog,
    current: &mut Action,
    view: &wit::SignalView,
    round: u32,
    trace: &mut GateTrace,
    (memo, tap): (Option<&(&Memo, String)>, Option<&Tap>),
) -> Walk {
    let mut approvals = Vec::new();
    let proposed = current.to_wit();
    let context = Arc::new(catalog.context(current));
    let memo = memo.map(|(m, view)| (*m, Memo::subject(current, view, &context)));
    for gate in gates {
        if !gate.applies_to(current) {
            continue;
        }
        let key = memo
            .as_ref()
            .filter(|_| gate.pure())
            .map(|(m, subject)| (*m, Memo::key(*gate, subject)));
        if key.as_ref().is_some_and(|(m, k)| m.passed(k)) {
            continue;
        }
        let start = Instant::now();
        let (result, fuel) = gate.check_fueled(&proposed, view, &context).await;
        let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let record = |verdict, reason: Option<String>| GateRecord {
            gate: gate.name().to_owned(),
            version: gate.version().to_owned(),
            priority: gate.priority(),
            round,
            verdict,
            reason,
            micros,
            fuel,
        };
        // A rejection, a failed gate or a malformed modification stops the walk (fail closed).
        let (verdict, reason) = match result {
            Ok(wit::Verdict::Pass) => {
                note(trace, tap, current, record(TraceVerdict::Pass, None));
                if let Some((m, k)) = key {
                    m.remember(k);
                }
                continue;
            }
            Ok(wit::Verdict::Modify(new)) => match Action::from_wit(&new) {
                Ok(mut new) => {
                    // The model's call id survives a gate's rewrite.
                    new.call_id = current.call_id.clone();
                    if new == *current {
                        // Rewritten into itself: a pass, remembered as one.
                        note(trace, tap, current, record(TraceVerdict::Pass, None));
                        if let Some((m, k)) = key {
                            m.remember(k);
                        }
                        continue;
                    }
                    if gate.applies_to(&new) {
                        let record = record(TraceVerdict::Modify, None);
                        if let Some(t) = tap {
                            t.send(current, &record, Some(&new));
                        }
                        trace.push(record);
                        *current = new;
                        return Walk::Rewritten(gate.name().to_owned());
                    }
                    // A tool's own gate judges its tool's calls: it may not turn one into
                    // something else (another plugin's tool, a shell command, a reply).
                    (
                        TraceVerdict::Reject,
                        format!(
                            "gate {} may rewrite only calls of its own plugin's tools, and \
                             rewrote this one into {}",
                            gate.name(),
                            new.tool.as_deref().map_or_else(
                                || format!("a `{}` action", new.target),
                                |t| format!("a call of `{t}`")
                            )
                        ),
                    )
                }
                Err(why) => (
                    TraceVerdict::Error,
                    format!(
                        "gate {} returned a malformed modification: {why}",
                        gate.name()
                    ),
                ),
            },
            Ok(wit::Verdict::RequireApproval(reason)) => {
                approvals.push(format!("{}: {reason}", gate.name()));
                note(
                    trace,
                    tap,
                    current,
                    record(TraceVerdict::RequireApproval, Some(reason)),
                );
                continue;
            }
            Ok(wit::Verdict::Reject(reason)) => (TraceVerdict::Reject, reason),
            Err(e) => (
                TraceVerdict::Error,
                format!(
                    "the gate failed, so the action is refused: {}",
                    crate::runtime::chain(&e)
                ),
            ),
        };
        note(trace, tap, current, record(verdict, Some(reason.clone())));
        return Walk::Blocked {
            gate: gate.name().to_owned(),
            reason,
        };
    }
    Walk::Settled(approvals)
}

/// A gate that did not load, standing in its place at the head of every walk: it fails every
/// check, so nothing passes while a gate is missing (fail closed), and the trace and the
/// rejection name it and why.
#[derive(Debug)]
pub struct Unloaded {
    id: crate::runtime::PluginId,
    why: String,
}

impl Unloaded {
    /// The stand-in for `missing`.
    pub fn new(missing: &crate::runtime::loader::MissingGate) -> Unloaded {
        Unloaded {
            id: crate::runtime::PluginId {
                name: missing.name.clone(),
                version: missing.version.clone().unwrap_or_else(|| "?".into()),
            },
            why: missing.why.clone(),
        }
    }
}

#[async_trait::async_trait]
impl GateCheck for Unloaded {
    fn name(&self) -> &str {
        &self.id.name
    }
    fn version(&self) -> &str {
        &self.id.version
    }
    fn priority(&self) -> i32 {
        i32::MAX
    }
    async fn check(
        &self,
        _action: &wit::Action,
        _signal: &wit::SignalView,
        _context: &Arc<ActionContext>,
    ) -> Result<wit::Verdict, PluginError> {
        Err(PluginError::Missing {
            plugin: self.id.clone(),
            why: self.why.clone(),
        })
    }
}
