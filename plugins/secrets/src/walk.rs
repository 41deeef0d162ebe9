//! Where to look: every string of an action, with a readable place for each
//! (`args.files[2].content`, `text`).

use serde_json::Value;

use crate::names::{find_assignment, find_in_url, is_placeholder, is_secret_name};
use crate::tokens::find_token;

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

/// The kind of the first secret in `text`, whatever its shape.
pub fn scan_text(text: &str) -> Option<String> {
    if let Some(kind) = find_token(text) {
        return Some(kind.into());
    }
    if let Some(kind) = find_in_url(text) {
        return Some(kind);
    }
    find_assignment(text).map(|name| format!("a .env-style assignment of {name}"))
}

/// The first secret in a JSON value, with `place` naming the value itself.
pub fn scan_json<'a>(value: &'a Value, place: &str) -> Option<Hit<'a>> {
    let hit = |kind: String, place: String, text: &'a str| {
        Some(Hit {
            finding: Finding::new(kind, place),
            text,
        })
    };
    match value {
        Value::String(s) => scan_text(s).and_then(|kind| hit(kind, place.into(), s)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| scan_json(item, &format!("{place}[{i}]"))),
        Value::Object(map) => {
            for (key, item) in map {
                // The key is checked before it is used to name a place.
                if let Some(kind) = scan_text(key) {
                    return hit(kind, format!("a key of {place}"), key);
                }
                let inner = format!("{place}{}", show_key(key));
                // The value's own shape first (a JWT is more telling than "a credential").
                if let Some(found) = scan_json(item, &inner) {
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
