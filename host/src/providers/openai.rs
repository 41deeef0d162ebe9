//! OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio,
//! Gemini's OpenAI endpoint), with `tools` and `tool_calls`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::http::{CallError, body_of, get_status, is_event_stream, post, redact_error};
use super::lenient::{self, First, Lenient};
use super::{Endpoint, PROBE_TIMEOUT, Usage, check_tool_call, sse, stream};
use crate::pipeline::{OnProgress, ProviderReply, ProviderRequest};

/// The request body for `req`, as the Chat Completions API documents it.
pub fn body(req: &ProviderRequest, model: &str) -> Value {
    let mut messages = vec![
        json!({"role": "system", "content": req.system}),
        json!({"role": "user", "content": req.prompt}),
    ];
    for t in &req.turns {
        messages.push(json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments.to_string()}}],
        }));
        messages.push(json!({"role": "tool", "tool_call_id": t.id, "content": t.result}));
    }
    let mut body = json!({"model": model, "messages": messages});
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
    }
    body
}

/// A Chat Completions answer, as far as it is read: the first choice's message, the usage.
#[derive(Deserialize)]
struct Whole {
    #[serde(default)]
    choices: Option<First<Choice>>,
    #[serde(default)]
    usage: Lenient<Counts>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<Message>,
}

#[derive(Deserialize)]
struct Message {
    /// Kept as written until it is known to be the answer (a string, else not the protocol).
    #[serde(default)]
    content: Option<Box<RawValue>>,
    #[serde(default)]
    tool_calls: Option<First<Call>>,
}

#[derive(Deserialize)]
struct Call {
    #[serde(default)]
    id: Lenient<String>,
    #[serde(default)]
    function: Option<Function>,
}

#[derive(Deserialize)]
struct Function {
    #[serde(default)]
    name: Lenient<String>,
    /// A string holding JSON, as documented; an object, as some servers send.
    #[serde(default)]
    arguments: Option<Box<RawValue>>,
}

#[derive(Default, Deserialize)]
struct Counts {
    #[serde(default)]
    prompt_tokens: Lenient<u64>,
    #[serde(default)]
    completion_tokens: Lenient<u64>,
}

impl Counts {
    fn usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens.0.unwrap_or(0),
            output_tokens: self.completion_tokens.0.unwrap_or(0),
        }
    }
}

/// A tool call's arguments: as the answer wrote them, or streamed pieces joined.
enum Arguments {
    Written(Box<RawValue>),
    Joined(String),
}

/// What a message said: its first tool call, else its text.
struct Said {
    /// id, name, arguments.
    call: Option<(Option<String>, Option<String>, Option<Arguments>)>,
    /// The text; `Err` when `content` was there but not a string.
    text: Option<Result<String, ()>>,
}

/// Read a Chat Completions answer: the first tool call, else the text.
///
/// # Errors
/// [`CallError::Malformed`] when the answer is not the protocol (no choices, no message, a
/// tool call whose arguments are not JSON or longer than [`lenient::MAX_ARGUMENTS`], or whose
/// name or id is longer than [`super::MAX_TOOL_CALL_FIELD`]).
pub fn parse(body: &[u8]) -> Result<(ProviderReply, Usage), CallError> {
    let whole: Whole = lenient::read(body)?;
    let choices = whole
        .choices
        .ok_or_else(|| CallError::Malformed("no `choices` array".into()))?;
    let message = choices
        .0
        .and_then(|c| c.message)
        .ok_or_else(|| CallError::Malformed("empty `choices`".into()))?;
    let call = message.tool_calls.and_then(|c| c.0).map(|call| {
        let (name, arguments) = call
            .function
            .map_or((None, None), |f| (f.name.0, f.arguments));
        (call.id.0, name, arguments.map(Arguments::Written))
    });
    let text = message
        .content
        .map(|raw| serde_json::from_str::<String>(raw.get()).map_err(drop));
    decide(
        Said { call, text },
        whole.usage.0.unwrap_or_default().usage(),
    )
}

/// The reply `said` is, the one way both a whole and a streamed answer are read.
fn decide(said: Said, usage: Usage) -> Result<(ProviderReply, Usage), CallError> {
    let malformed = |m: &str| CallError::Malformed(m.to_owned());
    if let Some((id, name, arguments)) = said.call {
        let name = name.ok_or_else(|| malformed("a tool call without a function name"))?;
        let id = id.unwrap_or_else(|| "call_0".to_owned());
        check_tool_call(&name, &id)?;
        let arguments = match arguments {
            Some(Arguments::Joined(text)) => from_text(&text)?,
            Some(Arguments::Written(raw)) => match raw.get().trim_start().as_bytes().first() {
                Some(b'"') => {
                    if raw.get().len() > lenient::MAX_ARGUMENTS.saturating_mul(6) {
                        return Err(lenient::too_long(raw.get().len()));
                    }
                    let text: String = serde_json::from_str(raw.get())
                        .map_err(|e| CallError::Malformed(format!("tool call arguments: {e}")))?;
                    from_text(&text)?
                }
                Some(b'{') => lenient::arguments(raw.get())?,
                _ => json!({}),
            },
            None => json!({}),
        };
        return Ok((
            ProviderReply::ToolCall {
                id,
                name,
                arguments,
            },
            usage,
        ));
    }
    match said.text {
        Some(Ok(text)) => Ok((ProviderReply::Text(text), usage)),
        None => Err(malformed("a message with neither content nor tool calls")),
        Some(Err(())) => Err(malformed("`content` is not a string")),
    }
}

/// Arguments sent as a string of JSON: empty is `{}`.
fn from_text(text: &str) -> Result<Value, CallError> {
    if text.trim().is_empty() {
        return Ok(json!({}));
    }
    lenient::arguments(text)
}

/// Call `endpoint` with `req`; streamed (`stream: true`, usage included) when `progress`
/// follows it.
///
/// # Errors
/// Any [`CallError`].
pub async fn call(
    endpoint: &Endpoint,
    req: &ProviderRequest,
    model: &str,
    progress: Option<OnProgress<'_>>,
) -> Result<(ProviderReply, Usage), CallError> {
    let url = format!(
        "{}/chat/completions",
        endpoint.base_url.trim_end_matches('/')
    );
    let streaming = stream::wanted(endpoint, progress);
    let started = std::time::Instant::now();
    let mut body = body(req, model);
    if streaming {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    let headers = headers(endpoint);
    let resp = post(&endpoint.client, &url, &headers, &body, endpoint.timeout).await?;
    match progress.filter(|_| streaming && is_event_stream(&resp)) {
        Some(p) => stream::read(resp, Chunks::default(), endpoint, (model, started), p)
            .await
            .map_err(|e| redact_error(e, &headers)),
        None => parse(&body_of(resp, endpoint.timeout).await?),
    }
}

/// The most tool calls one streamed answer may carry (the first is the one read).
const MAX_CALLS: usize = 64;

/// A streamed Chat Completions answer, read chunk by chunk: `choices[0].delta` carries text
/// or pieces of tool calls (by `index`), a last chunk the `usage`, then `data: [DONE]`.
#[derive(Default)]
pub struct Chunks {
    text: String,
    /// By index: id, name, arguments so far.
    calls: BTreeMap<u64, (String, String, String)>,
    usage: Counts,
    tokens: u64,
    finished: bool,
    done: bool,
}

/// One streamed chunk, as far as it is read.
#[derive(Deserialize)]
struct Chunk {
    /// A provider's error, reported in the stream (kept as written: only its message is read).
    #[serde(default)]
    error: Option<Box<RawValue>>,
    #[serde(default)]
    usage: Lenient<Counts>,
    #[serde(default)]
    choices: Option<First<ChunkChoice>>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Lenient<String>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(default)]
    content: Lenient<String>,
    #[serde(default)]
    tool_calls: Option<lenient::AtMost<CallPiece, MAX_CALLS>>,
}

#[derive(Deserialize)]
struct CallPiece {
    #[serde(default)]
    index: Lenient<u64>,
    #[serde(default)]
    id: Lenient<String>,
    #[serde(default)]
    function: Option<FunctionPiece>,
}

#[derive(Deserialize)]
struct FunctionPiece {
    #[serde(default)]
    name: Lenient<String>,
    #[serde(default)]
    arguments: Lenient<String>,
}

impl stream::Fold for Chunks {
    fn event(&mut self, event: &sse::Event) -> Result<(), CallError> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Chunk = stream::json(event)?;
        if let Some(e) = chunk.error {
            let message = serde_json::from_str::<lenient::ErrorSaid>(e.get())
                .ok()
                .and_then(|said| said.message.0)
                .unwrap_or_else(|| e.get().to_owned());
            return Err(CallError::Stream(message.chars().take(300).collect()));
        }
        if let Some(usage) = chunk.usage.0 {
            self.usage = usage;
        }
        let Some(choice) = chunk.choices.and_then(|c| c.0) else {
            return Ok(());
        };
        let delta = choice.delta;
        if let Some(t) = delta
            .as_ref()
            .and_then(|d| d.content.0.as_deref())
            .filter(|t| !t.is_empty())
        {
            self.text.push_str(t);
            self.tokens += 1;
        }
        let pieces = delta.and_then(|d| d.tool_calls).map(|p| p.0);
        for piece in pieces.into_iter().flatten() {
            let index = piece.index.0.unwrap_or(0);
            if !self.calls.contains_key(&index) && self.calls.len() >= MAX_CALLS {
                return Err(CallError::Malformed(format!(
                    "a streamed answer with more than {MAX_CALLS} tool calls"
                )));
            }
            let (id, name, args) = self.calls.entry(index).or_default();
            if let Some(i) = piece.id.0 {
                *id = i;
            }
            let (n, a) = piece
                .function
                .map_or((None, None), |f| (f.name.0, f.arguments.0));
            if let Some(n) = n {
                name.push_str(&n);
            }
            // Refused as soon as it is too long, not after megabytes more of it.
            check_tool_call(name.as_str(), id.as_str())?;
            if let Some(a) = a {
                args.push_str(&a);
                if args.len() > lenient::MAX_ARGUMENTS {
                    return Err(lenient::too_long(args.len()));
                }
                self.tokens += 1;
            }
        }
        self.finished |= choice.finish_reason.0.is_some();
        Ok(())
    }

    fn tokens(&self) -> u64 {
        self.tokens
    }

    fn done(&self) -> bool {
        self.done
    }

    fn may_end(&self) -> bool {
        self.done || self.finished
    }

    fn finish(self) -> Result<(ProviderReply, Usage), CallError> {
        let call = self
            .calls
            .into_values()
            .next()
            .map(|(id, name, arguments)| {
                (Some(id), Some(name), Some(Arguments::Joined(arguments)))
            });
        let text = if self.text.is_empty() && !self.finished {
            None
        } else {
            Some(Ok(self.text))
        };
        // The answer as it would have come whole, read the one way.
        decide(Said { call, text }, self.usage.usage())
    }
}

fn headers(endpoint: &Endpoint) -> Vec<(&'static str, String)> {
    endpoint
        .key
        .iter()
        .map(|k| ("authorization", format!("Bearer {}", k.expose())))
        .collect()
}

/// Is the endpoint there? (`GET /models`)
///
/// # Errors
/// Why it is not reachable.
pub async fn probe(endpoint: &Endpoint) -> Result<u16, CallError> {
    let url = format!("{}/models", endpoint.base_url.trim_end_matches('/'));
    get_status(
        &endpoint.client,
        &url,
        &headers(endpoint),
        endpoint.timeout.min(PROBE_TIMEOUT),
    )
    .await
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::providers::stream::Fold;

    fn event(data: Value) -> sse::Event {
        sse::Event {
            event: None,
            data: data.to_string(),
        }
    }

    proptest! {
        /// However the text is cut into chunks, the answer is the text, one token per chunk
        /// that carried some.
        #[test]
        fn chunks_join_into_the_text(pieces in proptest::collection::vec(".{0,8}", 1..20)) {
            let mut fold = Chunks::default();
            for p in &pieces {
                fold.event(&event(json!({"choices": [{"index": 0, "delta": {"content": p}}]})))
                    .expect("a chunk");
            }
            fold.event(&event(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})))
                .expect("the end");
            let carried = pieces.iter().filter(|p| !p.is_empty()).count() as u64;
            prop_assert_eq!(fold.tokens(), carried);
            prop_assert!(fold.may_end() && !fold.done());
            let (reply, _) = fold.finish().expect("an answer");
            prop_assert_eq!(reply, ProviderReply::Text(pieces.concat()));
        }
    }
}
