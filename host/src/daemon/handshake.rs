//! The handshake's frames (the hello, the auth) as the daemon reads them: only the fields it
//! reads, each kept only when it is what the daemon reads there (text, a whole number).
//! Anything else in the frame is skipped as it is parsed, never built into a tree: a
//! connection that has not authenticated holds a few short strings while it waits, not what
//! its 4 KiB could parse into (hundreds of `{}` are a B-tree node each, ~400 KB).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::protocol::ProtocolError;

/// A handshake frame: `{"type": "hello", "version", "client", "nonce"}` or `{"type": "auth",
/// "approver"}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Handshake {
    /// `type`: `hello` or `auth`.
    #[serde(rename = "type")]
    pub kind: Field,
    /// The hello's protocol version.
    pub version: Field,
    /// What the client calls itself (the hello).
    pub client: Field,
    /// The client's nonce (the hello).
    pub nonce: Field,
    /// The approver proof (the auth, optional).
    pub approver: Field,
}

impl Handshake {
    /// A handshake frame's payload, read.
    ///
    /// # Errors
    /// [`ProtocolError::BadJson`] when it is not JSON, [`ProtocolError::BadMessage`] when it
    /// is JSON but not an object (or names a field twice).
    pub(super) fn parse(payload: &[u8]) -> Result<Handshake, ProtocolError> {
        // serde would take an array too, as the fields in order.
        if payload.trim_ascii_start().starts_with(b"[") {
            return Err(ProtocolError::BadMessage(
                "a handshake message is a JSON object, not an array".into(),
            ));
        }
        serde_json::from_slice(payload).map_err(|e| match e.classify() {
            serde_json::error::Category::Data => ProtocolError::BadMessage(format!(
                "a handshake message is a JSON object, each field once: {e}"
            )),
            _ => ProtocolError::BadJson(e.to_string()),
        })
    }
}

/// One field of a [`Handshake`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) enum Field {
    /// Not in the frame, or `null`.
    #[default]
    Missing,
    /// A string.
    Text(String),
    /// A whole number, 0 or more.
    Number(u64),
    /// Anything else (a negative or fractional number, a boolean, an array, an object):
    /// skipped, not kept.
    Other,
}

impl Field {
    /// The text, when it is a string.
    pub fn text(&self) -> Option<&str> {
        match self {
            Field::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The number, when it is a whole number.
    pub fn number(&self) -> Option<u64> {
        match self {
            Field::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// How an error shows it: a string as JSON (quoted), a number, `null`, or that it was
    /// something else.
    pub fn shown(&self) -> String {
        match self {
            Field::Missing => "null".into(),
            Field::Text(t) => serde_json::Value::from(t.as_str()).to_string(),
            Field::Number(n) => n.to_string(),
            Field::Other => "a value that is not a string".into(),
        }
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        deserializer.deserialize_any(FieldVisitor)
    }
}

/// Reads a [`Field`], skipping what it does not keep.
struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
        Ok(Field::Text(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Field, E> {
        Ok(Field::Text(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Field, E> {
        Ok(Field::Number(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Field, E> {
        Ok(u64::try_from(v).map_or(Field::Other, Field::Number))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Field, E> {
        Ok(Field::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Field, E> {
        Ok(Field::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Field, E> {
        Ok(Field::Missing)
    }

    fn visit_none<E: de::Error>(self) -> Result<Field, E> {
        Ok(Field::Missing)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Field, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Field, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Field::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hello_keeps_only_the_fields_read_as_what_they_are_read_as() {
        let padding = vec![serde_json::json!({ "": 0 }); 500];
        let hello = serde_json::json!({
            "type": "hello", "version": 2, "client": "me", "nonce": "ab",
            "capabilities": ["events"], "pad": padding,
        });
        let parsed = Handshake::parse(hello.to_string().as_bytes()).expect("a hello");
        assert_eq!(parsed.kind.text(), Some("hello"));
        assert_eq!(parsed.version.number(), Some(2));
        assert_eq!(parsed.client.text(), Some("me"));
        assert_eq!(parsed.nonce.text(), Some("ab"));
        assert_eq!(parsed.approver, Field::Missing);

        let odd = br#"{"type": {"a": [1, 2]}, "version": -2, "client": null, "nonce": 2.5}"#;
        let parsed = Handshake::parse(odd).expect("an object");
        assert_eq!(parsed.kind, Field::Other);
        assert_eq!(parsed.version, Field::Other);
        assert_eq!(parsed.client, Field::Missing);
        assert_eq!(parsed.nonce, Field::Other);
        assert_eq!(Field::Text("re\"q".into()).shown(), r#""re\"q""#);
    }

    #[test]
    fn what_is_not_a_json_object_is_refused_saying_so() {
        assert!(matches!(
            Handshake::parse(b"}}}"),
            Err(ProtocolError::BadJson(_))
        ));
        for not_an_object in [&br#""hello""#[..], br#" ["hello", 2, "c", "ab"]"#] {
            assert!(matches!(
                Handshake::parse(not_an_object),
                Err(ProtocolError::BadMessage(_))
            ));
        }
        assert!(matches!(
            Handshake::parse(br#"{"type": "hello", "type": "auth"}"#),
            Err(ProtocolError::BadMessage(_))
        ));
    }
}
