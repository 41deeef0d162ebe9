//! The requests a client may send ([`Request`], docs/protocol.md), run on the pipeline, and
//! their typed replies.

use serde::Serialize;

use super::reload::Swap;
pub use super::request::{Op, Request};
use crate::pipeline::{Agent, Answer, Origin, Report, Turn};
use crate::signal::{Action, Meta};

/// What a connection proved in its handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The client key: ask, act, status, reload, ping.
    Client,
    /// The approver key as well: also approvals, approve, deny and the approval events.
    Approver,
}

/// The hello's capabilities for `role`: the ops it may send, and `events`.
pub fn capabilities(role: Role) -> Vec<&'static str> {
    Op::allowed(role).map(Op::name).chain(["events"]).collect()
}

/// A request's result, one shape per op (the `result` of a reply frame).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum Reply {
    /// `act`, `ask` and `approve`: every step of the run (`{"steps": [...]}`).
    Report(Report),
    /// `deny`: the action dropped.
    Dropped {
        /// The action.
        dropped: Action,
    },
    /// `approvals`: the actions waiting.
    Approvals(Vec<crate::approvals::Pending>),
    /// `status`.
    Status(Box<Status>),
    /// `reload`.
    Reloaded(super::reload::Reloaded),
    /// `ping`: `"pong"`.
    Pong(&'static str),
    /// `tools`: every tool offered, as the model is offered it.
    Tools(Vec<crate::pipeline::ToolSchema>),
}

impl Reply {
    /// The gate traces to send as events before the reply: one per verified step.
    pub fn traces(&self) -> Vec<crate::signal::GateTrace> {
        match self {
            Reply::Report(report) => report
                .steps
                .iter()
                .filter(|s| !s.trace.is_empty())
                .map(|s| s.trace.clone())
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// One plugin in `status`.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct PluginStatus {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Its roles (`gate`, `tool`, `skill`).
    #[serde(default)]
    pub kinds: Vec<crate::runtime::Kind>,
    /// What its tool and skill calls get, one line per grant ([`crate::runtime::Grants::lines`]).
    #[serde(default)]
    pub grants: Vec<String>,
    /// Its limits in one line ([`crate::runtime::Limits::summary`]).
    #[serde(default)]
    pub limits: String,
    /// Its calls, failures, time and fuel so far, and its last error.
    pub telemetry: crate::runtime::plugin::TelemetrySnapshot,
}

/// What `status` answers. A client reads what it knows of it: a field a daemon of another
/// version does not send is its default.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Status {
    /// `loading`, `healthy`, `degraded` (the last reload failed) or `unhealthy` (a gate the
    /// policy requires is missing).
    pub health: String,
    /// Seconds since start.
    pub uptime_secs: u64,
    /// Authenticated clients connected now.
    pub connections: usize,
    /// Connection tasks held.
    pub connection_tasks: usize,
    /// Connections still in their handshake.
    pub handshaking: usize,
    /// Bytes waiting to be sent to clients.
    pub outgoing_bytes: usize,
    /// The plugins loaded.
    pub plugins: Vec<PluginStatus>,
    /// The running plugin set's hash.
    pub plugin_set: String,
    /// Gates the policy requires that did not load.
    pub missing_gates: Vec<String>,
    /// Reload counters and the last error.
    pub reload: super::reload::ReloadStatus,
    /// Actions waiting for a person.
    pub pending_approvals: usize,
    /// Each model provider and its circuit breaker.
    #[serde(default)]
    pub providers: Vec<crate::providers::breaker::ProviderHealth>,
    /// Each MCP server of gateway mode: running or restarting, its restarts, its last error,
    /// the tools it offers.
    #[serde(default)]
    pub mcp_servers: Vec<crate::gateway::ServerStatus>,
    /// What is wrong with `policy.toml`'s effect mappings of those servers' tools (a tool
    /// whose mapping does not fit is not offered).
    #[serde(default)]
    pub mcp_problems: Vec<String>,
    /// The names of the tools offered now (plugins' and MCP servers'), hashed: it changes when
    /// a reload or an operator's approval changes them.
    #[serde(default)]
    pub tools_set: String,
    /// The plugins that did not load: disabled, or failed, and why.
    #[serde(default)]
    pub not_loaded: Vec<crate::pipeline::NotLoaded>,
    /// What was spent against the model's budgets (none without a model).
    #[serde(default)]
    pub spend: Option<crate::providers::budget::SpendStatus>,
}

impl Status {
    /// The status as a client-key connection may see it: without what one client's calls
    /// left behind for another to read (each plugin's last error, which quotes a call's
    /// arguments; why a model provider is left alone, which may quote the start of its error
    /// answer to another client's call) and without this machine's paths and files (grants,
    /// why a plugin did not load, why the last reload failed, the last words an MCP server
    /// wrote to its stderr). That something failed still shows.
    pub fn for_role(mut self, role: Role) -> Status {
        if role == Role::Approver {
            return self;
        }
        const WITHHELD: &str = "(told to the approver key only)";
        for p in &mut self.plugins {
            p.telemetry.last_error = None;
            p.grants.clear();
        }
        for n in &mut self.not_loaded {
            n.why = WITHHELD.into();
        }
        let withhold = |e: &mut Option<String>| {
            if e.is_some() {
                *e = Some(WITHHELD.into());
            }
        };
        withhold(&mut self.reload.last_error);
        for m in &mut self.mcp_servers {
            withhold(&mut m.last_error);
        }
        for p in &mut self.providers {
            withhold(&mut p.why);
        }
        self
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

/// Why a request got no result, as its error frame's `kind` says: the request's own fault
/// (`request`: an unknown token, a changed approval), or a failure inside the daemon
/// (`failed`: its database, a reload that did not load).
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// The request cannot be done as asked.
    Request(String),
    /// The daemon failed doing it.
    Failed(String),
    /// Refused over one field of the request (an `ask`'s `focus`): the error frame names it
    /// as `field`, so that a client can tell without reading the message.
    Field {
        /// The field's name in the request.
        field: &'static str,
        /// The refusal itself.
        refused: Box<Refused>,
    },
}

impl Refused {
    /// The error frame's `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            Refused::Request(_) => "request",
            Refused::Failed(_) => "failed",
            Refused::Field { refused, .. } => refused.kind(),
        }
    }

    /// What to tell the client.
    pub fn message(&self) -> &str {
        match self {
            Refused::Request(m) | Refused::Failed(m) => m,
            Refused::Field { refused, .. } => refused.message(),
        }
    }

    /// The request's field it is about, if one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Refused::Field { field, .. } => Some(field),
            _ => None,
        }
    }

    /// This refusal, about `field`.
    pub fn about(self, field: &'static str) -> Refused {
        Refused::Field {
            field,
            refused: Box::new(self),
        }
    }
}

/// Run one request on the pipeline. The role was checked when the request was parsed
/// ([`Request::parse`]).
///
/// # Errors
/// What was refused and why, for the client.
pub async fn handle(
    pipeline: &Agent,
    swap: &std::sync::Arc<Swap>,
    request: Request,
    meta: &Meta,
    facts: Facts,
) -> Result<Reply, Refused> {
    let answer = async |origin| {
        pipeline
            .take(Turn::new(origin, meta.clone()))
            .await
            .map(|a| match a {
                Answer::Report(report) => Reply::Report(report),
                Answer::Denied(dropped) => Reply::Dropped { dropped },
            })
            .map_err(refused)
    };
    match request {
        Request::Ping => Ok(Reply::Pong("pong")),
        // Not the stand-in's empty list while the plugins load: a client would keep it.
        Request::Tools if !swap.ready() => Err(Refused::Failed(
            "the daemon is still loading its plugins; ask again in a moment".into(),
        )),
        Request::Tools => Ok(Reply::Tools(pipeline.tool_schemas())),
        // A reload compiles and loads plugins, and waits for any reload under way: on a thread
        // of its own (like `Server::reload`), one at a time, never holding an async worker.
        Request::Reload => swap
            .reload_off_thread("requested by a client", false)
            .await
            .map(Reply::Reloaded)
            // The wire carries the message.
            .map_err(|e| Refused::Failed(e.to_string())),
        Request::Act { action } => answer(Origin::Act(action)).await,
        Request::Ask { text, focus: None } => answer(Origin::Ask(text)).await,
        Request::Ask {
            text,
            focus: Some(id),
        } => {
            let focus = super::focus::resolve(pipeline, meta, &id).await?;
            let meta = Meta {
                focus: Some(id),
                ..meta.clone()
            };
            let report = pipeline
                .take(Turn::new(Origin::Ask(text), meta))
                .await
                .map_err(refused)?;
            Ok(match report {
                Answer::Report(mut report) => {
                    report.focus = Some(focus);
                    Reply::Report(report)
                }
                Answer::Denied(dropped) => Reply::Dropped { dropped },
            })
        }
        Request::Approve { token, digest } => {
            answer(Origin::Approve {
                token,
                digest: Some(digest),
            })
            .await
        }
        Request::Deny { token, digest } => {
            answer(Origin::Deny {
                token,
                digest: Some(digest),
            })
            .await
        }
        Request::Approvals => crate::blocking::in_place(|| {
            crate::approvals::Approvals::new(pipeline.journal()).and_then(|a| a.pending())
        })
        .map(Reply::Approvals)
        .map_err(|e| Refused::Failed(e.to_string())),
        Request::Status => Ok(Reply::Status(Box::new(crate::blocking::in_place(|| {
            status(pipeline, swap, facts, Some(meta.client.as_deref()))
        })))),
        // The connection follows a subscription itself (`events`): it never gets here.
        Request::Subscribe { .. } => Err(Refused::Request(
            "`subscribe` is answered with events, on the connection that sent it".into(),
        )),
    }
}

impl Refused {
    /// The refusal of `op` as a connection that proved `role` may read it: why a reload
    /// failed quotes this machine's files (paths, the line of a policy or config file that
    /// does not parse, and what is written on it), which `status` tells the approver key only.
    pub fn for_role(self, op: Op, role: Role) -> Refused {
        match self {
            Refused::Failed(_) if op == Op::Reload && role == Role::Client => Refused::Failed(
                "the reload failed and the plugins that were running still run; why is told to \
                 the approver key only (`passepartout status`)"
                    .into(),
            ),
            other => other,
        }
    }
}

/// A pipeline's failure as the client is told it: its request's fault, or the daemon's.
fn refused(e: crate::pipeline::PipelineError) -> Refused {
    match e {
        crate::pipeline::PipelineError::Protocol { .. } => Refused::Request(e.to_string()),
        other => Refused::Failed(other.to_string()),
    }
}

/// What `status` answers, now; with the tokens `session` spent when `Some` (a client's own
/// `status`, not the `health` events every follower shares).
pub(super) fn status(
    pipeline: &Agent,
    swap: &Swap,
    facts: Facts,
    session: Option<Option<&str>>,
) -> Status {
    let pending_approvals = crate::approvals::Approvals::new(pipeline.journal())
        .and_then(|a| a.count())
        .unwrap_or(0);
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
    Status {
        health: health.to_owned(),
        uptime_secs: facts.uptime_secs,
        connections: facts.connections,
        connection_tasks: facts.connection_tasks,
        handshaking: facts.handshaking,
        outgoing_bytes: facts.outgoing_bytes,
        plugins: pipeline
            .plugins()
            .iter()
            .map(|p| PluginStatus {
                name: p.id.name.clone(),
                version: p.id.version.clone(),
                kinds: p.manifest.kinds.clone(),
                grants: p.grants.lines(),
                limits: p.limits.summary(&p.manifest.kinds),
                telemetry: p.telemetry.snapshot(),
            })
            .collect(),
        plugin_set: pipeline.plugin_set().to_owned(),
        missing_gates: pipeline.missing_gates().to_vec(),
        reload,
        pending_approvals,
        providers: pipeline.provider_health(),
        mcp_servers: pipeline
            .mcp_servers()
            .into_iter()
            .map(crate::gateway::ServerStatus::summary)
            .collect(),
        mcp_problems: pipeline.mcp_problems(),
        tools_set: pipeline.tools_set(),
        spend: pipeline.spend(session),
        not_loaded: pipeline.not_loaded().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_key_is_told_that_something_failed_but_not_what_it_said() {
        let mut status = Status::default();
        status.reload.last_error = Some("policy.toml line 3: /home/me/plans".into());
        status.mcp_servers.push(crate::gateway::ServerStatus {
            name: "git".into(),
            last_error: Some("exited; its stderr: token=abc".into()),
            ..Default::default()
        });
        status
            .providers
            .push(crate::providers::breaker::ProviderHealth {
                provider: "claude".into(),
                state: "open".into(),
                retry_in_secs: Some(30),
                why: Some("HTTP 500: {\"prompt\": \"alice's secret\"}".into()),
            });
        let client = status.clone().for_role(Role::Client);
        let told = serde_json::to_string(&client).expect("json");
        assert!(
            !told.contains("/home/me") && !told.contains("token=abc") && !told.contains("alice"),
            "{told}"
        );
        // That they failed still shows (`health` says degraded for the same reason).
        assert!(client.reload.last_error.is_some());
        assert!(client.mcp_servers[0].last_error.is_some());
        assert_eq!(client.providers[0].state, "open");
        assert!(client.providers[0].why.is_some());
        let approver = serde_json::to_string(&status.for_role(Role::Approver)).expect("json");
        assert!(
            approver.contains("/home/me")
                && approver.contains("token=abc")
                && approver.contains("alice"),
            "{approver}"
        );
    }
}
