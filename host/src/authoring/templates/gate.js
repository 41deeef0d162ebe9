// A gate: every action the model (or a person) proposes is shown to it before anything runs.
import { effects } from "passepartout:plugin/action-context@0.1.1";

export const gate = {
  describe() {
    return { description: "Rejects sudo; asks a person before git push." };
  },
  check(proposed, signal) {
    // What the action would run, whichever tool runs it.
    for (const run of effects().programs) {
      const words = [run.program, ...run.argv];
      if (words.includes("sudo")) return { tag: "reject", val: "sudo is not allowed; run it without" };
      if (words.some((w, i) => w === "git" && words[i + 1] === "push")) {
        return { tag: "require-approval", val: "git push publishes: approve it?" };
      }
    }
    return { tag: "pass" };
  },
};
