"""A skill: asked about every signal (what the user typed, a heartbeat...); when it takes one up,
its prompt is what the model is asked instead of the raw text."""

from wit_world import exports
from wit_world.imports.types import SignalView, SkillInfo

TAG = "#standup"


class Skill(exports.Skill):
    def describe(self) -> SkillInfo:
        return SkillInfo("Turns '#standup notes' into a request for a stand-up summary.")

    def triggers(self, signal: SignalView) -> bool:
        return signal.sensor == "user-input" and TAG in (signal.text or "")

    def prompt(self, signal: SignalView) -> str | None:
        notes = (signal.text or "").replace(TAG, "").strip()
        return f"Write a three-line stand-up summary (done, next, blocked) of these notes: {notes}"
