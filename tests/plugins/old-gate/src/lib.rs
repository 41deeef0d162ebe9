//! A gate built against `passepartout:plugin@0.1.0`, the WIT as it was before `action-context`
//! (a frozen copy in `wit/`). The host links 0.1.1 and must keep loading and calling it: it
//! rejects actions whose arguments mention `sudo` and passes the rest.

wit_bindgen::generate!({
    world: "gate-plugin",
    path: "wit",
});

use exports::passepartout::plugin::gate::{Action, GateInfo, Guest, SignalView, Verdict};

struct Old;

impl Guest for Old {
    fn describe() -> GateInfo {
        GateInfo {
            description: "a 0.1.0 gate: rejects sudo".into(),
        }
    }

    fn check(proposed: Action, _signal: SignalView) -> Verdict {
        if proposed.args.contains("sudo") {
            Verdict::Reject("old-gate: no sudo".into())
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(target_arch = "wasm32")]
export!(Old);
