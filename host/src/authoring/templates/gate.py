"""A gate: every action the model (or a person) proposes is shown to it before anything runs."""

from wit_world import exports
from wit_world.imports import action_context
from wit_world.imports.types import Action, GateInfo, SignalView, Verdict
from wit_world.imports.types import Verdict_Pass, Verdict_Reject, Verdict_RequireApproval


class Gate(exports.Gate):
    def describe(self) -> GateInfo:
        return GateInfo("Rejects sudo; asks a person before git push.")

    def check(self, proposed: Action, signal: SignalView) -> Verdict:
        # What the action would run, whichever tool runs it.
        for run in action_context.effects().programs:
            words = [run.program, *run.argv]
            if "sudo" in words:
                return Verdict_Reject("sudo is not allowed; run it without")
            if any(words[i : i + 2] == ["git", "push"] for i in range(len(words))):
                return Verdict_RequireApproval("git push publishes: approve it?")
        return Verdict_Pass()
