//! A test skill: triggers on user input containing `#echo` and replaces the prompt.

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
