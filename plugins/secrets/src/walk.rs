//! Where to look: every string of an action, with a readable place for each
//! (`args.files[2].content`, `text`).

use serde_json::Value;

use crate::names::{find_assignment, find_in_url, is_placeholder, is_secret_name};
use crate::tokens::find_token;

/// A secret found in an action: what kind, and where. Neither holds any of the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What was found, for a person: `"a GitHub token"`.
    pub kind: String,
    /// Where: `"args.content"`, `"a key of args.env"`, `"text"`.
    pub place: String,
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
pub fn scan_json(value: &Value, place: &str) -> Option<Finding> {
    let found = |kind: String, place: String| Some(Finding { kind, place });
    match value {
        Value::String(s) => scan_text(s).and_then(|kind| found(kind, place.into())),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| scan_json(item, &format!("{place}[{i}]"))),
        Value::Object(map) => {
            for (key, item) in map {
                // The key is checked before it is used to name a place.
                if let Some(kind) = scan_text(key) {
                    return found(kind, format!("a key of {place}"));
                }
                let inner = format!("{place}{}", show_key(key));
                // The value's own shape first (a JWT is more telling than "a credential").
                if let Some(finding) = scan_json(item, &inner) {
                    return Some(finding);
                }
                if let Value::String(s) = item
                    && let Some(kind) = keyed(key, s)
                {
                    return found(kind, inner);
                }
            }
            None
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => None,
    }
}

/// A secret given as the value of a key that names it: `{"password": "..."}`,
/// `{"headers": {"Authorization": "Bearer ..."}}`.
fn keyed(key: &str, value: &str) -> Option<String> {
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
