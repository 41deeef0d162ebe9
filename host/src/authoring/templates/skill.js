// A skill: asked about every signal (what the user typed, a heartbeat...); when it takes one up,
// its prompt is what the model is asked instead of the raw text.
const TAG = "#standup";

export const skill = {
  describe() {
    return { description: "Turns '#standup notes' into a request for a stand-up summary." };
  },
  triggers(signal) {
    return signal.sensor === "user-input" && (signal.text ?? "").includes(TAG);
  },
  prompt(signal) {
    const notes = (signal.text ?? "").replaceAll(TAG, "").trim();
    return `Write a three-line stand-up summary (done, next, blocked) of these notes: ${notes}`;
  },
};
