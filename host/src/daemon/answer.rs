//! The client's side of [`super::ops::Reply`]: the frames a request gets back, typed. The CLI
//! reads every reply through these, never by string keys.
//!
//! Reading is lenient where a newer daemon may say more: an event this client does not know
//! is skipped, and a step whose outcome it cannot read is `None` without hiding the others.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::request::Event;
use crate::pipeline::Step;
use crate::signal::Action;

/// The daemon refused a request (a bad field, an unknown token, a role that may not).
#[derive(Clone, Debug, PartialEq, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// `request`, `auth`, `protocol`...
    pub kind: String,
    /// What was wrong and what to do, from the daemon.
    pub message: String,
    /// The request's field the refusal is about (`focus`), when it is about one.
    #[serde(default)]
    pub field: Option<String>,
}

/// Why a reply could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The daemon refused the request.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The frame is not a reply or an error, or its result is not what the request gets.
    #[error("the daemon's reply cannot be read ({what}): {source}")]
    Unreadable {
        /// What was expected.
        what: &'static str,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
}

/// The result of `act`, `ask` and `approve`: each step of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Steps(pub Vec<Option<Step>>);

impl<'de> Deserialize<'de> for Steps {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Steps, D::Error> {
        let raw = Vec::<Value>::deserialize(d)?;
        Ok(Steps(
            raw.into_iter()
                .map(|s| serde_json::from_value(s).ok())
                .collect(),
        ))
    }
}

/// `{"steps": [...]}`: what `act`, `ask` and `approve` answer.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct Ran {
    /// Each step, in order.
    #[serde(default)]
    pub steps: Steps,
    /// The memory headline the request was about (an `ask` with a `focus`).
    #[serde(default)]
    pub focus: Option<crate::pipeline::Focus>,
}

/// `{"dropped": action}`: what `deny` answers.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Dropped {
    /// The action dropped.
    pub dropped: Action,
}

/// Read a reply frame (`{"type": "reply", "result"}` or `{"type": "error", "error"}`) as `T`.
///
/// # Errors
/// The daemon's refusal, or a frame that does not hold a `T`.
pub fn read<T: DeserializeOwned>(frame: &Value, what: &'static str) -> Result<T, AnswerError> {
    let unreadable = |source| AnswerError::Unreadable { what, source };
    if frame["type"] == "error" {
        let refusal: Refusal =
            serde_json::from_value(frame["error"].clone()).map_err(unreadable)?;
        return Err(refusal.into());
    }
    serde_json::from_value(frame["result"].clone()).map_err(unreadable)
}

/// The pending approval `token` in an `approvals` reply, if it lists one. Each entry is read
/// on its own: one this client cannot read does not hide the others.
///
/// # Errors
/// The daemon's refusal, a reply that is not a list, or the entry of `token` unreadable.
pub fn pending(
    frame: &Value,
    token: &str,
) -> Result<Option<crate::approvals::Pending>, AnswerError> {
    let waiting: Vec<Value> = read(frame, "the pending approvals")?;
    waiting
        .into_iter()
        .find(|p| p["token"] == token)
        .map(serde_json::from_value)
        .transpose()
        .map_err(|source| AnswerError::Unreadable {
            what: "a pending approval",
            source,
        })
}

/// The events of a request that this client can read, in order.
pub fn events(frames: &[Value]) -> Vec<Event> {
    frames
        .iter()
        .filter_map(|f| serde_json::from_value(f.clone()).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_refusal_a_report_and_a_newer_daemons_step_are_read() {
        let refused = read::<Ran>(
            &json!({"type": "error", "id": 1, "error": {"kind": "request", "message": "no such token"}}),
            "a report",
        );
        assert!(matches!(refused, Err(AnswerError::Refused(r)) if r.message == "no such token"));
        let ran: Ran = read(
            &json!({"type": "reply", "id": 1, "ok": true, "result": {"steps": [
                {"depth": 0, "trace": [], "outcome": {"outcome": "teleported"}},
                {"depth": 1, "trace": [], "outcome": {"outcome": "nothing"}}
            ]}}),
            "a report",
        )
        .expect("read");
        assert_eq!(ran.steps.0.len(), 2);
        assert!(
            ran.steps.0[0].is_none(),
            "an outcome this client does not know"
        );
        assert!(ran.steps.0[1].is_some(), "does not hide the next step");
        let e = read::<Dropped>(&json!({"type": "reply", "result": 3}), "a dropped action")
            .expect_err("not a Dropped")
            .to_string();
        assert!(e.contains("a dropped action"), "{e}");
        let events = events(&[
            json!({"type": "event", "id": 1, "event": "message", "text": "hi"}),
            json!({"type": "event", "id": 1, "event": "from-the-future"}),
        ]);
        assert!(
            matches!(&events[..], [Event::Message { text, told: None }] if text == "hi"),
            "{events:?}"
        );
    }

    #[test]
    fn a_pending_approval_is_found_by_its_token_past_entries_this_client_cannot_read() {
        let entry = |token: &str| {
            let pending = crate::approvals::Pending {
                token: token.into(),
                action: Action::reply("hi"),
                digest: "d".into(),
                signal: crate::signal::Signal::request(Action::reply("hi"), Default::default()),
                reasons: vec!["why".into()],
                expires_at: 1.0,
                state: "pending".into(),
                tool: None,
            };
            serde_json::to_value(pending).expect("json")
        };
        let list = json!({"type": "reply", "id": 1, "ok": true, "result": [
            {"token": "new", "from": "a newer daemon"},
            entry("t1"),
        ]});
        let found = pending(&list, "t1").expect("read").expect("listed");
        assert_eq!((found.token.as_str(), found.digest.as_str()), ("t1", "d"));
        assert!(pending(&list, "t2").expect("read").is_none());
        let e = pending(&list, "new").expect_err("unreadable").to_string();
        assert!(e.contains("a pending approval"), "{e}");
    }
}
