//! Actuators: what finally performs an approved action. `tool` runs a tool plugin in its
//! sandbox; an [`Outbox`] collects replies for a client (the CLI prints them; the daemon sends
//! them to the client that asked).

use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::runtime::{Kind, Plugin, PluginError, ToolFailure};
use crate::signal::{Action, Signal};

/// Why an actuator could not perform an action.
#[derive(Debug, thiserror::Error)]
pub enum ActError {
    /// The action is not something this actuator can perform (bad input: nothing ran).
    #[error("{0}")]
    Invalid(String),
    /// The tool ran and failed, or a limit stopped it.
    #[error("{0}")]
    Tool(#[from] PluginError),
    /// An MCP server's tool failed, or the server did not answer (gateway mode).
    #[error(transparent)]
    Server(crate::gateway::CallError),
}

/// Performs approved actions for one target.
#[async_trait::async_trait]
pub trait Actuator: Send + Sync {
    /// Check, without running anything, that this actuator can perform `action`.
    ///
    /// # Errors
    /// [`ActError::Invalid`] naming what is wrong (unknown tool, bad arguments).
    fn validate(&self, action: &Action) -> Result<(), ActError> {
        let _ = action;
        Ok(())
    }
    /// Perform `action`, answering `signal`. Returns the result text. The pipeline calls it only
    /// with an action [`Actuator::validate`] accepted on this agent.
    ///
    /// # Errors
    /// Anything that failed; for tools, the plugin's error naming the plugin.
    async fn act(&self, action: &Action, signal: &Signal) -> Result<String, ActError>;

    /// Tell the source of `signal` a line about its action (`action` holds the text), and what
    /// the line is about. Only the pipeline calls this, so `told` cannot come from a model's
    /// proposal. By default, as [`Actuator::act`].
    ///
    /// # Errors
    /// As [`Actuator::act`].
    async fn tell(
        &self,
        action: &Action,
        signal: &Signal,
        told: crate::signal::Told,
    ) -> Result<String, ActError> {
        let _ = told;
        self.act(action, signal).await
    }
}

/// Runs tools of tool plugins, in their sandbox, under the tool's deadline; and the tools of
/// MCP servers (gateway mode), in theirs.
pub struct ToolActuator {
    plugins: Vec<Arc<Plugin>>,
    gateway: Option<crate::gateway::Offer>,
}

/// The tool an action names.
enum Found<'a> {
    /// A plugin's.
    Plugin(&'a Plugin, &'a crate::runtime::types::ToolInfo),
    /// An MCP server's.
    Server(crate::gateway::OfferedTool),
}

impl ToolActuator {
    /// The tools of the tool plugins among `plugins`.
    pub fn new(plugins: &[Arc<Plugin>]) -> ToolActuator {
        ToolActuator {
            plugins: plugins
                .iter()
                .filter(|p| p.is(Kind::Tool))
                .cloned()
                .collect(),
            gateway: None,
        }
    }

    /// The same, with the MCP servers' tools `gateway` offers.
    pub fn with_gateway(mut self, gateway: crate::gateway::Offer) -> ToolActuator {
        self.gateway = Some(gateway);
        self
    }

    fn find(&self, action: &Action) -> Result<Found<'_>, ActError> {
        let Some(name) = action.tool.as_deref() else {
            return Err(ActError::Invalid(
                "a tool action needs `tool`: the name of the tool to call".into(),
            ));
        };
        let plugin = self.plugins.iter().find_map(|p| {
            p.tools
                .iter()
                .find(|t| t.name == name)
                .map(|t| Found::Plugin(p.as_ref(), t))
        });
        if let Some(found) = plugin {
            return Ok(found);
        }
        if let Some(tool) = self.gateway.as_ref().and_then(|g| g.find(name)) {
            return Ok(Found::Server(tool));
        }
        let mut known: Vec<String> = self
            .plugins
            .iter()
            .flat_map(|p| p.tools.iter().map(|t| t.name.clone()))
            .collect();
        known.extend(
            self.gateway
                .iter()
                .flat_map(|g| g.tools().into_iter().map(|t| t.name)),
        );
        Err(ActError::Invalid(format!(
            "unknown tool {name:?}; the loaded tools are: {}",
            known.join(", ")
        )))
    }
}

#[async_trait::async_trait]
impl Actuator for ToolActuator {
    fn validate(&self, action: &Action) -> Result<(), ActError> {
        match self.find(action)? {
            Found::Plugin(_, info) => {
                let schema: Value = serde_json::from_str(&info.parameters).unwrap_or(Value::Null);
                check_args(&info.name, &schema, &action.args).map_err(ActError::Invalid)
            }
            Found::Server(tool) => {
                check_args(&tool.name, &tool.schema, &action.args).map_err(ActError::Invalid)?;
                // Where the server acts must be what the gates judged, not its own default.
                match self
                    .gateway
                    .as_ref()
                    .and_then(|g| g.unplaced(&tool, &action.args))
                {
                    Some(why) => Err(ActError::Invalid(why)),
                    None => Ok(()),
                }
            }
        }
    }

    /// Runs the tool; the pipeline validated `action` first (`Agent::execute`).
    async fn act(&self, action: &Action, _signal: &Signal) -> Result<String, ActError> {
        match self.find(action)? {
            Found::Plugin(plugin, info) => {
                let args = Value::Object(action.args.clone()).to_string();
                Ok(plugin.call_tool_async(&info.name, &args).await?)
            }
            Found::Server(tool) => match &self.gateway {
                Some(g) => g
                    .call(&tool, action.args.clone())
                    .await
                    .map_err(ActError::Server),
                None => Err(ActError::Invalid(format!("unknown tool {:?}", tool.name))),
            },
        }
    }
}

/// Check `args` against the top level of a tool's JSON Schema: required properties present,
/// declared properties of the declared JSON type, no others when `additionalProperties` is
/// false. Names the field that is wrong.
///
/// The error goes back to the model (in its next system prompt), to the client and into the
/// journal, and the arguments are the model's: it quotes a field's name up to
/// [`MAX_QUOTED_NAME`] bytes and says what a wrong value is (its JSON type, and at most
/// [`MAX_QUOTED_VALUE`] bytes of it), never the whole of a megabyte string.
///
/// # Errors
/// A message naming the tool, the field and what was expected.
pub fn check_args(
    tool: &str,
    schema: &Value,
    args: &serde_json::Map<String, Value>,
) -> Result<(), String> {
    let props = schema.get("properties").and_then(Value::as_object);
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for field in required.iter().filter_map(Value::as_str) {
            if !args.contains_key(field) {
                return Err(format!(
                    "tool {tool:?}: missing required argument `{}`",
                    quoted(field, MAX_QUOTED_NAME)
                ));
            }
        }
    }
    for (field, value) in args {
        match props.and_then(|p| p.get(field)) {
            Some(spec) => {
                if let Some(ty) = spec.get("type").and_then(Value::as_str) {
                    let ok = match ty {
                        "string" => value.is_string(),
                        "integer" => value.is_i64() || value.is_u64(),
                        "number" => value.is_number(),
                        "boolean" => value.is_boolean(),
                        "array" => value.is_array(),
                        "object" => value.is_object(),
                        "null" => value.is_null(),
                        _ => true,
                    };
                    if !ok {
                        return Err(format!(
                            "tool {tool:?}: argument `{}` must be of type {}, got {}",
                            quoted(field, MAX_QUOTED_NAME),
                            quoted(ty, MAX_QUOTED_NAME),
                            described(value)
                        ));
                    }
                }
            }
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                return Err(format!(
                    "tool {tool:?}: unexpected argument `{}`",
                    quoted(field, MAX_QUOTED_NAME)
                ));
            }
            None => {}
        }
    }
    Ok(())
}

/// The most of an argument's name an argument error quotes, in bytes.
pub const MAX_QUOTED_NAME: usize = 128;
/// The most of an argument's value an argument error quotes, in bytes.
pub const MAX_QUOTED_VALUE: usize = 64;

/// `s` as Rust's `escape_debug` writes it (quotes, backslashes, line breaks, control and other
/// unprintable characters escaped: one line, nothing a terminal obeys), at most `max` bytes of
/// that, followed by `…` when cut.
fn quoted(s: &str, max: usize) -> String {
    let mut out = String::new();
    for c in s.chars() {
        let escaped = c.escape_debug();
        if out.len() + escaped.len() > max {
            out.push('…');
            break;
        }
        out.extend(escaped);
    }
    out
}

/// What a wrong argument is, for an error: its JSON type and a short quote of it (strings and
/// numbers), or its size (arrays and objects, never serialized: one can be megabytes).
fn described(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("a boolean ({b})"),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("an integer ({n})"),
        Value::Number(n) => format!("a number ({n})"),
        Value::String(s) if s.len() <= MAX_QUOTED_VALUE => {
            format!("a string (\"{}\")", quoted(s, MAX_QUOTED_VALUE))
        }
        Value::String(s) => format!(
            "a string of {} bytes (\"{}\")",
            s.len(),
            quoted(s, MAX_QUOTED_VALUE)
        ),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Object(o) => format!("an object of {} keys", o.len()),
    }
}

/// The seed's result formatting: the content on success, `ERROR [tool]: message` on failure.
pub fn format_result(tool: &str, result: &Result<String, ActError>) -> String {
    match result {
        Ok(content) => content.clone(),
        Err(ActError::Tool(PluginError::Tool { error, .. })) => {
            let msg = match error {
                ToolFailure::InvalidArgs(m) | ToolFailure::Denied(m) | ToolFailure::Failed(m) => {
                    m.clone()
                }
                ToolFailure::TimedOut => "timed out".into(),
            };
            format!("ERROR [{tool}]: {msg}")
        }
        Err(e) => format!("ERROR [{tool}]: {}", crate::runtime::chain(e)),
    }
}

/// Collects what is sent to a client: `(target, text)` pairs, in order.
#[derive(Clone, Default)]
pub struct Outbox {
    sent: Arc<Mutex<Vec<(String, String)>>>,
}

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Outbox {
        Outbox::default()
    }

    /// Everything sent so far.
    pub fn sent(&self) -> Vec<(String, String)> {
        self.sent.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// An actuator that delivers into this outbox under `target`.
    pub fn actuator(&self, target: &str) -> Box<dyn Actuator> {
        Box::new(OutboxActuator {
            target: target.to_owned(),
            outbox: self.clone(),
        })
    }

    /// Deliver `text` to `target`.
    pub fn send(&self, target: &str, text: &str) {
        self.sent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((target.to_owned(), text.to_owned()));
    }
}

struct OutboxActuator {
    target: String,
    outbox: Outbox,
}

#[async_trait::async_trait]
impl Actuator for OutboxActuator {
    async fn act(&self, action: &Action, _signal: &Signal) -> Result<String, ActError> {
        let text = action
            .text
            .clone()
            .or_else(|| {
                (!action.args.is_empty()).then(|| Value::Object(action.args.clone()).to_string())
            })
            .unwrap_or_default();
        self.outbox.send(&self.target, &text);
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_are_checked_against_the_schema_naming_the_field() {
        let schema = json!({"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"}},"required":["path"],"additionalProperties":false});
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(check_args("t", &schema, &args(json!({"path": "/x", "n": 3}))).is_ok());
        assert!(check_args("t", &schema, &args(json!({}))).is_err_and(|e| e.contains("`path`")));
        assert!(
            check_args("t", &schema, &args(json!({"path": 1})))
                .is_err_and(|e| e.contains("`path` must be of type string"))
        );
        assert!(
            check_args("t", &schema, &args(json!({"path": "/x", "zz": 1})))
                .is_err_and(|e| e.contains("`zz`"))
        );
    }

    #[test]
    fn an_argument_error_quotes_little_of_a_huge_argument() {
        // The error goes into the model's next prompt, to the client and into the journal.
        let schema = json!({"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false});
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        let huge = "x".repeat(1 << 20);
        let wrong = check_args("t", &schema, &args(json!({ "n": huge }))).expect_err("a string");
        assert!(wrong.len() < 512, "an error of {} bytes", wrong.len());
        assert!(
            wrong.contains("`n` must be of type integer, got a string of 1048576 bytes"),
            "{wrong}"
        );
        let mut named = serde_json::Map::new();
        named.insert(format!("{huge}\n\u{1b}[2J"), json!(1));
        let unexpected = check_args("t", &schema, &named).expect_err("not declared");
        assert!(
            unexpected.len() < 512,
            "an error of {} bytes",
            unexpected.len()
        );
        assert!(
            unexpected.contains("unexpected argument `xxx"),
            "{unexpected}"
        );
        // Short ones are quoted whole, escaped.
        let said =
            check_args("t", &schema, &args(json!({ "n": "a\"b\nc" }))).expect_err("a string");
        assert!(said.ends_with(r#"got a string ("a\"b\nc")"#), "{said}");
        let said =
            check_args("t", &schema, &args(json!({ "n": [1, 2, 3] }))).expect_err("an array");
        assert!(said.ends_with("got an array of 3 items"), "{said}");
        let said = check_args("t", &schema, &args(json!({ "n": 1.5 }))).expect_err("a number");
        assert!(said.ends_with("got a number (1.5)"), "{said}");
    }
}
