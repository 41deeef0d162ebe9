//! What a client asks and what it gets back, as typed values (docs/protocol.md): a request frame
//! is parsed into a [`Request`] once, at the connection; the server runs it, the client and the
//! CLI build it, and a direct action travels typed from here to the tool. [`Op`] is the one list
//! of operations: the hello's capabilities, the role check and the error text all read it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ops::Role;
use crate::signal::{Action, GateTrace};

/// Every operation a client may ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Run an action through the gates (never the model).
    Act,
    /// Send text to the model as user input.
    Ask,
    /// The daemon's health, plugins and counters.
    Status,
    /// Reload the plugins and policy if they changed.
    Reload,
    /// Liveness.
    Ping,
    /// The actions waiting for a person (approver key).
    Approvals,
    /// Run a waiting action (approver key).
    Approve,
    /// Drop a waiting action (approver key).
    Deny,
    /// The tools offered, with their schemas (what the model is offered; MCP's `tools/list`).
    Tools,
    /// Follow the daemon: events until the connection closes ([`Topic`]).
    Subscribe,
}

impl Op {
    /// Every op, in the order the hello lists them.
    pub const ALL: [Op; 10] = [
        Op::Act,
        Op::Ask,
        Op::Status,
        Op::Reload,
        Op::Ping,
        Op::Approvals,
        Op::Approve,
        Op::Deny,
        Op::Tools,
        Op::Subscribe,
    ];

    /// Its name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Op::Act => "act",
            Op::Ask => "ask",
            Op::Status => "status",
            Op::Reload => "reload",
            Op::Ping => "ping",
            Op::Approvals => "approvals",
            Op::Approve => "approve",
            Op::Deny => "deny",
            Op::Tools => "tools",
            Op::Subscribe => "subscribe",
        }
    }

    /// The op called `name`, if there is one.
    pub fn named(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether only a connection that proved the approver key may send it.
    pub fn needs_approver(self) -> bool {
        matches!(self, Op::Approvals | Op::Approve | Op::Deny)
    }

    /// The ops `role` may send.
    pub fn allowed(role: Role) -> impl Iterator<Item = Op> {
        Op::ALL
            .into_iter()
            .filter(move |op| !op.needs_approver() || role == Role::Approver)
    }
}

/// One request, as a client sends it (`{"type": "request", "id": …, "op": …, …}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Request {
    /// Run `action` through every gate, then its actuator.
    Act {
        /// The action, exactly as the gates will see it.
        action: Action,
    },
    /// Send `text` to the model as user input.
    Ask {
        /// What the user said.
        text: String,
        /// The memory headline (its `ID`) the question is about: the model's CONTEXT opens
        /// with it, and the reply names it ([`crate::pipeline::Report::focus`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
    },
    /// The daemon's health, plugins and counters.
    Status,
    /// Reload the plugins and policy if they changed on disk.
    Reload,
    /// Liveness: answered `"pong"`.
    Ping,
    /// The actions waiting for a person.
    Approvals,
    /// Run the waiting action `token`, whose digest the person was shown.
    Approve {
        /// The approval token.
        token: String,
        /// The digest of the action text shown to the person (from `approvals`).
        digest: String,
    },
    /// Drop the waiting action `token`.
    Deny {
        /// The approval token.
        token: String,
        /// The digest of the action text shown to the person.
        digest: String,
    },
    /// The tools offered, as function-calling schemas.
    Tools,
    /// Follow `topics`: the reply never comes; events under this request's id do, until the
    /// connection closes.
    Subscribe {
        /// What to follow.
        topics: Vec<Topic>,
    },
}

/// What a client may follow ([`Request::Subscribe`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Topic {
    /// Each gate's verdict as the walks make it: an approver's connection hears every
    /// request's, another connection its own requests' only.
    Traces,
    /// Approvals as they are asked for and decided (approver key).
    Approvals,
    /// Every journal record as it is committed (approver key).
    Journal,
    /// The daemon's status (health, plugins and their telemetry, pending approvals, MCP
    /// servers, providers) each time it changes, at most once a second.
    Health,
}

impl Topic {
    /// Every topic, in the order the protocol lists them.
    pub const ALL: [Topic; 4] = [
        Topic::Traces,
        Topic::Approvals,
        Topic::Journal,
        Topic::Health,
    ];

    /// Its name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Topic::Traces => "traces",
            Topic::Approvals => "approvals",
            Topic::Journal => "journal",
            Topic::Health => "health",
        }
    }

    /// Whether only an approver's connection may follow it.
    pub fn needs_approver(self) -> bool {
        matches!(self, Topic::Approvals | Topic::Journal)
    }
}

/// Why a request frame is not a request this connection may send.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RequestError {
    /// No `op`, or one the daemon does not know.
    #[error("unknown op {op}: use one of {allowed}")]
    UnknownOp {
        /// The op sent (JSON: it may be missing or not a string).
        op: String,
        /// The ops this connection may send.
        allowed: String,
    },
    /// An approver's op on a connection that proved only the client key.
    #[error(
        "`{op}` needs the approver key: this connection proved only the client key. Approvals are decided by the operator's own `passepartout approve` (it reads the approver key from the daemon's keys directory), not by the agent's tools"
    )]
    NeedsApprover {
        /// The op.
        op: &'static str,
    },
    /// The op's fields are missing or malformed.
    #[error("`{op}` is not a valid request: {detail}")]
    Invalid {
        /// The op.
        op: &'static str,
        /// What serde found wrong, naming the field.
        detail: String,
    },
    /// A subscription naming more topics than there are (kept for the connection's life, a
    /// list of thousands would be too).
    #[error("`subscribe` names at most {most} topics, each once ({all}); this one names {given}")]
    TooManyTopics {
        /// How many there are.
        most: usize,
        /// Their names.
        all: String,
        /// How many were named.
        given: usize,
    },
}

/// `op` as an error echoes it: its JSON, its first 64 characters at most (a frame of 16 MiB
/// could otherwise come back as a longer one).
fn echoed(op: &Value) -> String {
    const MOST: usize = 64;
    let text = op.to_string();
    match text.char_indices().nth(MOST) {
        Some((cut, _)) => format!("{}… ({} bytes)", &text[..cut], text.len()),
        None => text,
    }
}

impl Request {
    /// Parse a request frame from a connection that proved `role`: the op first (unknown ops
    /// and ops the role may not send are refused before their fields are read), then its fields.
    ///
    /// # Errors
    /// A [`RequestError`] naming the op and what is wrong.
    pub fn parse(frame: &Value, role: Role) -> Result<Request, RequestError> {
        let op =
            frame["op"]
                .as_str()
                .and_then(Op::named)
                .ok_or_else(|| RequestError::UnknownOp {
                    op: echoed(&frame["op"]),
                    allowed: Op::allowed(role)
                        .map(Op::name)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
        if op.needs_approver() && role != Role::Approver {
            return Err(RequestError::NeedsApprover { op: op.name() });
        }
        let mut request = Request::deserialize(frame).map_err(|e| RequestError::Invalid {
            op: op.name(),
            detail: e.to_string(),
        })?;
        if let Request::Subscribe { topics } = &mut request {
            if topics.len() > Topic::ALL.len() {
                return Err(RequestError::TooManyTopics {
                    most: Topic::ALL.len(),
                    all: Topic::ALL.map(Topic::name).join(", "),
                    given: topics.len(),
                });
            }
            // Each once: the order the events list them in is the protocol's.
            topics.sort();
            topics.dedup();
        }
        if let Request::Subscribe { topics } = &request
            && role != Role::Approver
            && let Some(topic) = topics.iter().find(|t| t.needs_approver())
        {
            return Err(RequestError::NeedsApprover {
                op: match topic {
                    Topic::Journal => "subscribe journal",
                    _ => "subscribe approvals",
                },
            });
        }
        Ok(request)
    }

    /// Its op.
    pub fn op(&self) -> Op {
        match self {
            Request::Act { .. } => Op::Act,
            Request::Ask { .. } => Op::Ask,
            Request::Status => Op::Status,
            Request::Reload => Op::Reload,
            Request::Ping => Op::Ping,
            Request::Approvals => Op::Approvals,
            Request::Approve { .. } => Op::Approve,
            Request::Deny { .. } => Op::Deny,
            Request::Tools => Op::Tools,
            Request::Subscribe { .. } => Op::Subscribe,
        }
    }

    /// The frame that sends it as request `id`.
    pub fn frame(&self, id: &Value) -> Value {
        frame("request", self, Some(id))
    }
}

/// What the daemon sends about a request before its reply, and on a subscription.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// The gates' trace of one verification.
    GateTrace {
        /// One record per gate asked.
        trace: GateTrace,
    },
    /// A line for the user (a reply, a tool's result, a rejection).
    Message {
        /// The text.
        text: String,
        /// What it is about, for a line about an action (absent on a model's reply).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        told: Option<crate::signal::Told>,
    },
    /// How far the model got with a streamed answer to this request (its text comes only once
    /// the gates have passed it).
    Model {
        /// Provider, model, tokens so far, time since asked.
        progress: crate::pipeline::Progress,
    },
    /// A subscription is in place: these topics follow.
    Subscribed {
        /// What is followed.
        topics: Vec<Topic>,
    },
    /// One gate's verdict, as a walk made it (`traces`).
    Gate {
        /// The verdict and what it was on.
        verdict: crate::gates::LiveVerdict,
    },
    /// An action waits for a person (`approvals`).
    ApprovalRequested {
        /// The journal record's seq.
        seq: i64,
        /// The token to decide it with.
        token: String,
        /// The action.
        action: Action,
        /// Its digest (what a decision names).
        digest: String,
        /// Why the gates asked.
        reasons: Vec<String>,
        /// When it expires unanswered (seconds since the epoch), when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires_at: Option<f64>,
    },
    /// An approval was decided, interrupted, or ended (`approvals`): it no longer waits as it
    /// was (an interrupted one waits for a person again, as the `approvals` listing shows).
    ApprovalDecided {
        /// The journal record's seq.
        seq: i64,
        /// The token.
        token: String,
        /// `approved`, `denied`, `interrupted`, `expired` (then `seq` is the request's, or 0
        /// for one that waited before the subscription), or how it ended.
        decision: String,
        /// Who decided, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// A journal record, as committed (`journal`).
    Journal {
        /// The record.
        record: crate::journal::Record,
    },
    /// The daemon's status, changed (`health`).
    Health {
        /// As `status` answers it.
        status: Box<super::ops::Status>,
    },
    /// Events of `topic` were lost (this client read too slowly): list again.
    Lagged {
        /// The topic.
        topic: Topic,
        /// How many were lost.
        missed: u64,
    },
    /// Events that may be lost were, for this connection as a whole (its client read more
    /// slowly than they came): sent without an id, before the next frame.
    Dropped {
        /// How many.
        count: u64,
        /// Why.
        why: String,
    },
}

impl Event {
    /// The frame that sends it for request `id`: `{"type": "event", "id", "event", …fields}`.
    pub fn frame(&self, id: &Value) -> Value {
        frame("event", self, Some(id))
    }

    /// The frame that sends it about the connection, not one request: no `id`.
    pub fn notice(&self) -> Value {
        frame("event", self, None)
    }
}

/// The frame answering request `id` with `result`: `{"type": "reply", "id", "ok": true,
/// "result"}`.
pub fn reply_frame(id: &Value, result: &impl Serialize) -> Value {
    serde_json::json!({ "type": "reply", "id": id, "ok": true, "result": result })
}

/// The error frame answering request `id`: `{"type": "error", "id", "error": {"kind": "request",
/// "message"}}`.
pub fn request_error(id: &Value, message: &str) -> Value {
    serde_json::json!({ "type": "error", "id": id, "error": { "kind": "request", "message": message } })
}

/// The error frame of a request the daemon refused or failed: `{"type": "error", "id",
/// "error": {"kind": "request" | "failed", "message"}}`, and `"field"` when the refusal is
/// about one field of the request.
pub fn refused_frame(id: &Value, refused: &super::ops::Refused) -> Value {
    let mut frame = serde_json::json!({ "type": "error", "id": id, "error": { "kind": refused.kind(), "message": refused.message() } });
    if let Some(field) = refused.field() {
        frame["error"]["field"] = field.into();
    }
    frame
}

/// `value`'s fields in a frame of `kind` for request `id` (flat: `{"type", "id", …fields}`;
/// without an id, about the connection as a whole).
fn frame(kind: &str, value: &impl Serialize, id: Option<&Value>) -> Value {
    let mut frame = serde_json::to_value(value).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut frame {
        m.insert("type".into(), kind.into());
        if let Some(id) = id {
            m.insert("id".into(), id.clone());
        }
    }
    frame
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_unknown_op_is_echoed_at_most_64_characters_long() {
        let long = "é".repeat(1 << 20);
        let error = Request::parse(&json!({ "op": long }), Role::Client).expect_err("unknown");
        let text = error.to_string();
        assert!(text.len() < 1024, "{} bytes", text.len());
        assert!(text.contains("(2097154 bytes)"), "{text}");
        let short = Request::parse(&json!({ "op": "pnig" }), Role::Client).expect_err("unknown");
        assert!(
            short
                .to_string()
                .starts_with("unknown op \"pnig\": use one of")
        );
    }

    #[test]
    fn every_op_round_trips_through_its_frame() {
        let requests = [
            Request::Act {
                action: Action {
                    target: "tool".into(),
                    tool: Some("eval".into()),
                    ..Action::default()
                },
            },
            Request::Ask {
                text: "hi".into(),
                focus: Some("release-1".into()),
            },
            Request::Status,
            Request::Reload,
            Request::Ping,
            Request::Approvals,
            Request::Approve {
                token: "t".into(),
                digest: "d".into(),
            },
            Request::Deny {
                token: "t".into(),
                digest: "d".into(),
            },
            Request::Tools,
            Request::Subscribe {
                topics: vec![Topic::Traces, Topic::Health],
            },
        ];
        assert_eq!(requests.len(), Op::ALL.len());
        for (request, op) in requests.iter().zip(Op::ALL) {
            assert_eq!(request.op(), op);
            let frame = request.frame(&json!(7));
            assert_eq!(frame["op"], op.name());
            assert_eq!(frame["type"], "request");
            assert_eq!(Request::parse(&frame, Role::Approver).as_ref(), Ok(request));
        }
    }

    #[test]
    fn an_event_frame_is_flat_as_clients_read_it() {
        let frame = Event::GateTrace { trace: Vec::new() }.frame(&json!(3));
        assert_eq!(
            frame,
            json!({ "type": "event", "id": 3, "event": "gate-trace", "trace": [] })
        );
    }

    #[test]
    fn a_client_may_not_send_an_approvers_op_whatever_its_fields() {
        for op in Op::ALL.into_iter().filter(|op| op.needs_approver()) {
            let err =
                Request::parse(&json!({ "op": op.name() }), Role::Client).expect_err("refused");
            assert!(
                matches!(err, RequestError::NeedsApprover { .. }),
                "{op:?}: {err}"
            );
        }
        assert!(!Op::allowed(Role::Client).any(Op::needs_approver));
    }

    #[test]
    fn a_subscription_names_each_topic_once_and_no_more_topics_than_there_are() {
        let subscribe = |topics: Value| {
            Request::parse(
                &json!({ "op": "subscribe", "topics": topics }),
                Role::Client,
            )
        };
        let err = subscribe(json!(vec!["health"; 10_000])).expect_err("too many");
        assert_eq!(
            err.to_string(),
            "`subscribe` names at most 4 topics, each once (traces, approvals, journal, health); this one names 10000"
        );
        assert_eq!(
            subscribe(json!(["health", "traces", "health"])),
            Ok(Request::Subscribe {
                topics: vec![Topic::Traces, Topic::Health]
            })
        );
        let names: Vec<Value> = Topic::ALL.iter().map(|t| json!(t)).collect();
        let wire: Vec<Value> = Topic::ALL.iter().map(|t| json!(t.name())).collect();
        assert_eq!(names, wire, "each topic's name is the one serde writes");
    }

    #[test]
    fn bad_frames_are_refused_naming_what_is_wrong() {
        let err = Request::parse(&json!({ "op": "rm" }), Role::Client).expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown op \"rm\": use one of act, ask, status, reload, ping, tools, subscribe"
        );
        let err = Request::parse(&json!({}), Role::Client).expect_err("no op");
        assert!(err.to_string().starts_with("unknown op null"), "{err}");
        let err = Request::parse(&json!({ "op": "ask" }), Role::Client).expect_err("no text");
        assert_eq!(
            err.to_string(),
            "`ask` is not a valid request: missing field `text`"
        );
        let err = Request::parse(
            &json!({ "op": "act", "action": { "tool": "eval", "sudo": true } }),
            Role::Client,
        )
        .expect_err("unknown action field");
        assert!(
            err.to_string()
                .starts_with("`act` is not a valid request: unknown field `sudo`"),
            "{err}"
        );
    }
}
