//! Text as its receiver reads it: a server percent-decodes a URL's path and query and a form
//! body, a JSON parser reads a body's strings, an interpreter undoes `\u005f` and `\x5f` in a
//! string literal. A secret written `ghp%5F…` or `ghp\u005f…` is the same secret once read, so
//! [`crate::walk::scan_text`] scans these forms as well as the text as written.
//!
//! A `+` is not read as a space here: no token holds one, and a base64 value does.

use serde_json::Value;

/// `text` with every percent-encoded byte (`%5F`; bytes that are not UTF-8 become U+FFFD),
/// every `\uXXXX` and every `\xXX` undone; `None` when it holds none of them.
pub fn unescaped(text: &str) -> Option<String> {
    let b = text.as_bytes();
    if !b.iter().any(|&c| c == b'%' || c == b'\\') {
        return None;
    }
    let mut out = Vec::with_capacity(b.len());
    let mut changed = false;
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match undo(b, i, &mut out) {
            Some(len) => {
                i += len;
                changed = true;
            }
            None => {
                out.push(c);
                i += 1;
            }
        }
    }
    changed.then(|| String::from_utf8_lossy(&out).into_owned())
}

/// The JSON value `text` holds when it is a JSON object or array (a request body, a file's
/// content); `None` otherwise.
pub fn json(text: &str) -> Option<Value> {
    let start = text.trim_start();
    if !(start.starts_with('{') || start.starts_with('[')) {
        return None;
    }
    serde_json::from_str(text).ok()
}

/// Undo the escape that starts at `b[i]`, if one does, onto `out`: how many bytes it took.
fn undo(b: &[u8], i: usize, out: &mut Vec<u8>) -> Option<usize> {
    match (b.get(i).copied()?, b.get(i + 1).copied()) {
        (b'%', _) => {
            out.push(u8::try_from(hex(b, i + 1, 2)?).ok()?);
            Some(3)
        }
        (b'\\', Some(b'u')) => {
            push_char(out, hex(b, i + 2, 4)?);
            Some(6)
        }
        (b'\\', Some(b'x')) => {
            push_char(out, hex(b, i + 2, 2)?);
            Some(4)
        }
        _ => None,
    }
}

/// The number written by the `n` hex digits at `b[at..]`.
fn hex(b: &[u8], at: usize, n: usize) -> Option<u32> {
    b.get(at..at + n)?.iter().try_fold(0, |value, &d| {
        Some(value * 16 + char::from(d).to_digit(16)?)
    })
}

/// `code` as UTF-8 onto `out`; U+FFFD for a surrogate, which no string holds alone.
fn push_char(out: &mut Vec<u8>, code: u32) {
    let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
    let mut buf = [0; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::{json, unescaped};

    #[test]
    fn each_escape_is_undone() {
        for (text, plain) in [
            ("ghp%5Fab", "ghp_ab"),
            ("a%2fb%2Fc", "a/b/c"),
            ("caf%C3%A9", "café"),
            ("bad %FF byte", "bad \u{FFFD} byte"),
            ("ghp\\u005fab", "ghp_ab"),
            ("ghp\\x5fab", "ghp_ab"),
            ("\\u20ac \\ud800", "€ \u{FFFD}"),
            // One layer at a time: `%255F` is `%5F`.
            ("%255F", "%5F"),
            ("\\u0025\\u0035\\u0046", "%5F"),
            // What escapes nothing stays, beside what does.
            ("50% %zz %4 \\u12 \\q %41", "50% %zz %4 \\u12 \\q A"),
        ] {
            assert_eq!(unescaped(text).as_deref(), Some(plain), "{text}");
        }
    }

    #[test]
    fn text_without_an_escape_has_no_other_form() {
        for text in [
            "", "plain", "50% off", "%zz", "\\q", "%", "\\", "%4", "\\u12", "\\x",
        ] {
            assert_eq!(unescaped(text), None, "{text:?}");
        }
    }

    #[test]
    fn only_an_object_or_an_array_is_read_as_json() {
        assert!(json(" {\"a\": \"b\\u005fc\"}").is_some_and(|v| v["a"] == "b_c"));
        assert!(json("[1, 2]").is_some());
        for text in [
            "\"a string\"",
            "12",
            "null",
            "{not json",
            "[1,",
            "x {\"a\": 1}",
        ] {
            assert!(json(text).is_none(), "{text}");
        }
    }
}
