//! A test skill: triggers on user input containing `#echo` and replaces the prompt; on `#sleep`
//! its `triggers` blocks in a host call (hostile, for deadline tests).

use passepartout_sdk::{SignalView, Skill, SkillInfo};

/// The skill.
pub struct Echo;

impl Skill for Echo {
    fn describe() -> SkillInfo {
        SkillInfo {
            description: "rewrites #echo prompts".into(),
        }
    }

    fn triggers(signal: SignalView) -> bool {
        // Hostile on request: `#sleep` blocks in a WASI host call for an hour.
        if signal.text.as_deref().is_some_and(|t| t.contains("#sleep")) {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
        signal.sensor.as_deref() == Some("user-input")
            && signal.text.as_deref().is_some_and(|t| t.contains("#echo"))
    }

    fn prompt(signal: SignalView) -> Option<String> {
        Some(format!(
            "ECHO SKILL PROMPT for: {}",
            signal.text.unwrap_or_default()
        ))
    }
}

passepartout_sdk::export_skill!(Echo);
