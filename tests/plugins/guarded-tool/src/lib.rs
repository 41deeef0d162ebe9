//! A tool that brings its own guard (`guarded-tool-plugin`): the tool `stamp` "writes" the
//! path it is given (it only echoes it); the gate refuses any action whose effects write
//! outside `/tmp`, asking the host through `action-context`, whichever tool it names.

wit_bindgen::generate!({
    world: "guarded-tool-plugin",
    path: "../../../wit",
});

use exports::passepartout::plugin::gate::{self, Action, GateInfo, SignalView, Verdict};
use exports::passepartout::plugin::tool::{self, ToolError, ToolInfo};
use passepartout::plugin::action_context;

struct Guarded;

impl tool::Guest for Guarded {
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
        let seen = action_context::effects().writes.len();
        Ok(format!("stamped {args} (context writes: {seen})"))
    }
}

impl gate::Guest for Guarded {
    fn describe() -> GateInfo {
        GateInfo {
            description: "refuses writes outside /tmp".into(),
        }
    }

    fn check(_proposed: Action, _signal: SignalView) -> Verdict {
        let outside = action_context::effects()
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

#[cfg(target_arch = "wasm32")]
export!(Guarded);
