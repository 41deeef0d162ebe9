//! A tool that brings its own guard (`guarded-tool-plugin`, through the SDK's
//! `export_guarded_tool!`): the tool `stamp` "writes" the path it is given (it only echoes it);
//! the gate refuses any action of its tool whose effects write outside `/tmp`, asking the host
//! through `action-context`. The host asks it only about actions naming `stamp`.

use passepartout_sdk::{
    Action, ActionExt, Gate, GateInfo, SignalView, Tool, ToolError, ToolInfo, Verdict,
};

struct Guarded;

impl Tool for Guarded {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "stamp".into(),
            description: "Pretends to write a stamp file at `path`.".into(),
            parameters: r#"{"type":"object","properties":{"path":{"type":"string","x-effect":"path-write"}},"required":["path"]}"#.into(),
            read_only: false,
        }]
    }

    fn call(_name: String, args: String) -> Result<String, ToolError> {
        // A tool call has no action under check: the host answers "nothing".
        let seen = passepartout_sdk::context::effects().writes.len();
        Ok(format!("stamped {args} (context writes: {seen})"))
    }
}

impl Gate for Guarded {
    fn describe() -> GateInfo {
        GateInfo {
            description: "refuses writes outside /tmp".into(),
        }
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        let outside = action
            .effects()
            .writes
            .into_iter()
            .find(|w| !w.guest.starts_with("/tmp/"));
        match outside {
            Some(w) => Verdict::Reject(format!(
                "guarded-tool writes only under /tmp, not {}",
                w.guest
            )),
            None => Verdict::Pass,
        }
    }
}

passepartout_sdk::export_guarded_tool!(Guarded);
