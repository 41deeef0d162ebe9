//! Where to look: every string of an action, with a readable place for each
//! (`args.files[2].content`, `text`), as written and as its receiver would decode it.

use serde_json::Value;

use crate::decode;
use crate::names::{find_assignment, find_in_form, find_in_url, is_placeholder, is_secret_name};
use crate::tokens::find_token;

/// How many layers of encoding a string is read through: a JSON body, then a percent-encoded
/// URL in one of its strings; a URL encoded twice.
const ROUNDS: usize = 2;

/// A secret found in an action: what kind, where, and where it would go. None of them holds
/// any of the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What was found, for a person: `"a GitHub token"`.
    pub kind: String,
    /// Where: `"args.content"`, `"a key of args.env"`, `"text"`, `"argument 2 of curl"`.
    pub place: String,
    /// Where the action would take it, from its effects; `None` when they do not say.
    pub dest: Option<Destination>,
}

impl Finding {
    /// A finding of `kind` at `place`, going nowhere known.
    pub fn new(kind: String, place: impl Into<String>) -> Finding {
        Finding {
            kind,
            place: place.into(),
            dest: None,
        }
    }
}

/// Where a secret would go, for a person: `would {verb} {kind} {to}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    /// `write`, `send` or `pass`.
    pub verb: &'static str,
    /// `to /workspace/creds.txt`, `to host example.org`, `to the program curl`.
    pub to: String,
}

/// A secret found in a JSON value, with the string it was found in.
pub struct Hit<'a> {
    /// What and where.
    pub finding: Finding,
    /// The string (value or key) that holds it.
    pub text: &'a str,
}

/// The kind of the first secret in `text`, whatever its shape, as written or as its receiver
/// would decode it ([`decode`]).
pub fn scan_text(text: &str) -> Option<String> {
    scan_decoded(text, ROUNDS)
}

/// The kind of the first secret in `text` as written, else in what it decodes to, through at
/// most `rounds` layers: a JSON object or array is read as JSON (its keys and strings, each
/// scanned in turn, and values of secret-named keys, as in the args), other text with its
/// escapes undone.
fn scan_decoded(text: &str, rounds: usize) -> Option<String> {
    if let Some(kind) = scan_plain(text) {
        return Some(kind);
    }
    let rounds = rounds.checked_sub(1)?;
    if let Some(value) = decode::json(text) {
        // The JSON parser has undone the text's escapes: its strings are scanned as they read.
        return scan_json_in(&value, "", rounds).map(|hit| hit.finding.kind);
    }
    scan_decoded(&decode::unescaped(text)?, rounds)
}

/// The kind of the first secret in `text` as written.
fn scan_plain(text: &str) -> Option<String> {
    if let Some(kind) = find_token(text) {
        return Some(kind.into());
    }
    if let Some(kind) = find_in_url(text).or_else(|| find_in_form(text)) {
        return Some(kind);
    }
    find_assignment(text).map(|name| format!("a .env-style assignment of {name}"))
}

/// The first secret in a JSON value, with `place` naming the value itself.
pub fn scan_json<'a>(value: &'a Value, place: &str) -> Option<Hit<'a>> {
    scan_json_in(value, place, ROUNDS)
}

/// [`scan_json`], each string read through at most `rounds` layers of encoding.
fn scan_json_in<'a>(value: &'a Value, place: &str, rounds: usize) -> Option<Hit<'a>> {
    let hit = |kind: String, place: String, text: &'a str| {
        Some(Hit {
            finding: Finding::new(kind, place),
            text,
        })
    };
    match value {
        Value::String(s) => scan_decoded(s, rounds).and_then(|kind| hit(kind, place.into(), s)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| scan_json_in(item, &format!("{place}[{i}]"), rounds)),
        Value::Object(map) => {
            for (key, item) in map {
                // The key is checked before it is used to name a place.
                if let Some(kind) = scan_decoded(key, rounds) {
                    return hit(kind, format!("a key of {place}"), key);
                }
                let inner = format!("{place}{}", show_key(key));
                // The value's own shape first (a JWT is more telling than "a credential").
                if let Some(found) = scan_json_in(item, &inner, rounds) {
                    return Some(found);
                }
                if let Value::String(s) = item
                    && let Some(kind) = keyed(key, s)
                {
                    return hit(kind, inner, s);
                }
            }
            None
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// A secret given as the value of a key that names it: `{"password": "..."}`,
/// `{"headers": {"Authorization": "Bearer ..."}}`.
pub fn keyed(key: &str, value: &str) -> Option<String> {
    let is_auth = key.eq_ignore_ascii_case("authorization")
        || key.eq_ignore_ascii_case("proxy-authorization");
    if is_auth {
        // `Bearer <credential>`, `Basic <credential>`, or a bare credential.
        let credential = value.split_whitespace().last().unwrap_or_default();
        return (credential.len() >= 8 && !is_placeholder(credential))
            .then(|| "an Authorization header credential".into());
    }
    (is_secret_name(key) && !is_placeholder(value))
        .then(|| format!("a value for the secret-named key {key}"))
}

/// `.name` for a plain key, `[…]` for one a person could not read at a glance.
fn show_key(key: &str) -> String {
    let plain = !key.is_empty()
        && key.len() <= 48
        && key
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'));
    if plain {
        format!(".{key}")
    } else {
        "[…]".into()
    }
}
