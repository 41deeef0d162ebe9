//! Reading the JSON arguments of actions and tool calls.

use crate::{Action, ToolError};

/// Parse a tool's `args` (a JSON object) into `T`.
///
/// # Errors
/// [`ToolError::InvalidArgs`] naming what serde found wrong (a missing field, a wrong type), so
/// the model can correct its call.
pub fn parse_args<T: serde::de::DeserializeOwned>(args: &str) -> Result<T, ToolError> {
    serde_json::from_str(args).map_err(|e| ToolError::InvalidArgs(format!("bad arguments: {e}")))
}

impl Action {
    /// The action's `args` as JSON. Malformed args give `Null`, so a lookup such as
    /// `action.args_json()["command"]` is simply absent rather than an error.
    pub fn args_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.args).unwrap_or(serde_json::Value::Null)
    }
}
