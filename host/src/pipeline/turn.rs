//! A [`Turn`]: one request to the agent, from whichever front end (a daemon client, a one-shot
//! command), with its typed origin. This is the one door into the loop: the daemon's ops and
//! the CLI's commands both build a Turn and [`Agent::take`] it, so an action travels as an
//! [`Action`] from the request to the tool, never as JSON in between.

use super::error::PipelineError;
use super::{Agent, Report};
use crate::signal::{Action, Meta, Signal};

/// What started a turn.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A direct request: every gate, then the actuator; never the model.
    Act(Action),
    /// A person's words: the model proposes, the gates verify.
    Ask(String),
    /// A person approves the held action `token`.
    Approve {
        /// The approval token.
        token: String,
        /// The digest of the action the person was shown (see [`crate::approvals`]).
        digest: Option<String>,
    },
    /// A person denies the held action `token`.
    Deny {
        /// The approval token.
        token: String,
        /// The digest of the action the person was shown.
        digest: Option<String>,
    },
    /// A sensor's signal (a heartbeat, a file change...): Reason decides what it is.
    Event(Box<Signal>),
}

/// One request: what started it and whom it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// What started it.
    pub origin: Origin,
    /// Who asked: the source replies go to, and the session.
    pub meta: Meta,
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// Every step of the run (`act`, `ask`, `approve`, an event): the trace of each
    /// verification, the proposal and how it ended.
    Report(Report),
    /// `deny`: the action dropped.
    Denied(Action),
}

impl Turn {
    /// A turn from `meta` starting with `origin`.
    pub fn new(origin: Origin, meta: Meta) -> Turn {
        Turn { origin, meta }
    }
}

impl Agent {
    /// Take one turn: run it through the loop (Perceive → Reason → Act, and the feedback), or
    /// decide a held action.
    ///
    /// # Errors
    /// Deciding a token that is unknown, already decided, expired, or not the action shown.
    /// (A failure inside the loop is a step of the report, recovered as the settings say.)
    pub async fn take(&self, turn: Turn) -> Result<Answer, PipelineError> {
        let Turn { origin, meta } = turn;
        match origin {
            Origin::Act(action) => Ok(Answer::Report(
                self.run(Signal::request(action, meta)).await,
            )),
            Origin::Ask(text) => {
                let mut signal = Signal::event("user-input", Some(&text), None);
                signal.meta = meta;
                Ok(Answer::Report(self.run(signal).await))
            }
            Origin::Event(signal) => Ok(Answer::Report(self.run(*signal).await)),
            Origin::Approve { token, digest } => self
                .approve(&token, digest.as_deref(), meta.via.as_deref())
                .await
                .map(Answer::Report),
            Origin::Deny { token, digest } => self
                .deny(&token, digest.as_deref(), meta.via.as_deref())
                .await
                .map(Answer::Denied),
        }
    }

    /// [`Agent::take`], waited for by the thread: for one-shot commands and tests, which have
    /// no async runtime of their own ([`crate::blocking::wait`]).
    ///
    /// # Errors
    /// As for [`Agent::take`].
    pub fn take_blocking(&self, turn: Turn) -> Result<Answer, PipelineError> {
        crate::blocking::wait(self.take(turn))
    }
}
