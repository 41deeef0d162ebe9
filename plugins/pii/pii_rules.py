"""The rules of the `pii` gate, as plain functions: find e-mail addresses and phone numbers in
what an action sends out, and say what a person should approve.

What an action sends out: a reply's text, or its args when it has none (the host's reply
actuators then send the args as JSON text); a tool call's data, found both by the tool's and the
arguments' names and by the effects the host derives from the tool's declared schema (the URLs
it fetches, the programs it runs with their arguments and standard input). Each text is scanned
as written and as its receiver may decode it (percent-encoding, `+` for a space in a form body,
`\\u0040`/`\\x40` string escapes).

Nothing here touches the outside world (no files, clock, randomness, environment or stdio), so
the same action gives the same verdict natively (`python3 test_app.py`) and in the component,
where any such call would trap. `app.py` is only the glue to the WIT world.
"""

import json
import re

# A codec `str.decode` finds by name at run time: componentize-py bundles only the modules a
# plugin imports, so without this `decode` raised LookupError and the gate trapped.
import encodings.unicode_escape  # noqa: F401

# Most characters one action may carry out before the gate stops looking and simply asks: it
# keeps the gate's cost (fuel, time) bounded whatever the input. A model's reply (at most 4096
# tokens) is smaller.
MAX_SCAN_CHARS = 64 * 1024
# Longest `args` (JSON text) the gate parses at all.
MAX_ARGS_CHARS = 2 * MAX_SCAN_CHARS
# Most characters the gate scans besides the text as written, for what it may hide (the pieces
# that may be decoded, as written and in each decoded form, see `_count`); past it, it asks. A
# quarter of the scan cap: the worst case found (64 KiB of phone numbers, some of them encoded,
# up to this cap) costs about 1.3 times what the scan cap alone costs at worst, counted in
# native instructions; the manifest's fuel allows 1.6 times that.
MAX_DECODED_CHARS = MAX_SCAN_CHARS // 4
# Rounds of decoding tried on one piece: `%2540` is `%40` after one, `@` after two.
DECODE_ROUNDS = 3

# Tools whose every argument leaves the machine (by the name called, or by the tool behind an
# alias); so does every argument of a tool whose effects fetch a URL.
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


# Decoding. A receiver decodes what it is sent: a server percent-decodes a URL's path and query
# and a form body (`+` for a space there), an interpreter or a JSON parser undoes `\u0040` and
# `\x40`. An address or a number hidden that way is still sent, so each text is scanned as
# written and as decoded. Only the pieces that may hide one are decoded: a piece is a run of the
# characters an address or a number is made of, or that the detectors look at around one
# (`_PIECE_CHARS`); any other character ends both, so what is found in a piece on its own is
# what is found there in the whole text, and a long text with one escaped URL costs one URL.
_PIECE_CHARS = r"A-Za-z0-9_ ().+%@\\-"
# What may hide an address or a number: a percent-encoded byte or a `\u`/`\x` escape; a `+`
# between digits (a form body's space: `06+12+34+56+78`). Most texts have neither, and these
# searches (after a plain `in`; the second skips to each `+` as the e-mail one skips to `@`)
# are all they cost.
_ESCAPE_HINT = re.compile(r"%[0-9A-Fa-f]{2}|\\[ux][0-9A-Fa-f]")
_FORM_HINT = re.compile(r"\+(?<=[0-9)]\+)[0-9(]")
# The pieces holding a `%` or a backslash, and the pieces holding a `+` but no space (a form
# body, a query: where `+` is a space). Each starts only where a piece starts and never gives
# back what it took (`*+`), so a search costs time linear in the text's length, in C.
_ESCAPED_PIECE = re.compile(rf"(?<![{_PIECE_CHARS}])[A-Za-z0-9_ ().+@-]*+[%\\][{_PIECE_CHARS}]*+")
_FORM_PIECE = re.compile(
    rf"(?<![{_PIECE_CHARS}])[A-Za-z0-9_().%@\\-]*+\+[A-Za-z0-9_().+%@\\-]*+(?![ ])"
)

# A backslash that starts no `\uXXXX` or `\xXX` escape, and a percent-encoded byte: `decode`
# doubles the one and turns the other into `\xXX`, so that one `unicode_escape` pass (in C, as
# are the substitutions) undoes every escape and leaves every other character as it was.
_LONE_BACKSLASH = re.compile(r"\\(?!u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2})")
_PERCENT_BYTE = re.compile(r"%([0-9A-Fa-f]{2})")


def decode(text, plus=False):
    """`text` with its `\\uXXXX` and `\\xXX` escapes and its percent-encoded bytes undone, and,
    with `plus`, each `+` read as a space first (as a form body is decoded, where `%2B` is `+`).
    A percent-encoded byte is read as the code point of that number (Latin-1): the same as UTF-8
    for the ASCII characters addresses and numbers are made of.
    """
    if plus:
        text = text.replace("+", " ")
    if "\\" not in text and "%" not in text:
        return text
    text = _PERCENT_BYTE.sub(r"\\x\1", _LONE_BACKSLASH.sub(r"\\\\", text))
    return text.encode("ascii", "backslashreplace").decode("unicode_escape")


def decodings(text, plus=False, limit=None):
    """The texts `text` reads as once decoded, other than itself: each of up to
    `DECODE_ROUNDS` rounds decodes what the one before gave, and with `plus` (a form body, a
    query) both with and without reading `+` as a space. Stops early once the forms found hold
    more than `limit` characters."""
    seen = {text}
    frontier = [text]
    size = 0
    for _ in range(DECODE_ROUNDS):
        found = []
        for t in frontier:
            for form in (decode(t), decode(t, True)) if plus else (decode(t),):
                if form not in seen:
                    seen.add(form)
                    found.append(form)
                    size += len(form)
        if limit is not None and size > limit:
            break
        frontier = found
    seen.discard(text)
    return seen


def pieces(text):
    """The pieces of `text` that may be decoded, in order: (those holding a `%` or a backslash,
    those holding a `+` and no space, where a form body's receiver reads `+` as a space); none
    when `text` holds no hint of either."""
    escaped = ("%" in text or "\\" in text) and _ESCAPE_HINT.search(text)
    form = "+" in text and _FORM_HINT.search(text)
    return (
        _ESCAPED_PIECE.findall(text) if escaped else [],
        _FORM_PIECE.findall(text) if form else [],
    )


def _count(text, budget):
    """(e-mail addresses, phone numbers, characters scanned besides `text`) in `text`, as
    written and as its receiver may decode it; `None` for the counts when that would scan more
    than `budget` characters (the caller then asks).

    The pieces that may be decoded are joined (by newlines, which end any address or number)
    and decoded together, in C: the escaped ones, and the form ones with `+` as a space too.
    What a decoded form holds beyond the same pieces as written is added to what the text holds
    as written, taking the form that holds most, so nothing is counted twice and the count is
    never less than what any form holds.
    """
    emails, phones = count_pii(text)
    decoded = []
    scanned = 0
    for group, plus in zip(pieces(text), (False, True)):
        if not group:
            continue
        written = "\n".join(group)
        scanned += len(written)
        if scanned > budget:
            return None, None, scanned
        forms = decodings(written, plus, budget - scanned)
        scanned += sum(map(len, forms))
        if scanned > budget:
            return None, None, scanned
        decoded.append((written, forms))
    more_emails = more_phones = 0
    for written, forms in decoded:
        if not forms:
            continue
        e0, p0 = count_pii(written)
        for form in forms:
            e, p = count_pii(form)
            more_emails, more_phones = max(more_emails, e - e0), max(more_phones, p - p0)
    return emails + more_emails, phones + more_phones, scanned


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


def _parsed(args):
    """`args` (JSON text) parsed, or None when it is not JSON."""
    try:
        return json.loads(args)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
        return None


def sends_everything(tool, identity=None, effects=None):
    """Does a call of `tool` send every argument out? Yes for a sending tool called by its name
    or through an alias (`identity`, the tool behind the name, as the host knows it), and for
    any tool whose effects fetch a URL (a third-party tool, an MCP tool the operator mapped)."""
    return (
        tool in SENDING_TOOLS
        or (identity is not None and identity.tool in SENDING_TOOLS)
        or bool(effects is not None and effects.urls)
    )


def outgoing(tool, args, identity=None, effects=None):
    """The strings a tool action sends out, as (where, [strings]) pairs: every string of the
    arguments of a tool that sends everything (`sends_everything`), or the `body`, `content` and
    `text` arguments of any other tool; then what its effects send that those strings do not
    already hold (`effect_sources`). `args` is the JSON text of the arguments; text that is not a
    JSON object is scanned whole for a tool that sends everything and ignored for the others.
    (A reply is scanned by `check`.)
    """
    everything = sends_everything(tool, identity, effects)
    parsed = _parsed(args)
    if not isinstance(parsed, dict):
        found = [("arguments", [args])] if everything else []
    else:
        found = [
            (key, list(_strings(value)))
            for key, value in parsed.items()
            if everything or key in OUTGOING_KEYS
        ]
    if effects is not None:
        found += effect_sources(effects, {s for _, strings in found for s in strings})
    return found


# A program's name as the gate may quote it in a question.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9._+-]{1,40}", re.ASCII)


def _program(name):
    """`name` for the question, or `a program` when it is not a plain word or holds personal
    data itself (the question never quotes any)."""
    plain = _PLAIN_NAME.fullmatch(name) and count_pii(name) == (0, 0)
    return name if plain else "a program"


def effect_sources(effects, scanned):
    """What an action's effects send out, as (where, [strings]) pairs, leaving out any string
    already in `scanned`: each URL it fetches (path and query included), and for each program
    it runs, its command line (the line as given, else its name and arguments joined by spaces,
    as `echo` prints them, so a number split over arguments is one number) and its standard
    input. Any program may send what it is given (curl, ssh, mail, git push)."""
    found = []
    for url in effects.urls:
        if url.url not in scanned:
            found.append(("the URL it fetches", [url.url]))
    for run in effects.programs:
        name = _program(run.program)
        line = run.line if run.line is not None else " ".join([run.program, *run.argv])
        if line not in scanned:
            found.append((f"the arguments of {name}", [line]))
        if run.stdin and run.stdin not in scanned:
            found.append((f"the standard input of {name}", [run.stdin]))
    return found


def check(target, tool, args, text, identity=None, effects=None):
    """The gate's decision: None to pass, or the question a person must answer before the action
    goes out. It names what kind of personal data was found and how much, never the data. Past
    `MAX_SCAN_CHARS` (or `MAX_DECODED_CHARS` of decoded text) it does not look, and asks.

    `target`, `tool`, `args` (JSON text) and `text` are the action's fields; `identity` (the
    tool behind the name: `.tool`) and `effects` (`.urls`, `.programs`) are what the host's
    `action-context` says of a tool call, None when it says nothing.
    """
    if target != "tool":
        what = "the reply"
        if text:
            sources = [("reply", [text])]
        else:
            # A reply without text sends its args, as JSON text: keys and values.
            if len(args) > MAX_ARGS_CHARS:
                return _too_long(what, len(args))
            parsed = _parsed(args)
            sources = [("reply", [args] if parsed is None else list(_strings(parsed)))]
    elif tool:
        what = f"the {tool} call"
        if len(args) > MAX_ARGS_CHARS:
            return _too_long(what, len(args))
        sources = outgoing(tool, args, identity, effects)
    else:
        return None
    # One text per source: a newline ends any address or number, so joining loses none and
    # scanning costs the same for one long string as for many short ones.
    texts = [(where, "\n".join(strings)) for where, strings in sources]
    size = sum(len(t) for _, t in texts)
    if size > MAX_SCAN_CHARS:
        return _too_long(what, size)
    emails = phones = decoded = 0
    fields = []
    for where, t in texts:
        e, p, d = _count(t, MAX_DECODED_CHARS - decoded)
        decoded += d
        if e is None:
            return _too_encoded(what)
        if e or p:
            if where not in fields:
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


def _too_encoded(what):
    return (
        f"{what} sends encoded text that decodes to more than this gate checks for e-mail "
        f"addresses and phone numbers ({MAX_DECODED_CHARS // 1024} KiB); approve sending it?"
    )


def _them(n):
    return "it" if n == 1 else "them"
