"""The rules of the `pii` gate, as plain functions: find e-mail addresses and phone numbers in
the text an action sends out, and say what a person should approve.

Nothing here touches the outside world (no files, clock, randomness, environment or stdio), so
the same action gives the same verdict natively (`python3 test_app.py`) and in the component,
where any such call would trap. `app.py` is only the glue to the WIT world.
"""

import json
import re

# Most characters one action may carry out before the gate stops looking and simply asks: it
# keeps the gate's cost (fuel, time) bounded whatever the input. A model's reply (at most 4096
# tokens) is smaller.
MAX_SCAN_CHARS = 64 * 1024
# Longest `args` (JSON text) the gate parses at all.
MAX_ARGS_CHARS = 2 * MAX_SCAN_CHARS

# Tools whose every argument leaves the machine.
SENDING_TOOLS = frozenset(["http-fetch"])
# Arguments that carry data out, whatever the tool.
OUTGOING_KEYS = ("body", "content", "text")

# An e-mail address, found from its `@` (a literal the regex engine skips to fast): the character
# before it must end a local part (a letter, digit or `_%+-`), and the domain after it is matched
# in full: labels of letters, digits and inner `-`, then a top-level domain of letters. Only the
# count matters, so `findall` does all the work in C. Every repetition is bounded (a label gives
# back at most 63 characters), so a scan costs time linear in the text's length.
_EMAIL = re.compile(
    r"@(?<=[A-Za-z0-9_%+-]@)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}"
    r"(?![A-Za-z0-9-]|\.[A-Za-z0-9])",
    re.ASCII,
)

# A phone number, in the formats people write: international (+33 6 12 34 56 78,
# +1 (555) 123-4567), North American ((555) 123-4567, 555-123-4567, 555.123.4567) and national
# numbers starting with 0 (06 12 34 56 78, 0612345678, 020 7946 0958, 030 12345678).
# Never the middle of a longer number, a word, a version or an e-mail address (the look-arounds:
# so the digits of `0612345678@sms.example.com` are not a phone number), and the atomic group
# commits to the first shape that fits, so nothing backtracks far. Dates (2026-11-22), times,
# versions (1.2.3.4), IPs, prices and bare digit runs have none of these shapes. `_PHONE` only
# runs inside the spans `_CANDIDATE` finds: runs of 8 or more digits and separators, which the
# regex engine skips to quickly (its first character is a class), so ordinary prose costs little.
_CANDIDATE = re.compile(r"[+(0-9][0-9 ().+-]{7,}", re.ASCII)
_PHONE = re.compile(
    r"""
    (?<![\w+.@-])
    (?>
        \+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,7}
      | \(\d{2,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}
      | \d{3}([ .-])\d{3}\1\d{4}
      | 0\d([ .-]?)\d{2}\2\d{2}\2\d{2}\2\d{2}
      | 0\d{2,4}[ -]\d{3,4}[ -]?\d{3,4}
    )
    (?![\w+@%]|[.-][\w%+-])
    """,
    re.VERBOSE | re.ASCII,
)


def count_emails(text):
    """How many e-mail addresses `text` holds."""
    return len(_EMAIL.findall(text))


def count_phones(text):
    """How many phone numbers `text` holds."""
    count = 0
    for c in _CANDIDATE.finditer(text):
        # `_PHONE` looks one character behind the candidate and one past it.
        for m in _PHONE.finditer(text, c.start(), min(c.end() + 1, len(text))):
            number = m.group()
            digits = sum(map(str.isdigit, number))
            if (8 if number[0] == "+" else 9) <= digits <= 15:
                count += 1
    return count


def count_pii(text):
    """(e-mail addresses, phone numbers) found in `text`."""
    return count_emails(text), count_phones(text)


def _strings(value):
    """Every string in a JSON value (object keys included), depth first, in order. Iterative:
    no nesting depth reaches Python's recursion limit."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for k, item in reversed(v.items()):
                stack += [item, k]
        elif isinstance(v, list):
            stack += reversed(v)


def _plural(n, one, many):
    return f"{n} {one if n == 1 else many}"


def _what(emails, phones):
    parts = []
    if emails:
        parts.append(_plural(emails, "e-mail address", "e-mail addresses"))
    if phones:
        parts.append(_plural(phones, "phone number", "phone numbers"))
    return " and ".join(parts)


def outgoing(tool, args):
    """The strings a tool action sends out, as (argument name, [strings]) pairs: every string of
    `http-fetch`'s arguments, or the `body`, `content` and `text` arguments of any other tool.
    `args` is the JSON text of the arguments; text that is not a JSON object is scanned whole for
    a sending tool and ignored for the others. (A reply's text is scanned by `check`.)
    """
    try:
        parsed = json.loads(args)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        parsed = None
    if not isinstance(parsed, dict):
        return [("arguments", [args])] if tool in SENDING_TOOLS else []
    found = []
    for key, value in parsed.items():
        if tool in SENDING_TOOLS or key in OUTGOING_KEYS:
            found.append((key, list(_strings(value))))
    return found


def check(target, tool, args, text):
    """The gate's decision: None to pass, or the question a person must answer before the action
    goes out. It names what kind of personal data was found and how much, never the data. Past
    `MAX_SCAN_CHARS` it does not look, and asks.

    `target`, `tool`, `args` (JSON text) and `text` are the action's fields.
    """
    if target != "tool":
        if not text:
            return None
        what = "the reply"
        sources = [("reply", [text])]
    elif tool:
        what = f"the {tool} call"
        if len(args) > MAX_ARGS_CHARS:
            return _too_long(what, len(args))
        sources = outgoing(tool, args)
    else:
        return None
    # One text per source: a newline ends any address or number, so joining loses none and
    # scanning costs the same for one long string as for many short ones.
    texts = [(where, "\n".join(strings)) for where, strings in sources]
    size = sum(len(t) for _, t in texts)
    if size > MAX_SCAN_CHARS:
        return _too_long(what, size)
    emails = phones = 0
    fields = []
    for where, t in texts:
        e, p = count_pii(t)
        if e or p:
            fields.append(where)
            emails, phones = emails + e, phones + p
    if not fields:
        return None
    them = _them(emails + phones)
    if target != "tool":
        return f"the reply contains {_what(emails, phones)}; approve sending {them}?"
    return (
        f"{what} sends {_what(emails, phones)} (in {', '.join(fields)}); approve sending {them}?"
    )


def _too_long(what, size):
    return (
        f"{what} sends {size // 1024} KiB of text, more than this gate checks for e-mail "
        f"addresses and phone numbers ({MAX_SCAN_CHARS // 1024} KiB); approve sending it?"
    )


def _them(n):
    return "it" if n == 1 else "them"
