//! A tool: the model calls it by name with JSON arguments; it runs in a fresh sandbox each time.

use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args, schemars, serde, tool_info};

/// What `shout` takes. The model is shown this type's JSON Schema, so what it is told is what
/// the tool parses; the doc comments are the descriptions it reads.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(crate = "passepartout_sdk::serde")]
#[schemars(crate = "passepartout_sdk::schemars")]
struct Shout {
    /// The text to return in capital letters.
    text: String,
}

struct Upper;

impl Tool for Upper {
    fn describe() -> Vec<ToolInfo> {
        vec![tool_info::<Shout>(
            "shout",
            "Returns the text in capital letters.",
            true,
        )]
    }

    fn call(_name: String, args: String) -> Result<String, ToolError> {
        let Shout { text } = parse_args(&args)?;
        Ok(text.to_uppercase())
    }
}

passepartout_sdk::export_tool!(Upper);
