//! Act: suspend what needs approval, verify once more what is about to run (last mile),
//! dispatch to the actuator, and turn the result into feedback for the loop.

use serde_json::json;

use super::actuators::{ActError, format_result};
use super::cycle::Cycle;
use super::error::PipelineError;
use super::provider::ToolTurn;
use super::reason::{Conversation, Reasoned};
use super::{Agent, Step, StepOutcome};
use crate::approvals::{Approvals, Pending};
use crate::gates::Outcome;
use crate::signal::{Action, GateTrace, Payload, Signal, SignalType, Told};

impl Agent {
    /// Check that `action` can be performed as written: its arguments nest at most
    /// [`crate::signal::MAX_ARGS_NESTING`] deep, its target has an actuator, and that actuator
    /// accepts it (a known tool, arguments matching its schema). Runs nothing.
    ///
    /// # Errors
    /// [`ActError::Invalid`]: what is wrong, naming the field or the target.
    pub fn validate(&self, action: &Action) -> Result<(), ActError> {
        let nesting = action.args_nesting();
        if nesting > crate::signal::MAX_ARGS_NESTING {
            return Err(ActError::Invalid(format!(
                "its arguments nest {nesting} levels deep, more than the {} an action may: \
                 flatten them",
                crate::signal::MAX_ARGS_NESTING
            )));
        }
        let Some(actuator) = self.actuators.get(&action.target) else {
            let known: Vec<&str> = self.actuators.keys().map(String::as_str).collect();
            return Err(ActError::Invalid(format!(
                "target {:?} has no actuator; known targets: {}",
                action.target,
                known.join(", ")
            )));
        };
        actuator.validate(action)
    }

    /// The Act stage for what Reason decided about `signal`. Returns the step and the feedback
    /// signal, if any; what the cycle can undo goes into `cycle`.
    ///
    /// # Errors
    /// The approvals database failed.
    pub async fn act(
        &self,
        signal: &Signal,
        reasoned: Reasoned,
        cycle: &mut Cycle,
    ) -> Result<(Step, Option<Signal>), PipelineError> {
        let step = |proposal: Option<Action>, trace: GateTrace, outcome| Step {
            depth: signal.depth,
            sensor: signal.payload.sensor.clone(),
            proposal,
            trace,
            outcome,
        };
        // What Reason journaled is on disk before the source hears anything or a person is
        // asked; an approved action's records wait for its last mile (see `execute`).
        // Nothing is told or asked on records that are not on disk.
        if !matches!(reasoned, Reasoned::Approved { .. })
            && let Err(e) = self.flush(cycle).await
        {
            let (proposal, trace) = match reasoned {
                Reasoned::Nothing => (None, Vec::new()),
                Reasoned::Invalid { action, .. } => (Some(action), Vec::new()),
                Reasoned::Rejected { action, trace, .. }
                | Reasoned::NeedsApproval { action, trace, .. }
                | Reasoned::Approved { action, trace, .. } => (Some(action), trace),
            };
            return Ok((step(proposal, trace, unrecorded(&e)), None));
        }
        match reasoned {
            Reasoned::Nothing => Ok((step(None, Vec::new(), StepOutcome::Nothing), None)),
            Reasoned::Invalid { action, reason } => {
                self.tell_source(signal, &format!("cannot do that: {reason}"), Told::Invalid)
                    .await;
                Ok((
                    step(Some(action), Vec::new(), StepOutcome::Invalid { reason }),
                    None,
                ))
            }
            Reasoned::Rejected {
                action,
                gate,
                reason,
                attempts,
                trace,
            } => {
                self.tell_source(
                    signal,
                    &format!("rejected by gate {gate}: {reason}"),
                    Told::Rejected,
                )
                .await;
                Ok((
                    step(
                        Some(action),
                        trace,
                        StepOutcome::Rejected {
                            gate,
                            reason,
                            attempts,
                        },
                    ),
                    None,
                ))
            }
            Reasoned::NeedsApproval {
                action,
                reasons,
                trace,
            } => {
                let outcome = self.suspend(&action, signal, reasons).await?;
                Ok((step(Some(action), trace, outcome), None))
            }
            Reasoned::Approved {
                action,
                trace,
                memo,
            } => {
                let (outcome, last_mile, feedback) = self
                    .execute(action.clone(), signal, None, Some(&memo), cycle)
                    .await?;
                let trace = if last_mile.is_empty() {
                    trace
                } else {
                    last_mile
                };
                Ok((step(Some(action), trace, outcome), feedback))
            }
        }
    }

    async fn suspend(
        &self,
        action: &Action,
        signal: &Signal,
        reasons: Vec<String>,
    ) -> Result<StepOutcome, PipelineError> {
        let pending = crate::blocking::in_place(|| {
            Approvals::new(&self.journal)?
                .within(self.config.reply_frame)
                .suspend(
                    action,
                    signal,
                    reasons.clone(),
                    self.identity_of(action),
                    self.config.approval_expiry,
                )
        })?;
        self.tell_source(
            signal,
            &format!(
                "approval needed ({}): run `passepartout approve {}` or `passepartout deny {}`",
                reasons.join("; "),
                pending.token,
                pending.token
            ),
            Told::Suspended,
        )
        .await;
        Ok(StepOutcome::Suspended {
            token: pending.token,
            reasons,
        })
    }

    /// The seed's undo snapshot: before a tool that is not read-only, record the memory root
    /// (one row), so that a failing cycle (or a person) can roll back to it.
    fn undo_snapshot(&self, action: &Action) -> Option<crate::memory::Snapshot> {
        let (Some(memory), Some(tool)) = (&self.memory, &action.tool) else {
            return None;
        };
        if action.target != "tool" || self.tool_is_read_only(tool) {
            return None;
        }
        match crate::blocking::in_place(|| memory.undo_point(&format!("before tool {tool}"))) {
            Ok(snap) => {
                self.record(
                    "memory-snapshot",
                    json!({ "seq": snap.seq, "root": snap.root, "reason": snap.reason }),
                );
                Some(snap)
            }
            Err(e) => {
                tracing::error!("undo snapshot before {tool} failed: {e}");
                None
            }
        }
    }

    /// The identity of the tool `action` calls, if it calls a loaded one.
    pub(super) fn identity_of(
        &self,
        action: &Action,
    ) -> Option<crate::runtime::effects::ToolIdentity> {
        action
            .tool
            .as_deref()
            .filter(|_| action.target == "tool")
            .and_then(|t| self.catalog().identity(t))
    }

    /// Whether the tool named `tool` cannot change the world: it says it changes nothing, and
    /// its plugin's grants let it change nothing ([`crate::runtime::Grants::can_change_the_world`]).
    fn tool_cannot_change_the_world(&self, tool: &str) -> bool {
        self.plugins.iter().any(|p| {
            !p.grants.can_change_the_world()
                && p.tools.iter().any(|t| t.name == tool && t.read_only)
        })
    }

    /// Whether the tool named `tool` says it changes nothing (unknown tools are not).
    fn tool_is_read_only(&self, tool: &str) -> bool {
        self.plugins
            .iter()
            .flat_map(|p| p.tools.iter())
            .find(|t| t.name == tool)
            .is_some_and(|t| t.read_only)
    }

    /// Verify `action` one last time and run it. `approved`: a person approved it already,
    /// having been asked these questions, so the gates asking them again is satisfied; a gate
    /// asking anything else (one added by a reload, say) suspends it again with the new
    /// question, and a rejection still stops it.
    ///
    /// A reload that replaced this agent reaches the action: it is verified and run by the
    /// newest agent (the plugin set, gates and tools in force now), not by the gates that
    /// were in force when the turn began. The check is made again after the last mile, just
    /// before the actuator, so a reload during the walk sends it round once more.
    pub(crate) async fn execute(
        &self,
        proposed: Action,
        signal: &Signal,
        approved: Option<&Pending>,
        memo: Option<&crate::gates::Memo>,
        cycle: &mut Cycle,
    ) -> Result<(StepOutcome, GateTrace, Option<Signal>), PipelineError> {
        let mut newer = self.successor();
        loop {
            let agent = newer.as_deref().unwrap_or(self);
            // A memo marks what Reason validated on the agent it ran on: not this one.
            let memo = if newer.is_some() { None } else { memo };
            match agent
                .execute_here(proposed.clone(), signal, approved, memo, cycle)
                .await?
            {
                Some(done) => return Ok(done),
                None => newer = agent.successor(),
            }
        }
    }

    /// [`Agent::execute`] on this agent; `None` when a reload replaced it before the actuator
    /// ran (nothing ran).
    async fn execute_here(
        &self,
        proposed: Action,
        signal: &Signal,
        approved: Option<&Pending>,
        memo: Option<&crate::gates::Memo>,
        cycle: &mut Cycle,
    ) -> Result<Option<(StepOutcome, GateTrace, Option<Signal>)>, PipelineError> {
        let tap = self.tap(signal, true);
        let last_mile = crate::gates::verify_with(
            &self.gates(),
            self.catalog(),
            &proposed,
            signal,
            memo,
            tap.as_ref(),
        )
        .await;
        for g in &last_mile.trace {
            let mut record = json!(g);
            record["last_mile"] = json!(true);
            record["set"] = json!(self.plugin_set());
            cycle.defer("verdict", record);
        }
        let trace = last_mile.trace;
        // What the gates ask a person now, if anything they were not asked already.
        let (action, mut ask) = match last_mile.outcome {
            Outcome::Passed(a) => (a, None),
            Outcome::NeedsApproval { action: a, reasons }
                if approved.is_some_and(|p| reasons.iter().all(|r| p.reasons.contains(r))) =>
            {
                (a, None)
            }
            Outcome::NeedsApproval { action: a, reasons } => (a, Some(reasons)),
            Outcome::Rejected { gate, reason } => {
                if let Err(e) = self.flush(cycle).await {
                    return Ok(Some((unrecorded(&e), trace, None)));
                }
                self.log(
                    &signal.meta,
                    format!("last-mile verify: gate {gate} blocked the action: {reason}"),
                );
                self.tell_source(
                    signal,
                    &format!("rejected by gate {gate}: {reason}"),
                    Told::Rejected,
                )
                .await;
                return Ok(Some((
                    StepOutcome::Rejected {
                        gate,
                        reason,
                        attempts: 1,
                    },
                    trace,
                    None,
                )));
            }
        };
        // A person approved one action; if the gates now rewrite it, that is not what they
        // approved: ask again.
        if ask.is_none()
            && let Some(p) = approved
            && action != proposed
        {
            let mut reasons = p.reasons.clone();
            reasons.push(format!(
                "a gate changed the approved action into {}; approve the new one",
                super::reason::summary(&action)
            ));
            ask = Some(reasons);
        }
        // Reason validated this very action in this Turn, on this agent, when the memo says
        // so: a rewrite, a name that now leads to another tool (an MCP server's), an approval
        // decided later (no memo: a reload may have changed the tools) or a memo Reason did
        // not mark is validated (again). Before anyone is asked:
        // a person is never asked to approve what cannot run.
        if !memo.is_some_and(|m| m.was_validated(&action, self.identity_of(&action).as_ref()))
            && let Err(e) = self.validate(&action)
        {
            let reason = e.to_string();
            // Journaled as Reason journals it: the journal says why nothing ran.
            cycle.defer("invalid", json!({ "action": action, "reason": reason }));
            return Ok(Some((StepOutcome::Invalid { reason }, trace, None)));
        }
        if let Some(reasons) = ask {
            if let Err(e) = self.flush(cycle).await {
                return Ok(Some((unrecorded(&e), trace, None)));
            }
            let outcome = self.suspend(&action, signal, reasons).await?;
            return Ok(Some((outcome, trace, None)));
        }
        // A person approved a call of one tool; if its name now leads to another (a plugin
        // updated to another version, an MCP server's tool changed and approved again), that
        // is not what they approved: ask again, with the questions they answered.
        if let Some(p) = approved {
            let now = self.identity_of(&action);
            if !same_tool(p.tool.as_ref(), now.as_ref()) {
                let then = match &p.tool {
                    None if now.is_some() => "an approval from before tools were recorded".into(),
                    t => shown_identity(t.as_ref()),
                };
                let mut reasons = p.reasons.clone();
                let shown = shown_identity(now.as_ref());
                let recorded = p.tool.as_ref().is_some_and(|t| !t.component.is_empty());
                let why = if then == shown && !recorded {
                    format!(
                        "{shown} was approved before the daemon kept which code a tool is; \
                         approve it again"
                    )
                } else if then == shown {
                    // Same name and version, other code: rebuilt, or replaced.
                    let short = |t: Option<&crate::runtime::effects::ToolIdentity>| {
                        t.map(|t| t.component.chars().take(12).collect::<String>())
                            .filter(|c| !c.is_empty())
                            .unwrap_or_else(|| "none recorded".into())
                    };
                    format!(
                        "the tool is not the one approved: {shown}, but its code changed \
                         (sha256 {} then, {} now); approve it again",
                        short(p.tool.as_ref()),
                        short(now.as_ref())
                    )
                } else {
                    format!(
                        "the tool is not the one approved ({then} then, {shown} now); approve it again"
                    )
                };
                reasons.push(why);
                if let Err(e) = self.flush(cycle).await {
                    return Ok(Some((unrecorded(&e), trace, None)));
                }
                let outcome = self.suspend(&action, signal, reasons).await?;
                return Ok(Some((outcome, trace, None)));
            }
        }
        let Some(actuator) = self.actuators.get(&action.target) else {
            let reason = format!("no actuator for {:?}", action.target);
            return Ok(Some((StepOutcome::Invalid { reason }, trace, None)));
        };
        // Write-ahead: the proposal and every verdict are on disk before anything that may
        // change the world runs; if they cannot be written, nothing runs. A tool that cannot
        // change the world (read-only by its word, and granted nothing that writes, reaches
        // the network or runs a program) has its records and its result committed together,
        // before the result reaches anyone.
        let contained = approved.is_none()
            && action.target == "tool"
            && action
                .tool
                .as_deref()
                .is_some_and(|t| self.tool_cannot_change_the_world(t));
        if !contained && let Err(e) = self.flush(cycle).await {
            let error = format!("{e}: nothing ran");
            return Ok(Some((StepOutcome::Failed { error }, trace, None)));
        }
        // Replaced while the walk ran: the agent in force verifies it again, and runs it or
        // not; the journal says why the verdicts above did not count.
        if let Some(now) = self.successor() {
            cycle.defer(
                "superseded",
                json!({ "set": self.plugin_set(), "now": now.plugin_set(), "action": action }),
            );
            return Ok(None);
        }
        let undo = self.undo_snapshot(&action);
        let result = actuator.act(&action, signal).await;
        cycle.ran = true;
        if let (Some(snap), Some(memory)) = (undo, &self.memory) {
            cycle.undo = Some((snap, crate::blocking::in_place(|| memory.root())));
        }
        let tool = action.tool.clone().unwrap_or_else(|| action.target.clone());
        let formatted = format_result(&tool, &result);
        // The tool by identity: which plugin (and version) the name resolved to.
        let identity = self.identity_of(&action);
        let record = json!({ "target": action.target, "tool": action.tool, "plugin": identity, "ok": result.is_ok(), "result": formatted, "approval": approved.map(|p| &p.token) });
        match approved {
            // The result and the end of the approval, together: after a crash the approval is
            // either done with its result journaled, or interrupted.
            Some(p) => {
                let finish = || {
                    crate::blocking::in_place(|| {
                        Approvals::new(&self.journal)
                            .and_then(|a| a.finish(&p.token, Some(("tool-result", &record))))
                    })
                };
                // Once more after a pause (a CLI may hold the database); failing that, the
                // approval stays running, and is listed as interrupted once this process ends:
                // never done without its result journaled, and the result, not on disk, is
                // given to no one.
                let mut finished = finish();
                if finished.is_err() {
                    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    finished = finish();
                }
                if let Err(e) = finished {
                    tracing::error!(
                        "cannot write the journal (tool-result of approval {}): {e}",
                        p.token
                    );
                    let error = format!(
                        "{tool} ran, but the journal could not record its result ({e}): its \
                         result is withheld, and approval {} stays running (listed as \
                         interrupted once this process ends)",
                        p.token
                    );
                    return Ok(Some((StepOutcome::Failed { error }, trace, None)));
                }
            }
            None => {
                cycle.defer("tool-result", record);
                // A result not on disk is not given to anyone.
                if let Err(e) = self.flush(cycle).await {
                    let error = format!("{tool} ran, but {e}: its result is withheld");
                    return Ok(Some((StepOutcome::Failed { error }, trace, None)));
                }
            }
        }
        let silent = self.config.silent_actuators.contains(&action.target);
        let depth = signal.depth + 1;
        // A tool the model called: its result goes back to the model in the conversation.
        let conversation = |result: &str, is_error: bool| -> Option<Box<Conversation>> {
            let id = action.call_id.clone()?;
            let mut conv = signal
                .conversation()
                .cloned()
                .unwrap_or_else(|| Conversation {
                    origin: Box::new(signal.clone()),
                    turns: Vec::new(),
                });
            conv.turns.push(ToolTurn {
                id,
                name: tool.clone(),
                arguments: serde_json::Value::Object(action.args.clone()),
                result: result.to_owned(),
                is_error,
            });
            Some(Box::new(conv))
        };
        let feedback = |sensor: &str, fields: serde_json::Value, conversation| {
            let mut payload = Payload {
                sensor: Some(sensor.into()),
                conversation,
                ..Payload::default()
            };
            if let serde_json::Value::Object(m) = fields {
                payload.extra = m.into_iter().filter(|(_, v)| !v.is_null()).collect();
            }
            Signal {
                kind: SignalType::Event,
                payload,
                meta: signal.meta.clone(),
                depth,
            }
        };
        match result {
            Ok(output) => {
                self.log(&signal.meta, format!("{tool}: ran"));
                if action.target == "tool" {
                    self.tell_source(signal, &formatted, Told::Ran).await;
                }
                let fb = (!silent).then(|| {
                    feedback(
                        "tool-output",
                        json!({ "tool": tool, "result": output }),
                        conversation(&output, false),
                    )
                });
                Ok(Some((
                    StepOutcome::Ran {
                        target: action.target,
                        result: formatted,
                    },
                    trace,
                    fb,
                )))
            }
            Err(e) => {
                let message = e.to_string();
                self.log(&signal.meta, format!("{tool}: failed: {message}"));
                self.tell_source(signal, &formatted, Told::Failed).await;
                let fb = match e {
                    ActError::Invalid(_) => None,
                    ActError::Tool(_) | ActError::Server(_) => Some(feedback(
                        "tool-error",
                        json!({ "tool": tool, "message": message }),
                        conversation(&message, true),
                    )),
                };
                Ok(Some((StepOutcome::ToolFailed { tool, message }, trace, fb)))
            }
        }
    }

    /// Send `text` to the client the signal came from, when it has an actuator (and is not
    /// the tool actuator itself).
    async fn tell_source(&self, signal: &Signal, text: &str, told: Told) {
        let Some(source) = signal.meta.source.as_deref() else {
            return;
        };
        if source == "tool" {
            return;
        }
        if let Some(actuator) = self.actuators.get(source) {
            let _ = actuator
                .tell(
                    &Action {
                        target: source.into(),
                        text: Some(text.into()),
                        ..Action::default()
                    },
                    signal,
                    told,
                )
                .await;
        }
    }

    /// A person approves the suspended (or interrupted) action `token`: it runs (after the
    /// last-mile verify; a rejection still stops it), and its feedback goes round the loop.
    /// `shown`: the digest of the action the person was shown (see [`crate::approvals`]);
    /// `by`: who decided, journaled with the decision.
    ///
    /// # Errors
    /// An unknown, already decided or expired token, or an action that is not the one shown.
    pub async fn approve(
        &self,
        token: &str,
        shown: Option<&str>,
        by: Option<&str>,
    ) -> Result<super::Report, PipelineError> {
        let approvals = crate::blocking::in_place(|| Approvals::new(&self.journal))?;
        let pending = crate::blocking::in_place(|| approvals.decide(token, true, shown, by))
            .map_err(decision_error)?;
        // No memo: time has passed since the gates saw it; they are all asked again.
        // An approved action runs outside any loop: nothing rolls it back.
        let mut cycle = Cycle::default();
        let executed = self
            .execute(
                pending.action.clone(),
                &pending.signal,
                Some(&pending),
                None,
                &mut cycle,
            )
            .await;
        if let Err(e) = self.flush(&mut cycle).await {
            tracing::error!("the journal lost the end of approval {token}'s last mile: {e}");
        }
        // Rejected at the last mile, suspended again, or failed before it ran: no longer
        // running either. (An action that ran was finished with its result, above, or left
        // running when its result could not be recorded.)
        if !cycle.ran
            && let Err(e) = crate::blocking::in_place(|| approvals.finish(token, None))
        {
            tracing::error!("cannot mark approval {token} finished: {e}");
        }
        // Its undo point is no use (nothing rolls an approved action back), and held while the
        // feedback runs it would keep every other cycle's undo from knowing its own writes.
        drop(cycle);
        let (outcome, trace, feedback) = executed?;
        let mut report = super::Report {
            steps: vec![Step {
                depth: pending.signal.depth,
                sensor: Some("approval".into()),
                proposal: Some(pending.action),
                trace,
                outcome,
            }],
            focus: None,
        };
        if let Some(fb) = feedback {
            report.steps.extend(self.run(fb).await.steps);
        }
        Ok(report)
    }

    /// A person denies the suspended action `token`: it is dropped, and the decision journaled
    /// (with `by`, who decided).
    ///
    /// # Errors
    /// An unknown, already decided or expired token.
    pub async fn deny(
        &self,
        token: &str,
        shown: Option<&str>,
        by: Option<&str>,
    ) -> Result<Action, PipelineError> {
        let pending = crate::blocking::in_place(|| {
            Approvals::new(&self.journal)?
                .decide(token, false, shown, by)
                .map_err(decision_error)
        })?;
        self.tell_source(
            &pending.signal,
            "denied: the action was dropped",
            Told::Denied,
        )
        .await;
        Ok(pending.action)
    }
}

/// Whether two identities name the same tool: plugin, version and the tool's own name (what
/// it declares may change with the operator's policy; the tool is the same).
fn same_tool(
    a: Option<&crate::runtime::effects::ToolIdentity>,
    b: Option<&crate::runtime::effects::ToolIdentity>,
) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.plugin == b.plugin
                && a.version == b.version
                && a.tool == b.tool
                && a.component == b.component
        }
        (None, None) => true,
        _ => false,
    }
}

/// A tool's identity as a person reads it: `plugin version / tool`.
fn shown_identity(tool: Option<&crate::runtime::effects::ToolIdentity>) -> String {
    tool.map_or_else(
        || "no loaded tool".into(),
        |t| format!("{} {} / {}", t.plugin, t.version, t.tool),
    )
}

/// A decision the person cannot make as asked (no such token, expired, not the action shown)
/// is a bad request; anything else (the database) is the pipeline's failure.
fn decision_error(e: crate::approvals::ApprovalError) -> PipelineError {
    use crate::approvals::ApprovalError as A;
    match e {
        A::Unknown(_) | A::Expired(_) | A::Changed { .. } | A::MayBeRunning(_) => {
            PipelineError::Protocol {
                message: e.to_string(),
                raw_message: None,
            }
        }
        other => PipelineError::Approvals(other),
    }
}

/// The outcome of a step whose records the journal refused: nothing is told or asked on them
/// (docs/cli.md: what a cycle leaves is committed before the source hears of it or a person
/// is asked).
fn unrecorded(e: &super::JournalWriteError) -> StepOutcome {
    StepOutcome::Failed {
        error: format!("{e}: no one was told or asked"),
    }
}
