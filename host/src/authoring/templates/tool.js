// A tool: the model calls it by name with JSON arguments; it runs in a fresh sandbox each time.
const PARAMETERS = { type: "object", properties: { text: { type: "string" } }, required: ["text"] };

export const tool = {
  describe() {
    return [{ name: "shout", description: "Returns the text in capital letters.", parameters: JSON.stringify(PARAMETERS), readOnly: true }];
  },
  call(name, args) {
    const { text } = JSON.parse(args);
    if (typeof text !== "string") throw { tag: "invalid-args", val: "`text` is required: the text to shout" };
    return text.toUpperCase();
  },
};
