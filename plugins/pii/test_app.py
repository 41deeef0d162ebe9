"""Native tests of the `pii` gate: `python3 plugins/pii/test_app.py` (plain CPython 3.11+, no
componentize-py needed). Runs every case of `cases.json` through `pii_rules.check`, then through
`app.Gate` with stand-ins for the generated `wit_world` bindings (each tool action with the
tool identity and effects the host derives for it from the standard tools' schemas, as `plugin
test` does after `passepartout init`), and a few properties besides. Exits non-zero on the first
failure set.
"""

import json
import os
import sys
import time
import types
import unittest
from dataclasses import dataclass, field
from typing import Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep plugins/pii/ free of __pycache__
sys.path.insert(0, HERE)

import pii_rules  # noqa: E402

with open(os.path.join(HERE, "cases.json"), encoding="utf-8") as f:
    CASES = json.load(f)["cases"]


def fields(action):
    """The WIT fields of a case's action: (target, tool, args as JSON text, text)."""
    return (
        action["target"],
        action.get("tool"),
        json.dumps(action.get("args", {})),
        action.get("text"),
    )


# What `action-context` answers, as plain records (the generated bindings' records have the same
# fields).
@dataclass
class Identity:
    plugin: str
    version: str
    tool: str
    read_only: bool
    declares_effects: bool


@dataclass
class ProgramRun:
    program: str
    argv: list
    line: Optional[str] = None
    stdin: Optional[str] = None


@dataclass
class UrlEffect:
    url: str
    scheme: str = "https"
    host: str = ""
    port: Optional[int] = 443
    path: str = "/"


@dataclass
class Effects:
    programs: list = field(default_factory=list)
    reads: list = field(default_factory=list)
    writes: list = field(default_factory=list)
    urls: list = field(default_factory=list)
    memory_writes: list = field(default_factory=list)


# The standard tools the cases call, by plugin, with what their schemas mark (`x-effect`) that
# this gate reads: http-fetch's `url`; shell's `program`, `args` (argv) and `stdin`.
STANDARD_TOOLS = {
    "http-fetch": ("http-fetch", False),
    "shell": ("shell", False),
    "read-file": ("files", True),
    "write-file": ("files", False),
}


def context_of(action):
    """(identity, effects) of a case's action as the host gives them with the standard tools
    loaded: none for a reply or a tool nobody offers."""
    tool = action.get("tool")
    if action["target"] != "tool" or tool not in STANDARD_TOOLS:
        return None, Effects()
    plugin, read_only = STANDARD_TOOLS[tool]
    identity = Identity(plugin, "0.1.0", tool, read_only, True)
    args = action.get("args", {})
    effects = Effects()
    if tool == "http-fetch" and isinstance(args.get("url"), str):
        effects.urls.append(UrlEffect(args["url"]))
    if tool == "shell" and isinstance(args.get("program"), str):
        stdin = args.get("stdin") if isinstance(args.get("stdin"), str) else None
        argv = [a if isinstance(a, str) else json.dumps(a) for a in args.get("args", [])]
        effects.programs.append(ProgramRun(args["program"], argv, None, stdin))
    return identity, effects


# What the fake `action_context` answers: set per case by the tests.
CONTEXT = {"tool": None, "effects": Effects()}


def install_fake_bindings():
    """Stand-ins for the modules componentize-py generates, just enough to import app.py."""

    @dataclass
    class Action:
        target: str
        tool: Optional[str]
        args: str
        text: Optional[str]
        explanation: Optional[str]

    @dataclass
    class SignalView:
        kind: str
        sensor: Optional[str]
        text: Optional[str]
        source: Optional[str]
        depth: int
        payload: str

    @dataclass
    class Verdict_Pass:
        pass

    @dataclass
    class Verdict_RequireApproval:
        value: str

    @dataclass
    class GateInfo:
        description: str

    class Gate:
        pass

    wit_world = types.ModuleType("wit_world")
    exports = types.ModuleType("wit_world.exports")
    exports.Gate = Gate
    imports = types.ModuleType("wit_world.imports")
    wtypes = types.ModuleType("wit_world.imports.types")
    for cls in (Action, SignalView, Verdict_Pass, Verdict_RequireApproval, GateInfo):
        setattr(wtypes, cls.__name__, cls)
    wtypes.Verdict = object
    context = types.ModuleType("wit_world.imports.action_context")
    context.tool = lambda: CONTEXT["tool"]
    context.effects = lambda: CONTEXT["effects"]
    wit_world.exports, wit_world.imports, imports.types = exports, imports, wtypes
    imports.action_context = context
    sys.modules.update(
        {
            "wit_world": wit_world,
            "wit_world.exports": exports,
            "wit_world.imports": imports,
            "wit_world.imports.types": wtypes,
            "wit_world.imports.action_context": context,
        }
    )
    return wtypes


class Cases(unittest.TestCase):
    def test_the_table_is_balanced(self):
        kinds = [c["expect"] for c in CASES]
        self.assertGreaterEqual(len(CASES), 16)
        self.assertEqual(set(kinds), {"pass", "require-approval"})
        self.assertLessEqual(abs(kinds.count("pass") - kinds.count("require-approval")), 2)

    def test_rules_give_the_expected_verdicts(self):
        for case in CASES:
            with self.subTest(case["name"]):
                action = case["action"]
                question = pii_rules.check(*fields(action), *context_of(action))
                if case["expect"] == "pass":
                    self.assertIsNone(question)
                else:
                    self.assertIsNotNone(question)
                    if "reason" in case:
                        self.assertEqual(question, case["reason"])

    def test_the_gate_glue_gives_the_same_verdicts(self):
        wtypes = install_fake_bindings()
        import app

        gate = app.Gate()
        self.assertIn("e-mail", gate.describe().description)
        signal = wtypes.SignalView("request", "user-input", None, None, 0, "{}")
        for case in CASES:
            with self.subTest(case["name"]):
                target, tool, args, text = fields(case["action"])
                identity, effects = context_of(case["action"])
                CONTEXT.update(tool=identity, effects=effects)
                verdict = gate.check(wtypes.Action(target, tool, args, text, None), signal)
                if case["expect"] == "pass":
                    self.assertIsInstance(verdict, wtypes.Verdict_Pass)
                else:
                    self.assertIsInstance(verdict, wtypes.Verdict_RequireApproval)
                    want = pii_rules.check(target, tool, args, text, identity, effects)
                    self.assertEqual(verdict.value, want)


class Rules(unittest.TestCase):
    def test_the_question_never_echoes_the_data(self):
        for case in CASES:
            action = case["action"]
            question = pii_rules.check(*fields(action), *context_of(action)) or ""
            for word in ("@", "555", "+33", "06 12", "example"):
                self.assertNotIn(word, question, case["name"])

    def test_phone_formats(self):
        for number in [
            "+33 6 12 34 56 78",
            "+33612345678",
            "+1 (555) 123-4567",
            "+1-555-123-4567",
            "+44 20 7946 0958",
            "(555) 123-4567",
            "(555)123-4567",
            "555-123-4567",
            "555.123.4567",
            "555 123 4567",
            "06 12 34 56 78",
            "06.12.34.56.78",
            "06-12-34-56-78",
            "0612345678",
            "020 7946 0958",
            "030 12345678",
        ]:
            with self.subTest(number):
                self.assertEqual(pii_rules.count_pii(f"call {number}, thanks"), (0, 1))

    def test_not_phones(self):
        for text in [
            "1.2.3.4",
            "10.0.0.1",
            "192.168.100.200",
            "2026-11-22",
            "22-11-2026",
            "2026/11/22",
            "14:30:05",
            "$1,234.56",
            "1732233600",
            "978-3-16-148410-0",
            "4111 1111 1111 1111",
            "1555-123-45678",
            "555-123-4567-8",
            "v555-123-4567",
            "+1 2",
            "12345",
        ]:
            with self.subTest(text):
                self.assertEqual(pii_rules.count_pii(f"see {text} here"), (0, 0))

    def test_addresses(self):
        for text, n in [
            ("a@b.co", 1),
            ("first.last+tag@sub.example.co.uk.", 1),
            ("x@example.com,y@example.org", 2),
            ("bob@localhost", 0),
            ("bob@-bad.com", 0),
            ("bob@example.c0m", 0),
            ("@example.com", 0),
            ("...@example.com", 0),
            ("user at example dot com", 0),
        ]:
            with self.subTest(text):
                self.assertEqual(pii_rules.count_pii(text)[0], n)

    def test_digits_of_an_address_are_not_a_phone(self):
        for text in [
            "0612345678@sms.example.com",
            "0612345678+tag@example.com",
            "first.0612345678@example.com",
            "555-123-4567.x@example.com",
            "x@06-12-34-56-78.example.com",
            "x@mail.555.123.4567.example.com",
        ]:
            with self.subTest(text):
                self.assertEqual(pii_rules.count_pii(text), (1, 0))

    def test_args_that_are_not_json(self):
        self.assertIsNotNone(pii_rules.check("tool", "http-fetch", "to bob@example.com", None))
        self.assertIsNone(pii_rules.check("tool", "webhook", "to bob@example.com", None))
        self.assertIsNone(pii_rules.check("tool", None, '{"body": "bob@example.com"}', None))

    def test_past_the_scan_limit_it_asks_without_looking(self):
        big = "nothing personal here. " * (pii_rules.MAX_SCAN_CHARS // 23 + 1)
        self.assertIn("more than this gate checks", pii_rules.check("tui", None, "{}", big))
        args = json.dumps({"body": big})
        self.assertIn("the webhook call sends", pii_rules.check("tool", "webhook", args, None))
        self.assertIsNone(pii_rules.check("tui", None, "{}", big[: pii_rules.MAX_SCAN_CHARS]))
        huge = json.dumps({"command": "x" * pii_rules.MAX_ARGS_CHARS})
        self.assertIn("more than this gate checks", pii_rules.check("tool", "shell", huge, None))

    def test_many_small_strings_count_as_one_text(self):
        args = json.dumps({"body": ["bob@example.com", "555-123-4567"] + ["x"] * 1000})
        question = pii_rules.check("tool", "webhook", args, None)
        self.assertIn("1 e-mail address and 1 phone number (in body)", question)
        # Joined with newlines, two strings never make one number.
        self.assertIsNone(pii_rules.check("tool", "webhook", '{"body": ["555-123", "4567"]}', None))

    def test_strings_come_in_order_at_any_depth(self):
        value = {"a": ["b", {"c": "d"}], "e": "f"}
        self.assertEqual(list(pii_rules._strings(value)), ["a", "b", "c", "d", "e", "f"])
        deep = "x@example.com"
        for _ in range(5000):
            deep = [deep]
        self.assertEqual(list(pii_rules._strings(deep)), ["x@example.com"])
        self.assertIsNone(pii_rules.check("tool", "webhook", "[" * 100000, None))

    def test_long_text_stays_linear(self):
        # Adversarial shapes for a regex engine: long runs without a match.
        for chunk in ["a" * 1000 + " ", "1-" * 500 + " ", "@" * 1000 + " ", "+1 " * 300 + "x "]:
            text = chunk * 64
            start = time.perf_counter()
            pii_rules.count_pii(text)
            self.assertLess(time.perf_counter() - start, 0.5, chunk[:8])


class Decoding(unittest.TestCase):
    """What a receiver decodes is scanned too: the helpers, then the verdicts they give."""

    def test_decode_undoes_each_encoding(self):
        untouched = "50% off, %zz, \\u12, \\q \\\\ \\N{DIGIT ONE} \\101 é€"
        for encoded, plain in [
            ("alice%40example.com", "alice@example.com"),
            ("%2B33%206%2012", "+33 6 12"),
            # A byte is read as Latin-1: what matters here is ASCII.
            ("caf%E9 caf%C3%A9", "café cafÃ©"),
            ("dan\\u0040example.net", "dan@example.net"),
            ("dan\\x40example.net", "dan@example.net"),
            ("caf\\u00e9 \\u20ac \\ud800", "café € \ud800"),
            # One layer per call: the escapes spell an escape.
            ("\\u0025\\u0034\\u0030", "%40"),
            # What escapes nothing stays as it is, backslashes and all.
            (untouched, untouched),
        ]:
            with self.subTest(encoded):
                self.assertEqual(pii_rules.decode(encoded), plain)
        # In a form body `+` is a space and `%2B` a `+`.
        self.assertEqual(pii_rules.decode("a+b%2Bc", plus=True), "a b+c")
        self.assertEqual(pii_rules.decode("a+b%2Bc"), "a+b+c")

    def test_decodings_go_several_rounds(self):
        self.assertEqual(pii_rules.decodings("x%2540y"), {"x%40y", "x@y"})
        self.assertEqual(pii_rules.decodings("%252540"), {"%2540", "%40", "@"})
        self.assertEqual(pii_rules.decodings("\\u0025\\u0034\\u0030"), {"%40", "@"})
        self.assertEqual(pii_rules.decodings("plain"), set())
        self.assertEqual(pii_rules.decodings("06+12+34+56+78"), set())
        # In a form, `+` is a space; a `+` that was `%2B` is one to a receiver decoding twice.
        self.assertEqual(pii_rules.decodings("06+12+34+56+78", plus=True), {"06 12 34 56 78"})
        self.assertEqual(
            pii_rules.decodings("q=%2B1+555", plus=True), {"q=+1+555", "q=+1 555", "q= 1 555"}
        )

    def test_pieces_are_whole_runs_of_what_an_address_or_number_is_made_of(self):
        form = "email=alice%40example.com&phone=%2B33%206%2012%2034%2056%2078&n=06+12+34"
        self.assertEqual(
            pii_rules.pieces(form),
            (["alice%40example.com", "%2B33%206%2012%2034%2056%2078"], ["06+12+34"]),
        )
        self.assertEqual(
            pii_rules.pieces('{"m": "write to dan\\u0040example.net today"}'),
            (["write to dan\\u0040example.net today"], []),
        )
        # A `+` beside a space is not a form's space; with no `+` between digits, none is.
        self.assertEqual(pii_rules.pieces("tel=06+12+34, C++ is +33 6, i++"), ([], ["06+12+34"]))
        self.assertEqual(pii_rules.pieces("tel=06+12+34;i++"), ([], ["06+12+34", "i++"]))
        self.assertEqual(pii_rules.pieces("a=2+2&c=C++ 2+2"), ([], ["2+2"]))
        for text in ["50% off, i++ and a + b", "+33 6 12 34 56 78", "C++ 2+2", "%zz \\q"]:
            self.assertEqual(pii_rules.pieces(text), ([], []), text)

    def test_a_number_half_escaped_is_one_number(self):
        # A raw space beside an escaped digit: the piece, not the word, is decoded.
        reply = "+33 6 12 34 56 7\\u0038"
        self.assertIn("1 phone number", pii_rules.check("tui", None, "{}", reply))
        self.assertIn("1 e-mail address", pii_rules.check("tui", None, "{}", "bob%40example.com"))

    def test_what_is_found_both_as_written_and_decoded_counts_once(self):
        # As written the piece holds one address; decoded, two: it counts for two.
        text = "a@example.com%2Cb%40example.com, and c@example.org"
        self.assertEqual(
            pii_rules.check("tui", None, "{}", text),
            "the reply contains 3 e-mail addresses; approve sending them?",
        )
        self.assertEqual(
            pii_rules.check("tui", None, "{}", "see https://example.com/a%20b?x=bob@example.com"),
            "the reply contains 1 e-mail address; approve sending it?",
        )

    def test_decoded_text_past_its_cap_asks(self):
        # 12 KiB of `%41` as written (scanned again, on its own) and 4 KiB of `A` decoded.
        piece = "%41" * (pii_rules.MAX_DECODED_CHARS // 4 + 1)
        question = pii_rules.check("tool", "webhook", json.dumps({"body": piece}), None)
        self.assertEqual(
            question,
            "the webhook call sends encoded text that decodes to more than this gate checks "
            "for e-mail addresses and phone numbers (16 KiB); approve sending it?",
        )
        small = "%41" * (pii_rules.MAX_DECODED_CHARS // 4)
        self.assertIsNone(pii_rules.check("tool", "webhook", json.dumps({"body": small}), None))

    def test_encoded_text_stays_linear(self):
        for chunk in [
            "a" * 1000 + " ",
            "%" * 1000 + " ",
            "\\" * 1000 + " ",
            "+" * 1000 + " ",
            "a " * 500 + "%4",
            "a+" * 500 + " b",
            "%41" * 300 + ",",
        ]:
            text = chunk * 16
            start = time.perf_counter()
            pii_rules.check("tool", "webhook", json.dumps({"body": text}), None)
            self.assertLess(time.perf_counter() - start, 0.5, chunk[:8])


def fetch_alias(args):
    """`fetch`, the operator's alias of http-fetch, called with `args`."""
    identity = Identity("http-fetch", "0.1.0", "http-fetch", False, True)
    return pii_rules.check("tool", "fetch", json.dumps(args), None, identity, Effects())


class ByEffects(unittest.TestCase):
    """What a call sends is read from the host's effects and the tool behind the name, not only
    from the names the model used."""

    def test_an_alias_of_http_fetch_sends_every_argument(self):
        args = {"url": "https://api.example.org/x", "headers": {"X-Contact": "alice@example.com"}}
        self.assertEqual(
            fetch_alias(args),
            "the fetch call sends 1 e-mail address (in headers); approve sending it?",
        )
        self.assertIsNone(fetch_alias({"url": "https://api.example.org/x"}))

    def test_a_tool_that_fetches_a_url_sends_every_argument(self):
        # An MCP tool the operator mapped to a `url` effect, and a third-party tool declaring one.
        mcp = Identity("crm", "mcp", "create_contact", False, True)
        args = {"endpoint": "https://crm.example.org/c", "payload": {"tel": "+33 6 12 34 56 78"}}
        effects = Effects(urls=[UrlEffect(args["endpoint"])])
        self.assertEqual(
            pii_rules.check("tool", "crm-create", json.dumps(args), None, mcp, effects),
            "the crm-create call sends 1 phone number (in payload); approve sending it?",
        )
        beacon = Identity("beacons", "0.1.0", "beacon", False, True)
        target = "https://t.example.org/b?m=alice%40example.com"
        effects = Effects(urls=[UrlEffect(target)])
        self.assertEqual(
            pii_rules.check("tool", "beacon", json.dumps({"to": target}), None, beacon, effects),
            "the beacon call sends 1 e-mail address (in to); approve sending it?",
        )
        # Without the effect the same call is judged by its argument names only.
        self.assertIsNone(pii_rules.check("tool", "beacon", json.dumps({"to": target}), None))

    def test_a_url_the_args_do_not_hold_is_scanned_on_its_own(self):
        effects = Effects(urls=[UrlEffect("https://t.example.org/?m=bob@example.com")])
        self.assertEqual(
            pii_rules.check("tool", "ping", "{}", None, None, effects),
            "the ping call sends 1 e-mail address (in the URL it fetches); approve sending it?",
        )

    def test_a_program_sends_its_arguments_and_its_standard_input(self):
        runner = Identity("runners", "0.1.0", "runner", False, True)
        line = "curl -d email=alice@example.com https://api.example.org/x"
        args = json.dumps({"command": line})
        effects = Effects(programs=[ProgramRun("curl", line.split()[1:], line)])
        self.assertEqual(
            pii_rules.check("tool", "runner", args, None, runner, effects),
            "the runner call sends 1 e-mail address (in the arguments of curl); approve sending "
            "it?",
        )
        effects = Effects(programs=[ProgramRun("mail", ["-s", "hi"], None, "ring 555-123-4567")])
        self.assertEqual(
            pii_rules.check("tool", "runner", "{}", None, runner, effects),
            "the runner call sends 1 phone number (in the standard input of mail); approve "
            "sending it?",
        )
        # Arguments are joined by spaces, as `echo` prints them.
        split = Effects(programs=[ProgramRun("echo", ["+33", "6", "12", "34", "56", "78"])])
        self.assertIn("1 phone number", pii_rules.check("tool", "x", "{}", None, None, split))
        harmless = Effects(programs=[ProgramRun("git", ["log", "-n", "5"], None, "")])
        self.assertIsNone(pii_rules.check("tool", "x", "{}", None, None, harmless))

    def test_a_program_name_is_quoted_only_when_it_holds_nothing_personal(self):
        for name in ["bob@example.com", "0612345678", "a b", "x" * 41]:
            effects = Effects(programs=[ProgramRun(name, ["alice@example.com"])])
            question = pii_rules.check("tool", "x", "{}", None, None, effects)
            self.assertIn("(in the arguments of a program)", question, name)

    def test_what_the_args_already_hold_is_not_counted_twice(self):
        url = "https://api.example.org/x?m=alice@example.com"
        effects = Effects(urls=[UrlEffect(url)])
        question = pii_rules.check(
            "tool", "http-fetch", json.dumps({"url": url}), None, None, effects
        )
        self.assertEqual(
            question, "the http-fetch call sends 1 e-mail address (in url); approve sending it?"
        )
        # A body that is also the program's standard input, two runs of one program.
        body = "call 555-123-4567"
        run = ProgramRun("curl", ["-d", "@-"], None, body)
        effects = Effects(programs=[run, run])
        self.assertEqual(
            pii_rules.check("tool", "post", json.dumps({"body": body}), None, None, effects),
            "the post call sends 1 phone number (in body); approve sending it?",
        )

    def test_a_reply_without_text_sends_its_args(self):
        self.assertEqual(
            pii_rules.check("tui", None, "to bob@example.com", None),
            "the reply contains 1 e-mail address; approve sending it?",
        )
        self.assertEqual(
            pii_rules.check("chat", None, '{"bob@example.com": [1, "555-123-4567"]}', ""),
            "the reply contains 1 e-mail address and 1 phone number; approve sending them?",
        )
        # Its text, when it has one, is what is sent.
        self.assertIsNone(pii_rules.check("tui", None, '{"m": "bob@example.com"}', "hi"))
        huge = json.dumps({"m": "x" * pii_rules.MAX_ARGS_CHARS})
        self.assertIn("more than this gate checks", pii_rules.check("tui", None, huge, None))


if __name__ == "__main__":
    unittest.main(verbosity=1)
