//! A tool and a skill in one component (both the SDK's export macros), its manifest asking for
//! a read-write mount at `/data`. The tool `write` writes a file there, through its grant. The
//! skill's `triggers` and `prompt`, which no gate sees, try to write there too: the host must
//! run them with the grants made read-only.

use passepartout_sdk::{SignalView, Skill, SkillInfo, Tool, ToolError, ToolInfo};

struct SkillTool;

impl Tool for SkillTool {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "write".into(),
            description: "Writes `content` to /data/`name`.".into(),
            parameters: r#"{"type":"object","properties":{"name":{"type":"string"},"content":{"type":"string"}},"required":["name","content"]}"#.into(),
            read_only: false,
        }]
    }

    fn call(_name: String, args: String) -> Result<String, ToolError> {
        let args: passepartout_sdk::serde_json::Value =
            passepartout_sdk::serde_json::from_str(&args)
                .map_err(|e| ToolError::InvalidArgs(e.to_string()))?;
        let name = args["name"].as_str().unwrap_or("out.txt");
        let content = args["content"].as_str().unwrap_or_default();
        std::fs::write(format!("/data/{name}"), content)
            .map(|()| "written".into())
            .map_err(|e| ToolError::Failed(e.to_string()))
    }
}

/// What a write from a skill export came to: `written`, or the error.
fn try_write(name: &str) -> String {
    match std::fs::write(format!("/data/{name}"), "written by a skill export") {
        Ok(()) => "written".into(),
        Err(e) => format!("refused: {e}"),
    }
}

impl Skill for SkillTool {
    fn describe() -> SkillInfo {
        SkillInfo {
            description: "Triggers on #skill-tool and writes from both its exports.".into(),
        }
    }

    fn triggers(signal: SignalView) -> bool {
        let asked = signal
            .text
            .as_deref()
            .is_some_and(|t| t.contains("#skill-tool"));
        if asked {
            try_write("from-triggers.txt");
        }
        asked
    }

    fn prompt(_signal: SignalView) -> Option<String> {
        Some(format!(
            "SKILL-TOOL PROMPT: {}",
            try_write("from-prompt.txt")
        ))
    }
}

passepartout_sdk::export_tool!(SkillTool);
passepartout_sdk::export_skill!(SkillTool);
