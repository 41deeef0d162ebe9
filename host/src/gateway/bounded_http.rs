//! The HTTP client a remote MCP server is spoken to with: rmcp's streamable HTTP protocol,
//! with what the server sends back to a POST bounded in size and in time.
//!
//! rmcp's own client for reqwest reads a JSON answer, and the body of an error status, whole:
//! no limit, no deadline. A server answering with gigabytes filled the daemon's memory; one
//! trickling its answer a byte every few seconds wedged the connection for good, since rmcp's
//! worker awaits each POST before it does anything else, and every later call timed out
//! while the server still showed as running. Here a POST is answered within its deadline or
//! fails, and its answer is read up to [`MAX_BODY`], whole (JSON, an error body) or streamed
//! as server-sent events (so no one event is longer either). A streamed answer's event ids
//! are dropped: rmcp would resume a broken one by a `GET` with `Last-Event-ID`, past both
//! bounds. The standing `GET` stream is rmcp's, which bounds each of its events
//! ([`MAX_BODY`] is passed as that bound).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::common::http_header::{
    EVENT_STREAM_MIME_TYPE, HEADER_SESSION_ID, JSON_MIME_TYPE,
};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use sse_stream::Sse;

/// The most bytes of one answer to a POST, whole or streamed as events (the answer and what
/// the server says while it works on it): the stdio transport's line limit.
pub const MAX_BODY: usize = super::bounds::MAX_LINE;
/// How much of an error body is kept in the error.
const ERROR_SHOWN: usize = 1024;

type Error = StreamableHttpError<reqwest::Error>;

/// A reqwest client that bounds what a POST's answer may be, in bytes and in time.
#[derive(Clone)]
pub struct Bounded {
    client: reqwest::Client,
    /// How long a POST may take, its answer read whole or streamed to its end included.
    deadline: Duration,
}

impl Bounded {
    /// `client`, with each POST answered within `deadline`.
    pub fn new(client: reqwest::Client, deadline: Duration) -> Bounded {
        Bounded { client, deadline }
    }
}

fn unexpected(what: String) -> Error {
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(what))
}

/// `response`'s body, at most `limit` bytes of it.
async fn body(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    while let Some(piece) = response.chunk().await? {
        if body.len() + piece.len() > limit {
            return Err(unexpected(format!(
                "an answer longer than {limit} bytes; it was not read further"
            )));
        }
        body.extend_from_slice(&piece);
    }
    Ok(body)
}

/// `text` cut to [`ERROR_SHOWN`] bytes, on a character boundary.
fn shown(text: &str) -> &str {
    &text[..text.floor_char_boundary(ERROR_SHOWN)]
}

impl Bounded {
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let accept = format!("{EVENT_STREAM_MIME_TYPE}, {JSON_MIME_TYPE}");
        let mut request = self
            .client
            .post(uri.as_ref())
            .timeout(self.deadline)
            .header(reqwest::header::ACCEPT, accept);
        if let Some(token) = auth {
            request = request.bearer_auth(token);
        }
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let attached = session_id.is_some();
        if let Some(id) = session_id {
            request = request.header(HEADER_SESSION_ID, id.as_ref());
        }
        let response = request.json(&message).send().await?;
        let status = response.status();
        if matches!(
            status,
            reqwest::StatusCode::ACCEPTED | reqwest::StatusCode::NO_CONTENT
        ) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == reqwest::StatusCode::NOT_FOUND && attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let kind = header(reqwest::header::CONTENT_TYPE.as_str());
        let session = header(HEADER_SESSION_ID);
        let is = |mime: &str| kind.as_deref().is_some_and(|k| k.starts_with(mime));
        let answers = matches!(message, ClientJsonRpcMessage::Request(_));
        if status.is_success() && !answers && response.content_length() == Some(0) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body(response, MAX_BODY).await?).into_owned();
            // A JSON-RPC error is the server's answer, and said as one.
            if is(JSON_MIME_TYPE)
                && let Ok(error @ JsonRpcMessage::Error(_)) =
                    serde_json::from_str::<ServerJsonRpcMessage>(&text)
            {
                return Ok(StreamableHttpPostResponse::Json(error, session));
            }
            return Err(unexpected(format!("HTTP {status}: {}", shown(&text))));
        }
        if is(EVENT_STREAM_MIME_TYPE) {
            let mut read = 0usize;
            let bytes = response.bytes_stream().map(move |piece| {
                let piece = piece.map_err(std::io::Error::other)?;
                read = read.saturating_add(piece.len());
                if read > MAX_BODY {
                    return Err(std::io::Error::other(format!(
                        "an answer streamed past {MAX_BODY} bytes"
                    )));
                }
                Ok(piece)
            });
            let events: BoxStream<'static, Result<Sse, SseError>> =
                sse_stream::SseStream::from_bytes_stream(bytes)
                    .map(|event| {
                        event.map(|mut e| {
                            e.id = None;
                            e
                        })
                    })
                    .boxed();
            return Ok(StreamableHttpPostResponse::Sse(events, session));
        }
        if is(JSON_MIME_TYPE) {
            let text = body(response, MAX_BODY).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&text) {
                Ok(message) => Ok(StreamableHttpPostResponse::Json(message, session)),
                // What answers no request (a 200 with a body to a notification) is taken as
                // accepted, as rmcp does; an answer to a request must be one.
                Err(_) if !answers => Ok(StreamableHttpPostResponse::Accepted),
                // (serde's error may quote the answer: shown cut.)
                Err(e) => Err(unexpected(format!(
                    "an answer that is not JSON-RPC: {}",
                    shown(&e.to_string())
                ))),
            };
        }
        Err(StreamableHttpError::UnexpectedContentType(kind))
    }
}

impl StreamableHttpClient for Bounded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        // The deadline covers the wait for the answer's start too (reqwest's timeout does,
        // but a body read whole is awaited here, and it must not outlive it either).
        let post = self.post(uri, message, session_id, auth, headers);
        match tokio::time::timeout(self.deadline, post).await {
            Ok(answer) => answer,
            Err(_) => Err(unexpected(format!(
                "no whole answer within {} s",
                self.deadline.as_secs()
            ))),
        }
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        _max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post_message(uri, message, session_id, auth, headers)
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.client
            .delete_session(uri, session_id, auth, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth,
            headers,
            MAX_BODY,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth,
                headers,
                max_sse_event_size.min(MAX_BODY),
            )
            .await
    }
}
