//! Reading a streamed answer: server-sent events ([`super::sse`]) folded by the provider's
//! protocol ([`Fold`]) into the answer it would have sent whole, with its progress reported
//! as the pieces come. A stream that fails after its first token fails as
//! [`CallError::Cut`], which the cascade does not fall through.

use std::time::Instant;

use super::http::{CallError, body_error};
use super::{Endpoint, Usage, sse};
use crate::pipeline::{OnProgress, Progress, ProviderReply};

/// The longest one streamed event may be.
pub const MAX_EVENT: usize = 1 << 20;
/// The most bytes one streamed answer may be.
pub const MAX_ANSWER: usize = 16 << 20;

/// A protocol's reading of its events.
pub trait Fold {
    /// Take one event in.
    ///
    /// # Errors
    /// The provider reported an error, or the event is not the protocol.
    fn event(&mut self, event: &sse::Event) -> Result<(), CallError>;
    /// Tokens so far.
    fn tokens(&self) -> u64;
    /// Whether the protocol said the answer is complete.
    fn done(&self) -> bool;
    /// Whether the stream may end here without the protocol's last word (an OpenAI-compatible
    /// server that finished the choice and closed without `[DONE]`).
    fn may_end(&self) -> bool {
        self.done()
    }
    /// The whole answer.
    ///
    /// # Errors
    /// It is not an answer (no text and no tool call, tool arguments that are not JSON).
    fn finish(self) -> Result<(ProviderReply, Usage), CallError>;
}

/// Whether to ask `endpoint` to stream: someone follows the answer and the provider may.
pub fn wanted(endpoint: &Endpoint, progress: Option<OnProgress<'_>>) -> bool {
    progress.is_some() && endpoint.stream
}

/// Read `resp` (an event stream, asked for at `started`) with `fold`, reporting to `progress`
/// after each piece that brought tokens.
///
/// # Errors
/// The stream broke, was too long, ended before the protocol said it was done, or the answer
/// is not one; after the first token, as [`CallError::Cut`].
pub async fn read<F: Fold>(
    mut resp: reqwest::Response,
    mut fold: F,
    endpoint: &Endpoint,
    (model, started): (&str, Instant),
    progress: OnProgress<'_>,
) -> Result<(ProviderReply, Usage), CallError> {
    let cut = |tokens: u64, e: CallError| match tokens {
        0 => e,
        _ => CallError::Cut {
            tokens,
            cause: Box::new(e),
        },
    };
    let report = |tokens: u64| {
        progress(&Progress {
            provider: endpoint.name.clone(),
            model: model.to_owned(),
            tokens,
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        });
    };
    let mut decoder = sse::Decoder::new(MAX_EVENT);
    let mut read = 0usize;
    let mut said = 0;
    while !fold.done() {
        let piece = match resp.chunk().await {
            Ok(Some(piece)) => piece,
            Ok(None) if fold.may_end() => break,
            Ok(None) => {
                let e = CallError::Truncated("the stream ended before the answer did".into());
                return Err(cut(fold.tokens(), e));
            }
            Err(e) => return Err(cut(fold.tokens(), body_error(e, endpoint.timeout))),
        };
        read = read.saturating_add(piece.len());
        if read > MAX_ANSWER {
            let e =
                CallError::Malformed(format!("a streamed answer longer than {MAX_ANSWER} bytes"));
            return Err(cut(fold.tokens(), e));
        }
        let events = decoder
            .push(&piece)
            .map_err(|e| cut(fold.tokens(), CallError::Malformed(e.to_string())))?;
        // An event with no data (a bare `data:`) says nothing.
        for event in events.iter().filter(|e| !e.data.is_empty()) {
            fold.event(event).map_err(|e| cut(fold.tokens(), e))?;
            if fold.done() {
                break;
            }
        }
        if fold.tokens() != said {
            said = fold.tokens();
            report(said);
        }
    }
    let tokens = fold.tokens();
    let (reply, usage) = fold.finish().map_err(|e| cut(tokens, e))?;
    // The provider's own count, when it gave one.
    if usage.output_tokens > 0 && usage.output_tokens != said {
        report(usage.output_tokens);
    }
    Ok((reply, usage))
}

/// `data` read as `T` (the protocol's own event struct, so no tree of what it does not read
/// is built).
///
/// # Errors
/// [`CallError::Malformed`], naming the event.
pub fn json<T: serde::de::DeserializeOwned>(event: &sse::Event) -> Result<T, CallError> {
    serde_json::from_str(&event.data).map_err(|e| {
        let what: String = event
            .event
            .as_deref()
            .unwrap_or("data")
            .chars()
            .take(64)
            .collect();
        CallError::Malformed(format!(
            "a streamed `{what}` event is not the protocol ({})",
            super::lenient::said(&e)
        ))
    })
}
