//! What a receiver decodes (`pii_rules.decode`, `decodings`, `pieces` and `_count`): a server
//! percent-decodes a URL's path and query and a form body (`+` for a space there), an
//! interpreter or a JSON parser undoes `\u0040` and `\x40`. An address or a number hidden that
//! way is still sent, so each text is scanned as written and as decoded.
//!
//! Only the pieces that may hide one are decoded: a piece is a maximal run of the characters an
//! address or a number is made of, or that the detectors look at around one (`piece_char`);
//! any other character ends both, so what is found in a piece on its own is what is found there
//! in the whole text. Python finds the pieces with possessive regexes (`_ESCAPED_PIECE`,
//! `_FORM_PIECE`), which match exactly the whole runs described at [`pieces`].

use crate::count_pii;

/// Rounds of decoding tried on one piece: `%2540` is `%40` after one, `@` after two
/// (`pii_rules.DECODE_ROUNDS`).
pub const DECODE_ROUNDS: usize = 3;

/// A character of a piece (`pii_rules._PIECE_CHARS`, `[A-Za-z0-9_ ().+%@\\-]`).
fn piece_char(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '_' | ' ' | '(' | ')' | '.' | '+' | '%' | '@' | '\\' | '-'
        )
}

/// The value of the `n` hex digits at `at` in `b`, if they are all there.
fn hex(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let digits = b.get(at..at + n)?;
    digits.iter().try_fold(0, |value, &d| {
        Some(value * 16 + char::from(d).to_digit(16)?)
    })
}

/// `text` with its `\uXXXX` and `\xXX` escapes and its percent-encoded bytes undone, and, with
/// `plus`, each `+` read as a space first (as a form body is decoded, where `%2B` is `+`)
/// (`pii_rules.decode`). A percent-encoded byte is read as the code point of that number
/// (Latin-1), as Python does. Every other character stays as it is, backslashes included.
///
/// Python doubles each backslash that starts no escape, turns each `%XX` into `\xXX` and runs
/// one `unicode_escape` pass; that undoes exactly the escapes this one left-to-right pass does.
/// A `\u` escape of a lone surrogate gives U+FFFD here (Python keeps the surrogate): one code
/// point either way, which no rule of the gate matches, as in [`crate::json`].
pub fn decode(text: &str, plus: bool) -> String {
    let spaced;
    let text = if plus {
        spaced = text.replace('+', " ");
        spaced.as_str()
    } else {
        text
    };
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    // Every escape starts with an ASCII byte, so `i` and `copied` stay on character boundaries.
    let (mut i, mut copied) = (0, 0);
    while i < b.len() {
        let escape = match b[i] {
            b'\\' => match b.get(i + 1) {
                Some(b'u') => hex(b, i + 2, 4).map(|code| (code, 6)),
                Some(b'x') => hex(b, i + 2, 2).map(|code| (code, 4)),
                _ => None,
            },
            b'%' => hex(b, i + 1, 2).map(|code| (code, 3)),
            _ => None,
        };
        match escape {
            Some((code, len)) => {
                out.push_str(&text[copied..i]);
                out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// The texts `text` reads as once decoded, other than itself, in the order found
/// (`pii_rules.decodings`, a set there): each of up to [`DECODE_ROUNDS`] rounds decodes what the
/// one before gave, and with `plus` (a form body, a query) both with and without reading `+` as
/// a space. Stops after a round once the forms found hold more than `limit` characters.
pub fn decodings(text: &str, plus: bool, limit: usize) -> Vec<String> {
    let mut seen = vec![text.to_owned()];
    // The forms the last round found, as places in `seen`: the first round decodes `text`.
    let mut frontier = 0..1;
    let mut size = 0;
    for _ in 0..DECODE_ROUNDS {
        let start = seen.len();
        for i in frontier {
            let plain = decode(&seen[i], false);
            let as_form = plus.then(|| decode(&seen[i], true));
            for form in std::iter::once(plain).chain(as_form) {
                if !seen.contains(&form) {
                    size += form.chars().count();
                    seen.push(form);
                }
            }
        }
        if size > limit {
            break;
        }
        frontier = start..seen.len();
    }
    seen.split_off(1)
}

/// Whether `text` may hide anything escaped: it holds a percent-encoded byte or the start of a
/// `\u`/`\x` escape (`pii_rules._ESCAPE_HINT`, `%[0-9A-Fa-f]{2}|\\[ux][0-9A-Fa-f]`).
fn hints_escape(text: &str) -> bool {
    text.as_bytes().windows(3).any(|w| match w {
        [b'%', h1, h2] => h1.is_ascii_hexdigit() && h2.is_ascii_hexdigit(),
        [b'\\', b'u' | b'x', h] => h.is_ascii_hexdigit(),
        _ => false,
    })
}

/// Whether `text` may be a form's: it holds a `+` between digits, a form body's space
/// (`pii_rules._FORM_HINT`, `\+(?<=[0-9)]\+)[0-9(]`).
fn hints_form(text: &str) -> bool {
    text.as_bytes().windows(3).any(|w| match w {
        [before, b'+', after] => {
            (before.is_ascii_digit() || *before == b')')
                && (after.is_ascii_digit() || *after == b'(')
        }
        _ => false,
    })
}

/// The pieces of `text` that may be decoded, in order (`pii_rules.pieces`): (those holding a
/// `%` or a backslash, those holding a `+` and no space, where a form body's receiver reads `+`
/// as a space); none of a kind when `text` holds no hint of it (`hints_escape`,
/// `hints_form`).
pub fn pieces(text: &str) -> (Vec<&str>, Vec<&str>) {
    let escaped = (text.contains('%') || text.contains('\\')) && hints_escape(text);
    let form = text.contains('+') && hints_form(text);
    let (mut escapes, mut forms) = (Vec::new(), Vec::new());
    if escaped || form {
        // Piece characters are ASCII: splitting on every other character gives the whole runs.
        for run in text.split(|c: char| !piece_char(c)) {
            if escaped && run.contains(['%', '\\']) {
                escapes.push(run);
            }
            if form && run.contains('+') && !run.contains(' ') {
                forms.push(run);
            }
        }
    }
    (escapes, forms)
}

/// What [`count`] found in one text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    /// E-mail addresses, as written and decoded.
    pub emails: usize,
    /// Phone numbers, as written and decoded.
    pub phones: usize,
    /// Characters scanned besides the text as written: its pieces, as written and decoded.
    pub scanned: usize,
}

/// E-mail addresses and phone numbers in `text`, as written and as its receiver may decode it
/// (`pii_rules._count`); `None` when that would scan more than `budget` characters besides the
/// text as written (the caller then asks).
///
/// The pieces that may be decoded are joined (by newlines, which end any address or number) and
/// decoded together: the escaped ones, and the form ones with `+` as a space too. What a decoded
/// form holds beyond the same pieces as written is added to what the text holds as written,
/// taking the form that holds most, so nothing is counted twice and the count is never less
/// than what any form holds.
pub fn count(text: &str, budget: usize) -> Option<Counted> {
    let (emails, phones) = count_pii(text);
    let (escaped, form) = pieces(text);
    let mut scanned = 0;
    let mut decoded = Vec::new();
    for (group, plus) in [(escaped, false), (form, true)] {
        if group.is_empty() {
            continue;
        }
        let written = group.join("\n");
        scanned += written.chars().count();
        if scanned > budget {
            return None;
        }
        let forms = decodings(&written, plus, budget - scanned);
        scanned += forms.iter().map(|f| f.chars().count()).sum::<usize>();
        if scanned > budget {
            return None;
        }
        decoded.push((written, forms));
    }
    let (mut more_emails, mut more_phones) = (0, 0);
    for (written, forms) in &decoded {
        if forms.is_empty() {
            continue;
        }
        let (e0, p0) = count_pii(written);
        for form in forms {
            let (e, p) = count_pii(form);
            more_emails = more_emails.max(e.saturating_sub(e0));
            more_phones = more_phones.max(p.saturating_sub(p0));
        }
    }
    Some(Counted {
        emails: emails + more_emails,
        phones: phones + more_phones,
        scanned,
    })
}
