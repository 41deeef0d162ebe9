"""Native tests of the `pii` gate: `python3 plugins/pii/test_app.py` (plain CPython 3.11+, no
componentize-py needed). Runs every case of `cases.json` through `pii_rules.check`, then through
`app.Gate` with stand-ins for the generated `wit_world` bindings, and a few properties besides.
Exits non-zero on the first failure set.
"""

import json
import os
import sys
import time
import types
import unittest
from dataclasses import dataclass
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
    wit_world.exports, wit_world.imports, imports.types = exports, imports, wtypes
    sys.modules.update(
        {
            "wit_world": wit_world,
            "wit_world.exports": exports,
            "wit_world.imports": imports,
            "wit_world.imports.types": wtypes,
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
                question = pii_rules.check(*fields(case["action"]))
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
                verdict = gate.check(wtypes.Action(target, tool, args, text, None), signal)
                if case["expect"] == "pass":
                    self.assertIsInstance(verdict, wtypes.Verdict_Pass)
                else:
                    self.assertIsInstance(verdict, wtypes.Verdict_RequireApproval)
                    self.assertEqual(verdict.value, pii_rules.check(target, tool, args, text))


class Rules(unittest.TestCase):
    def test_the_question_never_echoes_the_data(self):
        for case in CASES:
            question = pii_rules.check(*fields(case["action"])) or ""
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


if __name__ == "__main__":
    unittest.main(verbosity=1)
