//! Reading the JSON arguments of actions and tool calls, and describing a tool's arguments by
//! the type it reads them into.

use crate::{Action, ToolError, ToolInfo};

/// Parse a tool's `args` (a JSON object) into `T`.
///
/// # Errors
/// [`ToolError::InvalidArgs`] naming what serde found wrong (a missing field, a wrong type), so
/// the model can correct its call.
pub fn parse_args<T: serde::de::DeserializeOwned>(args: &str) -> Result<T, ToolError> {
    serde_json::from_str(args).map_err(|e| ToolError::InvalidArgs(format!("bad arguments: {e}")))
}

/// A tool's entry for [`crate::Tool::describe`], its `parameters` (the JSON Schema the model is
/// shown) generated from `A`, the type [`parse_args`] reads the call's arguments into: what the
/// model is told is what the tool parses. Doc comments on `A`'s fields become the parameters'
/// descriptions; mark what the host derives effects from with
/// `#[schemars(extend("x-effect" = "program"))]` (see the crate docs).
///
/// ```
/// use passepartout_sdk::{ToolInfo, schemars, serde, tool_info};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[serde(crate = "passepartout_sdk::serde")]
/// #[schemars(crate = "passepartout_sdk::schemars")]
/// struct Shout {
///     /// The text to shout.
///     text: String,
/// }
///
/// let info: ToolInfo = tool_info::<Shout>("shout", "Returns the text in capital letters.", true);
/// assert!(info.parameters.contains(r#""required":["text"]"#));
/// ```
pub fn tool_info<A: schemars::JsonSchema>(
    name: &str,
    description: &str,
    read_only: bool,
) -> ToolInfo {
    let schema = schemars::schema_for!(A);
    ToolInfo {
        name: name.into(),
        description: description.into(),
        parameters: serde_json::to_string(&schema)
            .unwrap_or_else(|_| r#"{"type":"object"}"#.into()),
        read_only,
    }
}

impl Action {
    /// The action's `args` as JSON. Malformed args give `Null`, so a lookup such as
    /// `action.args_json()["command"]` is simply absent rather than an error.
    pub fn args_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.args).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::tool_info;

    /// A tool's arguments, as an author writes them.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code, reason = "only its schema is read")]
    struct Run {
        /// The program to run.
        #[schemars(extend("x-effect" = "program"))]
        program: String,
        /// Its arguments.
        #[serde(default)]
        args: Vec<String>,
    }

    #[test]
    fn the_schema_is_the_type_s_with_its_effects_and_descriptions() {
        let info = tool_info::<Run>("run", "Runs a program.", false);
        let schema: serde_json::Value =
            serde_json::from_str(&info.parameters).expect("the schema is JSON");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], serde_json::json!(["program"]));
        let program = &schema["properties"]["program"];
        assert_eq!(program["x-effect"], "program");
        assert_eq!(program["description"], "The program to run.");
        assert_eq!(schema["properties"]["args"]["type"], "array");
        assert!(!info.read_only);
    }
}
