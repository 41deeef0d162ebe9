//! A skill: asked about every signal (what the user typed, a heartbeat...); when it takes one up,
//! its prompt is what the model is asked instead of the raw text.

use passepartout_sdk::{SignalView, Skill, SkillInfo};

const TAG: &str = "#standup";

struct Standup;

impl Skill for Standup {
    fn describe() -> SkillInfo {
        SkillInfo {
            description: "Turns '#standup notes' into a request for a stand-up summary.".into(),
        }
    }

    fn triggers(signal: SignalView) -> bool {
        signal.sensor.as_deref() == Some("user-input")
            && signal.text.as_deref().is_some_and(|t| t.contains(TAG))
    }

    fn prompt(signal: SignalView) -> Option<String> {
        let notes = signal.text.unwrap_or_default().replace(TAG, "");
        Some(format!(
            "Write a three-line stand-up summary (done, next, blocked) of these notes: {}",
            notes.trim()
        ))
    }
}

passepartout_sdk::export_skill!(Standup);
