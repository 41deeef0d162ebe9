//! A tool: the model calls it by name with JSON arguments; it runs in a fresh sandbox each time.

use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};

#[derive(serde::Deserialize)]
struct Shout {
    text: String,
}

struct Upper;

impl Tool for Upper {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "shout".into(),
            description: "Returns the text in capital letters.".into(),
            parameters: r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#.into(),
            read_only: true,
        }]
    }

    fn call(_name: String, args: String) -> Result<String, ToolError> {
        let Shout { text } = parse_args(&args)?;
        Ok(text.to_uppercase())
    }
}

passepartout_sdk::export_tool!(Upper);
