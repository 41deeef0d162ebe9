//! `passepartout verify | act | approvals | approve | deny`: the pipeline without a daemon.

use std::process::ExitCode;

use passepartout::agent::{Agent, Loaded};
use passepartout::gates::Outcome;
use passepartout::journal::Journal;
use passepartout::pipeline::actuators::Outbox;
use passepartout::pipeline::{Answer, Origin, PipelineError, Report, StepOutcome, Turn};
use passepartout::signal::{Action, Meta, Signal};
use serde_json::json;

use super::Common;

use super::exit::{APPROVAL, BAD_INPUT, OK as PASSED, REJECTED, Whose};

/// The agent of a one-shot command ([`passepartout::agent`]): its replies print through
/// `outbox`.
fn pipeline(
    loaded: Loaded,
    journal: Journal,
    outbox: &Outbox,
    common: &Common,
) -> anyhow::Result<Agent> {
    let cascade = common.places().cascade(&loaded.settings)?;
    Ok(loaded.assemble(
        journal,
        Some(Box::new(cascade)),
        vec![("cli", outbox.actuator("cli"))],
    )?)
}

/// The report of a turn that runs (act, ask, approve): they never answer with a denial.
fn report_of(answer: Answer) -> anyhow::Result<Report> {
    match answer {
        Answer::Report(report) => Ok(report),
        Answer::Denied(_) => {
            anyhow::bail!("internal error: the agent answered this request with a denial")
        }
    }
}

/// A request the agent refused: bad input when it was the request (an unknown token, an
/// expired or changed approval), a failure otherwise (the database).
fn refused(e: &PipelineError) -> anyhow::Result<ExitCode> {
    errln!("passepartout: {e}");
    Ok(ExitCode::from(match e {
        PipelineError::Protocol { .. } => BAD_INPUT,
        _ => super::exit::FAILED,
    }))
}

fn bad_input(message: &str, journal: Option<&Journal>, raw: &str) -> anyhow::Result<ExitCode> {
    if let Some(j) = journal {
        j.append("attempt", &json!({ "error": message, "input": raw }))?;
    }
    errln!("passepartout: {message}");
    Ok(ExitCode::from(BAD_INPUT))
}

/// Whom a one-shot command's turn comes from: the command line.
fn cli() -> Meta {
    Meta {
        via: Some("passepartout-cli".into()),
        ..Meta::from_source("cli")
    }
}

/// Take `origin` as a turn of the command line.
fn take(agent: &Agent, origin: Origin) -> Result<Answer, PipelineError> {
    agent.take_blocking(Turn::new(origin, cli()))
}

pub fn verify(loaded: Loaded, raw: &str, json_out: bool) -> anyhow::Result<ExitCode> {
    let mut action = match Action::from_json(raw) {
        Ok(a) => a,
        Err(e) => return bad_input(&e.to_string(), None, raw),
    };
    let outbox = Outbox::new();
    // A dry run: the journal is thrown away, and no model is asked.
    let pipeline = loaded.assemble(
        Journal::in_memory()?,
        None,
        vec![("cli", outbox.actuator("cli"))],
    )?;
    action.resolve_target(Some("cli"), &pipeline.config().default_actuator);
    pipeline.catalog().complete(&mut action);
    let v = passepartout::blocking::wait(
        pipeline.verify(&action, &Signal::request(action.clone(), cli())),
    );
    let (verdict, code, detail) = match &v.outcome {
        Outcome::Passed(_) => ("passed", PASSED, json!(null)),
        Outcome::Rejected { gate, reason } => (
            "rejected",
            REJECTED,
            json!({ "gate": gate, "reason": reason }),
        ),
        Outcome::NeedsApproval { reasons, .. } => ("approval_required", APPROVAL, json!(reasons)),
    };
    if json_out {
        let action = match &v.outcome {
            Outcome::Passed(a) | Outcome::NeedsApproval { action: a, .. } => a,
            Outcome::Rejected { .. } => &action,
        };
        outln!(
            "{}",
            serde_json::to_string_pretty(
                &json!({ "verdict": verdict, "detail": detail, "action": action, "trace": v.trace })
            )?
        );
    } else {
        for g in &v.trace {
            let reason = g
                .reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            // A rewrite starts another round: show which round each verdict came from.
            let round = if v.trace.iter().any(|t| t.round > 1) {
                format!("round {} ", g.round)
            } else {
                String::new()
            };
            outln!(
                "  {round}{:<16} {:<16} {:>6} us{reason}",
                g.gate,
                g.verdict.name(),
                g.micros
            );
        }
        outln!(
            "{verdict}{}",
            if detail.is_null() {
                String::new()
            } else {
                format!(": {detail}")
            }
        );
    }
    Ok(ExitCode::from(code))
}

fn print_report(report: &Report, outbox: &Outbox, json_out: bool) -> anyhow::Result<ExitCode> {
    let code = super::exit::of(report.steps.iter().map(|s| &s.outcome), Whose::Direct);
    if json_out {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "steps": report.steps, "sent": outbox.sent() }))?
        );
        return Ok(ExitCode::from(code));
    }
    for step in &report.steps {
        for g in &step.trace {
            let reason = g
                .reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            errln!("  gate {:<16} {:<16}{reason}", g.gate, g.verdict.name());
        }
        match &step.outcome {
            StepOutcome::Ran { result, .. } => outln!("{result}"),
            StepOutcome::ToolFailed { message, .. } => errln!("error: {message}"),
            StepOutcome::Rejected { gate, reason, .. } => errln!("rejected by {gate}: {reason}"),
            StepOutcome::Suspended { token, reasons } => {
                outln!("approval required ({}). Token: {token}", reasons.join("; "));
                outln!("  passepartout approve {token}    or    passepartout deny {token}");
            }
            StepOutcome::Failed { error } => errln!("error: {error}"),
            StepOutcome::Invalid { reason } => errln!("cannot do that: {reason}"),
            StepOutcome::Dropped { why } => errln!("stopped: {why}"),
            StepOutcome::Nothing => {}
        }
    }
    Ok(ExitCode::from(code))
}

pub fn act(loaded: Loaded, common: &Common, raw: &str, json_out: bool) -> anyhow::Result<ExitCode> {
    let journal = common.places().journal()?;
    let action = match Action::from_json(raw) {
        Ok(a) => a,
        Err(e) => return bad_input(&e.to_string(), Some(&journal), raw),
    };
    let outbox = Outbox::new();
    let pipeline = pipeline(loaded, journal, &outbox, common)?;
    let report = report_of(take(&pipeline, Origin::Act(action))?)?;
    print_report(&report, &outbox, json_out)
}

pub fn approvals(loaded: Loaded, common: &Common, json_out: bool) -> anyhow::Result<ExitCode> {
    drop(loaded);
    let journal = common.places().journal()?;
    let pending = passepartout::approvals::Approvals::new(&journal)?.pending()?;
    if json_out {
        outln!("{}", serde_json::to_string_pretty(&pending)?);
    } else if pending.is_empty() {
        outln!("no action is waiting for approval");
    } else {
        for p in pending {
            let state = match p.state.as_str() {
                "interrupted" => {
                    "INTERRUPTED (approved, but the daemon stopped before it finished: approve again to run it again, or deny)  "
                }
                "running" => {
                    "RUNNING? (approved, and running in a process no one can name: it may still be running; it is never run again: deny it to clear it)  "
                }
                _ => "",
            };
            // A gate's reason on one line: a reason of several lines could push the digest
            // down and print a fake one.
            outln!(
                "{}  {state}{}  ({})  digest {}",
                p.token,
                serde_json::to_string(&p.action)?,
                passepartout::terminal::one_line(&p.reasons.join("; ")),
                p.digest
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The digest `op` on `token` is bound to: `digest` when given, else the pending action's,
/// once it is shown (and, at a terminal, confirmed), as through the daemon.
fn bound_digest(
    op: &str,
    journal: &Journal,
    token: &str,
    digest: Option<&str>,
) -> anyhow::Result<Result<String, ExitCode>> {
    if let Some(d) = digest {
        return Ok(Ok(d.to_owned()));
    }
    let pending = passepartout::approvals::Approvals::new(journal)?
        .pending()?
        .into_iter()
        .find(|p| p.token == token);
    super::daemon::shown_and_confirmed(op, token, pending)
}

pub fn approve(
    loaded: Loaded,
    common: &Common,
    token: &str,
    digest: Option<&str>,
    json_out: bool,
) -> anyhow::Result<ExitCode> {
    let journal = common.places().journal()?;
    let digest = match bound_digest("approve", &journal, token, digest)? {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let outbox = Outbox::new();
    let pipeline = pipeline(loaded, journal, &outbox, common)?;
    let origin = Origin::Approve {
        token: token.to_owned(),
        digest: Some(digest),
    };
    match take(&pipeline, origin) {
        Ok(answer) => print_report(&report_of(answer)?, &outbox, json_out),
        Err(e) => refused(&e),
    }
}

pub fn deny(
    loaded: Loaded,
    common: &Common,
    token: &str,
    digest: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let journal = common.places().journal()?;
    let digest = match bound_digest("deny", &journal, token, digest)? {
        Ok(d) => d,
        Err(code) => return Ok(code),
    };
    let outbox = Outbox::new();
    let pipeline = pipeline(loaded, journal, &outbox, common)?;
    let origin = Origin::Deny {
        token: token.to_owned(),
        digest: Some(digest),
    };
    match take(&pipeline, origin) {
        Ok(Answer::Report(_)) => {
            anyhow::bail!("internal error: the agent answered a denial with a report")
        }
        Ok(Answer::Denied(action)) => {
            outln!("denied; dropped {}", serde_json::to_string(&action)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => refused(&e),
    }
}

/// The first line of `text`, at most `max` characters, with `…` when anything was left out.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    let cut: String = line.chars().take(max).collect();
    if cut.len() < text.trim_end().len() {
        format!("{cut}…")
    } else {
        cut
    }
}

pub fn ask(
    loaded: Loaded,
    common: &Common,
    text: &str,
    json_out: bool,
) -> anyhow::Result<ExitCode> {
    let outbox = Outbox::new();
    let pipeline = pipeline(loaded, common.places().journal()?, &outbox, common)?;
    let report = report_of(take(&pipeline, Origin::Ask(text.to_owned()))?)?;
    if json_out {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "steps": report.steps, "sent": outbox.sent() }))?
        );
    } else {
        // The answer on stdout; what happened on the way (each tool the model called, with the
        // start of its output) on stderr, in order.
        for step in &report.steps {
            match &step.outcome {
                StepOutcome::Ran { target, result } if target == "tool" => {
                    let tool = step
                        .proposal
                        .as_ref()
                        .and_then(|a| a.tool.as_deref())
                        .unwrap_or("a tool");
                    errln!("  ran {tool}: {}", first_line(result, 100));
                }
                StepOutcome::Ran { result, .. } => outln!("{result}"),
                StepOutcome::ToolFailed { message, .. } => errln!("  {message}"),
                StepOutcome::Failed { error } => errln!("error: {error}"),
                StepOutcome::Invalid { reason } => errln!("cannot do that: {reason}"),
                StepOutcome::Rejected { gate, reason, .. } => {
                    errln!("rejected by {gate}: {reason}");
                }
                StepOutcome::Suspended { token, reasons } => {
                    errln!("approval required ({}). Token: {token}", reasons.join("; "));
                }
                StepOutcome::Dropped { why } => errln!("stopped: {why}"),
                _ => {}
            }
        }
    }
    Ok(ExitCode::from(super::exit::of(
        report.steps.iter().map(|s| &s.outcome),
        Whose::Model,
    )))
}
