//! `chat`: the default prompt for what a person types (`user-input` and `chat-message`
//! signals). It frames the text with how to answer: directly when possible, or with one tool
//! action, and with an explanation for anything that changes something (the `explanation` gate
//! refuses such actions without one).

use passepartout_sdk::{SignalView, Skill, SkillInfo};

/// The sensors whose signals this skill handles.
pub const SENSORS: [&str; 2] = ["user-input", "chat-message"];

/// The framing put before the person's text.
const FRAME: &str = "You are acting for the person whose message ends this prompt.
Answer directly when you can. When you need a tool, propose exactly one tool action and wait for its result; never invent results.
Any action that changes something (writes a file, runs a program, edits memory, sends a message) must come with an explanation: one sentence saying what it changes and why. Actions without one are refused.
As JSON: {\"target\": \"tool\", \"tool\": NAME, \"args\": {...}, \"explanation\": WHY}.
If the request is unclear, ask one short question instead of guessing.

The person wrote:
";

/// The prompt for `text`: the framing, then the text verbatim.
pub fn build_prompt(text: &str) -> String {
    let mut prompt = String::with_capacity(FRAME.len() + text.len());
    prompt.push_str(FRAME);
    prompt.push_str(text);
    prompt
}

/// Whether a signal from `sensor` is one this skill handles.
pub fn handles(sensor: Option<&str>) -> bool {
    sensor.is_some_and(|s| SENSORS.contains(&s))
}

/// The skill.
pub struct Chat;

impl Skill for Chat {
    fn describe() -> SkillInfo {
        SkillInfo {
            description: "Frames what a person types: answer directly, or propose one tool action \
                          with an explanation."
                .into(),
        }
    }

    fn triggers(signal: SignalView) -> bool {
        handles(signal.sensor.as_deref())
    }

    fn prompt(signal: SignalView) -> Option<String> {
        // Without text there is nothing to frame: leave the signal as it is.
        let text = signal.text.filter(|t| !t.trim().is_empty())?;
        Some(build_prompt(&text))
    }
}

passepartout_sdk::export_skill!(Chat);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_lists_the_sensors_it_handles() {
        // The host asks the skill only about the sensors plugin.toml lists.
        let manifest = include_str!("../plugin.toml");
        let listed = format!("sensors = {SENSORS:?}");
        assert!(
            manifest.contains(&listed),
            "plugin.toml should say {listed}"
        );
    }

    #[test]
    fn the_text_ends_the_prompt_verbatim() {
        let text = "  rename notes.org to\n\"todo.org\" {please} ";
        let p = build_prompt(text);
        assert!(p.ends_with(&format!("The person wrote:\n{text}")));
    }

    #[test]
    fn the_frame_is_short_and_asks_for_explanations() {
        assert!(FRAME.len() < 800, "{} chars", FRAME.len());
        assert!(FRAME.contains("explanation"));
        assert!(FRAME.contains("exactly one tool action"));
    }

    #[test]
    fn only_typed_input_triggers() {
        assert!(handles(Some("user-input")));
        assert!(handles(Some("chat-message")));
        assert!(!handles(Some("heartbeat")));
        assert!(!handles(Some("tool-output")));
        assert!(!handles(None));
    }

    #[test]
    fn prompt_needs_text() {
        let view = |text: Option<&str>| SignalView {
            kind: "event".into(),
            sensor: Some("user-input".into()),
            text: text.map(str::to_owned),
            source: Some("tui".into()),
            depth: 0,
            payload: "{}".into(),
        };
        assert_eq!(Chat::prompt(view(None)), None);
        assert_eq!(Chat::prompt(view(Some("  "))), None);
        assert_eq!(Chat::prompt(view(Some("hi"))), Some(build_prompt("hi")));
    }
}
