//! A gate: every action the model (or a person) proposes is shown to it before anything runs.

use passepartout_sdk::{Action, ActionExt, Gate, GateInfo, SignalView, Verdict};

struct Guard;

impl Gate for Guard {
    fn describe() -> GateInfo {
        GateInfo::new("Rejects sudo; asks a person before git push.")
    }

    fn check(action: Action, _signal: SignalView) -> Verdict {
        // What the action would run, whichever tool runs it (see the SDK's `context`).
        for run in &action.effects().programs {
            let words = run.words();
            if words.contains(&"sudo") {
                return Verdict::Reject("sudo is not allowed; run it without".into());
            }
            if words.windows(2).any(|w| w == ["git", "push"]) {
                return Verdict::RequireApproval("git push publishes: approve it?".into());
            }
        }
        Verdict::Pass
    }
}

passepartout_sdk::export_gate!(Guard);
