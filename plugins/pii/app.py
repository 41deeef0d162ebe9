"""`pii`: a Passepartout gate, in Python, that asks a person before an e-mail address or a phone
number leaves the machine: in a reply to a person, or in the data a tool sends out.

host/build.rs builds it with componentize-py against `wit/plugin.wit`, world `gate-plugin`
(host/build/python.rs), as you would by hand:

    componentize-py -d ../../wit -w gate-plugin componentize --stub-wasi app -o pii.wasm

The interpreter is initialised at build time, so the imports below cost nothing per call. A gate
gets no WASI at run time, and `--stub-wasi` turns every WASI import into a trap inside the
component: `describe` and `check` must not print, read files, the clock, the environment or
randomness. They only ask the host's `action-context` what it knows of a tool call (the tool
behind the name, the effects derived from its declared schema) and call the pure `pii_rules`
(tested natively by `test_app.py`).
"""

from wit_world import exports
from wit_world.imports import action_context
from wit_world.imports.types import (
    Action,
    GateInfo,
    SignalView,
    Verdict,
    Verdict_Pass,
    Verdict_RequireApproval,
)

import pii_rules


class Gate(exports.Gate):
    """The exported `gate` interface (componentize-py finds it by name)."""

    def describe(self) -> GateInfo:
        return GateInfo(
            description="Asks before e-mail addresses or phone numbers leave, as written or "
            "percent-encoded or escaped: in a reply (its text, else its args), or in the data a "
            "tool sends (every argument of http-fetch or of a tool that fetches a URL, a "
            "body/content/text argument, a program's arguments and standard input)."
        )

    def check(self, proposed: Action, signal: SignalView) -> Verdict:
        # What the host knows of a tool call: the tool behind the name called (an alias of
        # http-fetch is http-fetch) and its effects, whatever the tool calls its arguments.
        identity = effects = None
        if proposed.target == "tool":
            identity, effects = action_context.tool(), action_context.effects()
        question = pii_rules.check(
            proposed.target, proposed.tool, proposed.args, proposed.text, identity, effects
        )
        if question is None:
            return Verdict_Pass()
        return Verdict_RequireApproval(question)
