//! Reading a provider's answer into the few fields its protocol needs, without building a tree
//! of the rest. An answer may be 16 MiB ([`super::stream::MAX_ANSWER`]), and read as a
//! `serde_json::Value` one of `[0,0,…]` takes sixteen times that, and more while its arrays
//! grow. Read into the protocol's own structs instead, unknown fields are skipped as they are
//! read, an array whose first element is all that counts keeps only it ([`First`]), and a
//! list the caller sized is refused past its size ([`AtMost`]).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserialize, DeserializeOwned, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::http::CallError;

/// The most bytes a tool call's arguments may take, as the answer wrote them. Models write a
/// few KiB; as a JSON tree they take up to sixteen times their text, once per retry.
pub const MAX_ARGUMENTS: usize = 1 << 20;

/// A leaf read as `T` when it is one, and as absent when it is anything else (a count sent as
/// a string, a null): the protocol's optional leaves. Only its own text is held while `T` is
/// tried on it.
#[derive(Debug)]
pub struct Lenient<T>(pub Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Ok(Lenient(serde_json::from_str(raw.get()).ok()))
    }
}

/// The first element of an array, read as `T`; the others are skipped as they are read. An
/// empty array is `None`.
#[derive(Debug)]
pub struct First<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Seq<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<First<T>, A::Error> {
                let first = seq.next_element()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(First(first))
            }
        }
        d.deserialize_seq(Seq(PhantomData))
    }
}

/// An array of at most `N` elements, refused as it is read past them.
#[derive(Debug)]
pub struct AtMost<T, const N: usize>(pub Vec<T>);

impl<'de, T: Deserialize<'de>, const N: usize> Deserialize<'de> for AtMost<T, N> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Seq<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>, const N: usize> Visitor<'de> for Seq<T, N> {
            type Value = AtMost<T, N>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an array of at most {N} elements")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<AtMost<T, N>, A::Error> {
                let mut all = Vec::new();
                while let Some(one) = seq.next_element()? {
                    if all.len() == N {
                        return Err(serde::de::Error::invalid_length(N + 1, &self));
                    }
                    all.push(one);
                }
                Ok(AtMost(all))
            }
        }
        d.deserialize_seq(Seq(PhantomData))
    }
}

/// What a provider's error says (an OpenAI-compatible stream's `error`, an Anthropic `error`
/// event's): its type and message, when they are strings.
#[derive(Debug, serde::Deserialize)]
pub struct ErrorSaid {
    /// `type`.
    #[serde(rename = "type", default)]
    pub kind: Lenient<String>,
    /// `message`.
    #[serde(default)]
    pub message: Lenient<String>,
}

/// `body` read as `T`.
///
/// # Errors
/// [`CallError::Malformed`] with what serde said: not JSON, or not the protocol's shape.
pub fn read<T: DeserializeOwned>(body: &[u8]) -> Result<T, CallError> {
    serde_json::from_slice(body).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Data => "not the protocol's shape",
            _ => "not JSON",
        };
        CallError::Malformed(format!("{what} ({})", said(&e)))
    })
}

/// What serde said of `e`, cut: a type error quotes the value it met, which may be megabytes
/// of an answer, and the error reaches logs, prompts and the journal.
pub fn said(e: &serde_json::Error) -> String {
    let text = e.to_string();
    if text.len() <= 300 {
        return text;
    }
    let head = &text[..text.floor_char_boundary(200)];
    format!("{head}… at line {} column {}", e.line(), e.column())
}

/// Tool call arguments as JSON text (`raw`, as the answer wrote them), read as a tree once
/// they are known to be no longer than [`MAX_ARGUMENTS`].
///
/// # Errors
/// [`CallError::Malformed`] when they are longer, or are not JSON.
pub fn arguments(raw: &str) -> Result<Value, CallError> {
    if raw.len() > MAX_ARGUMENTS {
        return Err(too_long(raw.len()));
    }
    serde_json::from_str(raw)
        .map_err(|e| CallError::Malformed(format!("tool call arguments are not JSON: {e}")))
}

/// The error for tool call arguments of `len` bytes.
pub fn too_long(len: usize) -> CallError {
    CallError::Malformed(format!(
        "tool call arguments of {len} bytes (at most {MAX_ARGUMENTS})"
    ))
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    struct Answer {
        #[serde(default)]
        count: Lenient<u64>,
        #[serde(default)]
        items: Option<First<Item>>,
    }

    #[derive(Deserialize)]
    struct Item {
        name: String,
    }

    #[test]
    fn a_leaf_of_another_type_is_absent_and_the_rest_is_read() {
        let a: Answer =
            read(br#"{"count": "7", "items": [{"name": "a"}], "x": [1, {"y": 2}]}"#).expect("read");
        assert!(a.count.0.is_none());
        assert_eq!(
            a.items.and_then(|f| f.0).map(|i| i.name).as_deref(),
            Some("a")
        );
        let a: Answer = read(br#"{"count": 7, "items": []}"#).expect("read");
        assert_eq!(a.count.0, Some(7));
        assert!(a.items.and_then(|f| f.0).is_none());
    }

    #[test]
    fn only_the_first_element_is_read_whatever_follows_it() {
        // The rest are skipped: they need not even be of the first one's type.
        let a: Answer = read(br#"{"items": [{"name": "a"}, 0, [], {"other": 1}]}"#).expect("read");
        assert_eq!(
            a.items.and_then(|f| f.0).map(|i| i.name).as_deref(),
            Some("a")
        );
        // Not an array: not the protocol, said as such.
        let e = read::<Answer>(br#"{"items": 3}"#).err().expect("refused");
        assert!(e.to_string().contains("an array"), "{e}");
    }

    #[test]
    fn an_error_quotes_little_of_a_long_value() {
        use crate::providers::{anthropic, openai};
        let long = "x".repeat(1 << 20);
        let whole = [
            openai::parse(format!(r#"{{"choices": "{long}"}}"#).as_bytes()).map(drop),
            anthropic::parse(format!(r#"{{"content": ["{long}"]}}"#).as_bytes()).map(drop),
        ];
        for e in whole {
            let e = e.expect_err("not the protocol").to_string();
            assert!(e.len() < 1024 && e.contains("at line 1"), "{:.2000}", e);
        }
    }

    #[test]
    fn a_streamed_error_is_told_by_its_type_and_message() {
        use crate::providers::stream::Fold;
        use crate::providers::{anthropic, openai, sse};
        let event = |data: &str| sse::Event {
            event: None,
            data: data.to_owned(),
        };
        let said = |e: Result<(), CallError>| e.expect_err("an error").to_string();
        let mut chunks = openai::Chunks::default();
        let e = said(chunks.event(&event(r#"{"error": {"message": "boom", "code": 500}}"#)));
        assert!(e.ends_with("stopped the answer: boom"), "{e}");
        let mut chunks = openai::Chunks::default();
        let e = said(chunks.event(&event(r#"{"error": "plain"}"#)));
        assert!(e.ends_with(r#"stopped the answer: "plain""#), "{e}");
        let mut events = anthropic::Events::default();
        let error =
            r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
        let e = said(events.event(&event(error)));
        assert!(
            e.ends_with("stopped the answer: overloaded_error: Overloaded"),
            "{e}"
        );
    }

    #[test]
    fn a_list_past_its_size_is_refused() {
        assert_eq!(read::<AtMost<u8, 2>>(b"[1, 2]").expect("two").0, [1, 2]);
        let e = read::<AtMost<u8, 2>>(b"[1, 2, 3]").expect_err("refused");
        assert!(e.to_string().contains("at most 2"), "{e}");
    }

    #[test]
    fn arguments_longer_than_the_cap_are_refused_before_they_are_read() {
        let long = format!("{{\"a\": \"{}\"}}", "x".repeat(MAX_ARGUMENTS));
        let e = arguments(&long).expect_err("refused");
        assert!(e.to_string().contains("at most 1048576"), "{e}");
        assert_eq!(arguments(r#"{"a": 1}"#).expect("read")["a"], 1);
        assert!(arguments("{").is_err());
    }

    /// The data limit the padded answers are read under: a little over the two bodies the
    /// child holds at once (16 MiB each) and what the test binary starts with. Read as a
    /// `serde_json::Value`, one such body takes 240 MiB and more.
    const DATA_LIMIT: u64 = 160 << 20;

    /// `answer` (an object) with a field first that no protocol reads: 15 MiB of `0,`.
    fn padded(answer: &str) -> Vec<u8> {
        let mut body = Vec::with_capacity(16 << 20);
        body.extend_from_slice(b"{\"pad\": [");
        body.extend(std::iter::repeat_n(*b"0,", (15 << 20) / 2).flatten());
        body.extend_from_slice(b"0], ");
        body.extend_from_slice(&answer.as_bytes()[1..]);
        body
    }

    /// `n` copies of `item`, comma-separated, inside `around`'s `{}`.
    fn many(around: &str, item: &str, n: usize) -> Vec<u8> {
        let (head, tail) = around.split_once("{}").expect("a place for the items");
        let mut body = Vec::with_capacity(head.len() + tail.len() + n * (item.len() + 1));
        body.extend_from_slice(head.as_bytes());
        for i in 0..n {
            if i > 0 {
                body.push(b',');
            }
            body.extend_from_slice(item.as_bytes());
        }
        body.extend_from_slice(tail.as_bytes());
        body
    }

    #[test]
    #[ignore = "run by a_hostile_answer_is_read_in_little_more_than_its_size, under a data limit"]
    fn read_hostile_answers() {
        use crate::pipeline::ProviderReply;
        use crate::providers::{anthropic, openai};
        let text = |reply: ProviderReply| match reply {
            ProviderReply::Text(t) => t,
            other => panic!("expected text, got {other:?}"),
        };
        let body = padded(r#"{"choices": [{"message": {"content": "ok"}}]}"#);
        assert_eq!(text(openai::parse(&body).expect("read").0), "ok");
        drop(body);
        let body = padded(r#"{"content": [{"type": "text", "text": "ok"}]}"#);
        assert_eq!(text(anthropic::parse(&body).expect("read").0), "ok");
        drop(body);
        // Five million choices after the first, five million empty blocks after a text.
        let body = many(
            r#"{"choices": [{"message": {"content": "ok"}}, {}]}"#,
            "{}",
            5_000_000,
        );
        assert_eq!(text(openai::parse(&body).expect("read").0), "ok");
        drop(body);
        let body = many(
            r#"{"content": [{"type": "text", "text": "ok"}, {}]}"#,
            "{}",
            5_000_000,
        );
        assert_eq!(text(anthropic::parse(&body).expect("read").0), "ok");
    }

    #[test]
    fn a_hostile_answer_is_read_in_little_more_than_its_size() {
        use std::os::unix::process::CommandExt;
        let exe = std::env::current_exe().expect("the test binary");
        let mut child = std::process::Command::new(exe);
        child.args([
            "--exact",
            "providers::lenient::tests::read_hostile_answers",
            "--ignored",
            "--test-threads=1",
        ]);
        // SAFETY: setrlimit(2) is async-signal-safe and reads the rlimit we pass by reference.
        unsafe {
            child.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: DATA_LIMIT,
                    rlim_max: DATA_LIMIT,
                };
                if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let out = child.output().expect("the child runs");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && said.contains("1 passed"),
            "{:?}: {said}",
            out.status
        );
    }
}
