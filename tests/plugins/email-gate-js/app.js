// email-gate: asks a person before e-mail addresses leave in a reply. A JavaScript gate
// (componentize-js), built by tests/build.rs; tests/plugins/email-twin is its Rust twin.
const EMAIL = /[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}/g;

export const gate = {
  describe() {
    return { description: "Asks before e-mail addresses leave in a reply." };
  },
  check(proposed, signal) {
    if (proposed.target === "tool" || !proposed.text) return { tag: "pass" };
    const n = (proposed.text.match(EMAIL) || []).length;
    if (n === 0) return { tag: "pass" };
    return { tag: "require-approval", val: `the reply contains ${n} e-mail address(es); approve?` };
  },
};
