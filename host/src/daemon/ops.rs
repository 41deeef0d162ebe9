//! The requests a client may send (docs/protocol.md), run on the pipeline, and who may send
//! which: deciding approvals needs the approver key.

use serde::Serialize;
use serde_json::{Value, json};

use super::reload::Swap;
use crate::pipeline::{Pipeline, Report};
use crate::signal::{Action, Meta, Signal};

/// What a connection proved in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The client key: ask, act, status, reload, ping.
    Client,
    /// The approver key as well: also approvals, approve, deny and the approval events.
    Approver,
}

/// Every op, and whether it needs the approver key.
const OPS: &[(&str, bool)] = &[
    ("act", false),
    ("ask", false),
    ("status", false),
    ("reload", false),
    ("ping", false),
    ("approvals", true),
    ("approve", true),
    ("deny", true),
];

/// The hello's capabilities for `role`: the ops it may send, and `events`.
pub fn capabilities(role: Role) -> Vec<&'static str> {
    OPS.iter()
        .filter(|(_, approver)| !approver || role == Role::Approver)
        .map(|(op, _)| *op)
        .chain(["events"])
        .collect()
}

fn report_result(report: &Report) -> (Value, Vec<Value>) {
    let traces = report
        .steps
        .iter()
        .filter(|s| !s.trace.is_empty())
        .map(|s| json!(s.trace))
        .collect();
    (json!({ "steps": report.steps }), traces)
}

fn client_meta(session: &str) -> Meta {
    Meta {
        source: Some("client".into()),
        session: Some(session.into()),
    }
}

/// What `status` tells of the daemon itself.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    /// Seconds since start.
    pub uptime_secs: u64,
    /// Authenticated clients connected now.
    pub connections: usize,
    /// Connection tasks held (see `Server::tasks_held`).
    pub connection_tasks: usize,
    /// Connections still in their handshake.
    pub handshaking: usize,
    /// Bytes waiting to be sent to clients, all together.
    pub outgoing_bytes: usize,
}

/// Run one request on the pipeline. `Ok((result, gate traces))` or the error for the client.
pub fn handle(
    pipeline: &Pipeline,
    swap: &Swap,
    message: &Value,
    session: &str,
    role: Role,
    facts: Facts,
) -> Result<(Value, Vec<Value>), String> {
    let op = message["op"].as_str().unwrap_or_default();
    if role == Role::Client && OPS.iter().any(|(o, approver)| *o == op && *approver) {
        return Err(format!(
            "`{op}` needs the approver key: this connection proved only the client key. Approvals are decided by the operator's own `passepartout approve` (it reads {}), not by the agent's tools",
            super::keys::keys_dir().map_or_else(
                || "the keys directory".into(),
                |d| d.join("approver.key").display().to_string()
            )
        ));
    }
    let field = |name: &str| {
        message[name]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("`{op}` needs a string field `{name}`"))
    };
    match op {
        "ping" => Ok((json!("pong"), Vec::new())),
        "reload" => swap
            .reload_if_changed("requested by a client")
            .map(|r| (json!(r), Vec::new())),
        "act" => {
            let action: Action = serde_json::from_value(message["action"].clone())
                .map_err(|e| format!("`action` is not a valid action: {e}"))?;
            let report = pipeline.run(Signal::request(json!(action), client_meta(session)));
            Ok(report_result(&report))
        }
        "ask" => {
            let text = field("text")?;
            let mut signal = Signal::event("user-input", Some(&text), None);
            signal.meta = client_meta(session);
            Ok(report_result(&pipeline.run(signal)))
        }
        "approve" => pipeline
            .approve(&field("token")?, Some(&field("digest")?))
            .map(|r| report_result(&r))
            .map_err(|e| e.to_string()),
        "deny" => pipeline
            .deny(&field("token")?, Some(&field("digest")?))
            .map(|a| (json!({ "dropped": a }), Vec::new()))
            .map_err(|e| e.to_string()),
        "approvals" => {
            let approvals =
                crate::approvals::Approvals::new(pipeline.journal()).map_err(|e| e.to_string())?;
            approvals
                .pending()
                .map(|p| (json!(p), Vec::new()))
                .map_err(|e| e.to_string())
        }
        "status" => {
            let pending = crate::approvals::Approvals::new(pipeline.journal())
                .and_then(|a| a.pending())
                .map(|p| p.len())
                .unwrap_or(0);
            let plugins: Vec<Value> = pipeline
                .plugins()
                .iter()
                .map(|p| json!({ "name": p.id.name, "version": p.id.version, "telemetry": p.telemetry.snapshot() }))
                .collect();
            let reload = swap.status();
            let health = if !swap.ready() {
                "loading"
            } else if !pipeline.missing_gates().is_empty() {
                "unhealthy"
            } else if reload.last_error.is_some() {
                "degraded"
            } else {
                "healthy"
            };
            Ok((
                json!({
                    "health": health,
                    "uptime_secs": facts.uptime_secs,
                    "connections": facts.connections,
                    "connection_tasks": facts.connection_tasks,
                    "handshaking": facts.handshaking,
                    "outgoing_bytes": facts.outgoing_bytes,
                    "plugins": plugins,
                    "plugin_set": pipeline.plugin_set(),
                    "missing_gates": pipeline.missing_gates(),
                    "reload": reload,
                    "pending_approvals": pending
                }),
                Vec::new(),
            ))
        }
        other => Err(format!(
            "unknown op {other:?}: use one of {}",
            capabilities(role)
                .iter()
                .filter(|c| **c != "events")
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
