//! The records every stage passes along: [`Signal`], [`Action`], [`Verdict`] and the
//! [`GateTrace`]. JSON on the wire (serde); one definition used by every stage.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::runtime::types as wit;

/// What kind of signal this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SignalType {
    /// Something happened: user input, a chat message, a heartbeat, a tool's output.
    Event,
    /// A client asks for an action directly (it skips the model, never the gates).
    Request,
    /// A line for the log.
    Log,
}

/// The payload: the sensor that produced the signal, its text, and any other fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Payload {
    /// `user-input`, `chat-message`, `heartbeat`, `tool-output`, `tool-error`, `loop-error`,
    /// `approval`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// The text carried, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A direct request's action (a client's `act`): typed from the wire to the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The conversation with the model this signal continues (tool-output and tool-error
    /// events of a tool the model called).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<Box<Conversation>>,
    /// Any other field.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A conversation with the model that is waiting for tool results: the signal that started it
/// and the tool calls made so far. It travels in `payload.conversation` of tool-output and
/// tool-error events.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Conversation {
    /// The user-input or chat-message signal the model is answering.
    pub origin: Box<Signal>,
    /// The tool calls so far, oldest first.
    pub turns: Vec<ToolTurn>,
}

/// A tool call the model made earlier in this conversation, and what came of it: sent back
/// in each protocol's own form (OpenAI `tool` messages, Anthropic `tool_result` blocks).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ToolTurn {
    /// The model's id for the call.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments it gave.
    pub arguments: Value,
    /// The tool's output, or the error.
    pub result: String,
    /// Whether `result` is an error.
    pub is_error: bool,
}

/// Who sent the signal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The client or sensor it came from; replies go back there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The daemon client's session (its connection) it came on: token budgets are kept per
    /// client session. `None` for a one-shot command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// What the daemon client called itself in its hello (`passepartout-cli`,
    /// `passepartout-mcp/CLIENT` for a call made through MCP): journaled with the request, so a
    /// reader sees which door it came through. Said by the client, not proved: any holder of the
    /// client key may say anything here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The memory headline (its `ID`) the request is about: the seeds' foveal focus. The
    /// model's CONTEXT opens with that headline, its body and its children, before the outline
    /// of the whole store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
    /// It came on a daemon connection that proved only the client key (set by the daemon from
    /// the handshake, never said by a client). The approvals such requests ask for hold at most
    /// [`crate::approvals::CLIENT_PLACES`] of the places, so that the operator's own questions
    /// can always be asked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_key: bool,
}

impl Meta {
    /// From `source`, outside any session (a one-shot command, a test).
    pub fn from_source(source: &str) -> Meta {
        Meta {
            source: Some(source.to_owned()),
            ..Meta::default()
        }
    }
}

/// A signal travelling through Perceive, Reason and Act.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// Event, request or log.
    #[serde(rename = "type")]
    pub kind: SignalType,
    /// Sensor, text and other fields.
    #[serde(default)]
    pub payload: Payload,
    /// Source and session.
    #[serde(default)]
    pub meta: Meta,
    /// Rounds of the loop that led here (0 for fresh input).
    #[serde(default)]
    pub depth: u32,
}

/// What a line told to a request's source is about: the `told` of the daemon's `message` event,
/// so that a client waiting for an action decided elsewhere (an approval) reads the outcome
/// from a typed field, never from the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Told {
    /// The tool ran; the text is its output.
    Ran,
    /// The tool failed.
    Failed,
    /// The action cannot be performed as given.
    Invalid,
    /// A gate rejected it.
    Rejected,
    /// It waits for a person (again, after an approval: a new token).
    Suspended,
    /// A person denied it.
    Denied,
}

/// A sensor's name as the pipeline sees it (Perceive): trimmed, lowercase, `-` for `_`.
pub fn normal_sensor(sensor: &str) -> String {
    sensor.trim().to_lowercase().replace('_', "-")
}

impl Signal {
    /// An event from `sensor` with `text`, from client `source`.
    pub fn event(sensor: &str, text: Option<&str>, source: Option<&str>) -> Signal {
        Signal {
            kind: SignalType::Event,
            payload: Payload {
                sensor: Some(sensor.into()),
                text: text.map(Into::into),
                ..Payload::default()
            },
            meta: Meta {
                source: source.map(Into::into),
                ..Meta::default()
            },
            depth: 0,
        }
    }

    /// A direct request from `meta.source`: `action` travels in `payload.action` and goes
    /// through the gates, never the model. Only the model's own function calls carry a call
    /// id, so a client cannot join a conversation with the model: the id is dropped here.
    pub fn request(mut action: Action, meta: Meta) -> Signal {
        action.call_id = None;
        Signal {
            kind: SignalType::Request,
            payload: Payload {
                action: Some(action),
                ..Payload::default()
            },
            meta,
            depth: 0,
        }
    }

    /// The conversation with the model this signal continues, if any.
    pub fn conversation(&self) -> Option<&Conversation> {
        self.payload.conversation.as_deref()
    }

    /// The sensor, if any.
    pub fn sensor(&self) -> Option<&str> {
        self.payload.sensor.as_deref()
    }

    /// What plugins see of this signal.
    pub fn view(&self) -> wit::SignalView {
        wit::SignalView {
            kind: match self.kind {
                SignalType::Event => "event",
                SignalType::Request => "request",
                SignalType::Log => "log",
            }
            .into(),
            sensor: self.payload.sensor.clone(),
            text: self.payload.text.clone(),
            source: self.meta.source.clone(),
            depth: self.depth,
            payload: serde_json::to_string(&self.payload).unwrap_or_else(|_| "{}".into()),
        }
    }
}

/// An action proposed by the model or a client.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Action {
    /// The actuator: `tool`, or a client such as `cli`. Resolved before the gates see it.
    #[serde(default)]
    pub target: String,
    /// For `target = "tool"`: the tool to call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Arguments (a JSON object).
    #[serde(default)]
    pub args: Map<String, Value>,
    /// Text: the reply to send, the message to log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Why the proposer wants it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<String>,
    /// The model's id for the function call this action came from; its result goes back to
    /// the model under this id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
}

/// Why text or a gate's rewrite is not an [`Action`].
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// The JSON is not an action (serde names the field, e.g. `unknown field "tol"`).
    #[error("the action is not valid: {0}")]
    Json(#[from] serde_json::Error),
    /// A gate's `modify` gave args that are not a JSON object.
    #[error("modified args are not a JSON object: {args}")]
    ModifiedArgs {
        /// The args as the gate gave them.
        args: String,
        /// Why they did not parse, when they are not JSON at all.
        #[source]
        source: Option<serde_json::Error>,
    },
}

/// How deep an action's arguments may nest (objects and arrays within one another, the args
/// object itself counted). Kept well under serde_json's 128-level limit on reading, so that an
/// action stored inside a record (a journal record, a suspended approval with its signal) can
/// always be read back: past it, one could not be listed, approved or denied.
pub const MAX_ARGS_NESTING: usize = 64;

impl Action {
    /// How deep its arguments nest: 1 for an object of scalars, one more per object or array
    /// within.
    pub fn args_nesting(&self) -> usize {
        // Iterative: what a gate's rewrite makes has not been through a parser's limit.
        let mut deepest = 1;
        let mut stack: Vec<(&Value, usize)> = self.args.values().map(|v| (v, 2)).collect();
        while let Some((value, depth)) = stack.pop() {
            match value {
                Value::Array(items) => stack.extend(items.iter().map(|v| (v, depth + 1))),
                Value::Object(map) => stack.extend(map.values().map(|v| (v, depth + 1))),
                _ => continue,
            }
            deepest = deepest.max(depth);
        }
        deepest
    }

    /// A reply to send back.
    pub fn reply(text: &str) -> Action {
        Action {
            text: Some(text.into()),
            ..Action::default()
        }
    }

    /// Parse an action from JSON.
    ///
    /// # Errors
    /// [`ActionError::Json`], naming the field that is wrong (serde's), e.g. `unknown field
    /// "tol"`.
    pub fn from_json(text: &str) -> Result<Action, ActionError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Fill in the target the seed's way: explicit, else `tool` for a tool call, else the
    /// signal's source, else `default`.
    pub fn resolve_target(&mut self, source: Option<&str>, default: &str) {
        if self.target.is_empty() {
            self.target = if self.tool.is_some() {
                "tool".into()
            } else {
                source.unwrap_or(default).into()
            };
        }
    }

    /// The WIT form handed to gates.
    pub fn to_wit(&self) -> wit::Action {
        wit::Action {
            target: self.target.clone(),
            tool: self.tool.clone(),
            args: Value::Object(self.args.clone()).to_string(),
            text: self.text.clone(),
            explanation: self.explanation.clone(),
        }
    }

    /// Back from the WIT form a gate returned with `modify`.
    ///
    /// # Errors
    /// [`ActionError::ModifiedArgs`]: the gate's args were not a JSON object.
    pub fn from_wit(a: &wit::Action) -> Result<Action, ActionError> {
        let not_object = |source| ActionError::ModifiedArgs {
            args: a.args.clone(),
            source,
        };
        let args = match serde_json::from_str::<Value>(&a.args) {
            Ok(Value::Object(m)) => m,
            Ok(_) => return Err(not_object(None)),
            Err(e) => return Err(not_object(Some(e))),
        };
        Ok(Action {
            target: a.target.clone(),
            tool: a.tool.clone(),
            args,
            text: a.text.clone(),
            explanation: a.explanation.clone(),
            call_id: None,
        })
    }
}

/// A gate's decision, as the trace records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceVerdict {
    /// Passed unchanged.
    Pass,
    /// Replaced the action.
    Modify,
    /// Refused.
    Reject,
    /// Asked for a person's approval.
    RequireApproval,
    /// Failed (trap, fuel, deadline...): counted as a rejection.
    Error,
}

impl TraceVerdict {
    /// Its name, as the journal and `--json` spell it (`require_approval`).
    pub fn name(&self) -> &'static str {
        match self {
            TraceVerdict::Pass => "pass",
            TraceVerdict::Modify => "modify",
            TraceVerdict::Reject => "reject",
            TraceVerdict::RequireApproval => "require_approval",
            TraceVerdict::Error => "error",
        }
    }
}

/// One gate's entry in the trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    /// The gate's name.
    pub gate: String,
    /// Its version.
    pub version: String,
    /// Its priority.
    pub priority: i32,
    /// The round of the walk (1 for the first; a gate's rewrite starts the next). 0 in
    /// records written before rounds existed.
    #[serde(default)]
    pub round: u32,
    /// What it decided.
    pub verdict: TraceVerdict,
    /// Its reason (reject, approval, error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Wall-clock time of the call, microseconds.
    pub micros: u64,
    /// Fuel the call used (instantiation included), for a plugin gate's call that answered;
    /// absent for a stand-in, a failed call, and records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
}

/// Every gate that ran, in order.
pub type GateTrace = Vec<GateRecord>;

#[cfg(test)]
mod tests {
    use super::TraceVerdict;

    #[test]
    fn a_verdict_is_named_as_serde_spells_it() {
        for v in [
            TraceVerdict::Pass,
            TraceVerdict::Modify,
            TraceVerdict::Reject,
            TraceVerdict::RequireApproval,
            TraceVerdict::Error,
        ] {
            assert_eq!(serde_json::to_value(&v).ok(), Some(v.name().into()));
        }
    }
}
