//! A gate built against `passepartout:plugin@0.1.0`, the WIT as it was before `action-context`
//! (a frozen copy in `wit/`). The host links 0.1.1 and must keep loading and calling it: it
//! rejects actions whose arguments mention `sudo` and passes the rest.

wit_bindgen::generate!({
    world: "gate-plugin",
    path: "wit",
});

use exports::passepartout::plugin::gate::{Action, GateInfo, Guest, SignalView, Verdict};
use passepartout::plugin::host;
use passepartout::plugin::types::LogLevel;

struct Old;

impl Guest for Old {
    fn describe() -> GateInfo {
        GateInfo {
            description: "a 0.1.0 gate: rejects sudo".into(),
        }
    }

    fn check(proposed: Action, _signal: SignalView) -> Verdict {
        // Calls into the host as a 0.1.0 component: they must reach the 0.1.1 host, not traps.
        host::log(LogLevel::Debug, "old-gate checks an action");
        if proposed.args.contains("sudo") {
            Verdict::Reject(format!("old-gate: no sudo (config {})", host::config()))
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(target_arch = "wasm32")]
export!(Old);
