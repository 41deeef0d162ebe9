//! Anthropic Messages, with `tool_use` and `tool_result` blocks.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::http::{CallError, body_of, get_status, is_event_stream, post, redact_error};
use super::lenient::{self, Lenient};
use super::{Endpoint, PROBE_TIMEOUT, Usage, check_tool_call, sse, stream};
use crate::pipeline::{OnProgress, ProviderReply, ProviderRequest};

/// The API version header value this client speaks.
pub const VERSION: &str = "2023-06-01";
/// Most tokens asked for in one answer.
pub const MAX_TOKENS: u64 = 4096;

/// The request body for `req`, as the Messages API documents it.
pub fn body(req: &ProviderRequest, model: &str) -> Value {
    let mut messages = vec![json!({"role": "user", "content": req.prompt})];
    for t in &req.turns {
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": t.id, "name": t.name, "input": t.arguments}]}));
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": t.id, "content": t.result, "is_error": t.is_error}]}));
    }
    let mut body = json!({"model": model, "max_tokens": MAX_TOKENS, "system": req.system, "messages": messages});
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// A Messages answer, as far as it is read: its content blocks folded as they are read, the
/// usage.
#[derive(Deserialize)]
struct Whole {
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    usage: Lenient<Counts>,
}

#[derive(Default, Deserialize)]
struct Counts {
    #[serde(default)]
    input_tokens: Lenient<u64>,
    #[serde(default)]
    output_tokens: Lenient<u64>,
}

/// One content block, as far as it is read.
#[derive(Default, Deserialize)]
struct Block {
    #[serde(rename = "type", default)]
    kind: Lenient<String>,
    #[serde(default)]
    text: Lenient<String>,
    #[serde(default)]
    id: Lenient<String>,
    #[serde(default)]
    name: Lenient<String>,
    /// A tool's input, kept as written until it is known to be the one the answer is.
    #[serde(default)]
    input: Option<Box<RawValue>>,
}

impl Block {
    fn is(&self, kind: &str) -> bool {
        self.kind.0.as_deref() == Some(kind)
    }
}

/// The content blocks: the first `tool_use`, and the text of every `text` block joined. Each
/// block is dropped once folded in, so an answer of a million blocks holds one at a time.
#[derive(Default)]
struct Content {
    call: Option<Block>,
    text: Option<String>,
}

impl Content {
    fn add(&mut self, block: Block) {
        if block.is("tool_use") {
            if self.call.is_none() {
                self.call = Some(block);
            }
        } else if block.is("text")
            && let Some(t) = block.text.0
        {
            self.text.get_or_insert_default().push_str(&t);
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Blocks;
        impl<'de> serde::de::Visitor<'de> for Blocks {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of content blocks")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content, A::Error> {
                let mut content = Content::default();
                while let Some(block) = seq.next_element()? {
                    content.add(block);
                }
                Ok(content)
            }
        }
        d.deserialize_seq(Blocks)
    }
}

/// Read a Messages answer: the first `tool_use` block, else the text blocks joined.
///
/// # Errors
/// [`CallError::Malformed`] when it is not the protocol (a tool call whose name or id is
/// longer than [`super::MAX_TOOL_CALL_FIELD`], or whose input is longer than
/// [`lenient::MAX_ARGUMENTS`], included).
pub fn parse(body: &[u8]) -> Result<(ProviderReply, Usage), CallError> {
    let whole: Whole = lenient::read(body)?;
    let content = whole
        .content
        .ok_or_else(|| CallError::Malformed("no `content` array".into()))?;
    decide(content, &whole.usage.0.unwrap_or_default())
}

/// The reply `content` is, the one way both a whole and a streamed answer are read.
fn decide(content: Content, counts: &Counts) -> Result<(ProviderReply, Usage), CallError> {
    let malformed = |m: &str| CallError::Malformed(m.to_owned());
    let usage = Usage {
        input_tokens: counts.input_tokens.0.unwrap_or(0),
        output_tokens: counts.output_tokens.0.unwrap_or(0),
    };
    if let Some(call) = content.call {
        let name = call
            .name
            .0
            .ok_or_else(|| malformed("a tool_use block without a name"))?;
        let id = call.id.0.unwrap_or_else(|| "toolu_0".to_owned());
        check_tool_call(&name, &id)?;
        let input = match call.input {
            Some(raw) if raw.get().trim_start().starts_with('{') => lenient::arguments(raw.get())?,
            _ => json!({}),
        };
        return Ok((
            ProviderReply::ToolCall {
                id,
                name,
                arguments: input,
            },
            usage,
        ));
    }
    let text = content
        .text
        .ok_or_else(|| malformed("no text and no tool_use block"))?;
    Ok((ProviderReply::Text(text), usage))
}

fn headers(endpoint: &Endpoint) -> Vec<(&'static str, String)> {
    let mut h = vec![("anthropic-version", VERSION.to_owned())];
    if let Some(k) = &endpoint.key {
        h.push(("x-api-key", k.expose().to_owned()));
    }
    h
}

/// Call `endpoint` with `req`; streamed (`stream: true`) when `progress` follows it.
///
/// # Errors
/// Any [`CallError`].
pub async fn call(
    endpoint: &Endpoint,
    req: &ProviderRequest,
    model: &str,
    progress: Option<OnProgress<'_>>,
) -> Result<(ProviderReply, Usage), CallError> {
    let url = format!("{}/v1/messages", endpoint.base_url.trim_end_matches('/'));
    let streaming = stream::wanted(endpoint, progress);
    let started = std::time::Instant::now();
    let mut body = body(req, model);
    if streaming {
        body["stream"] = json!(true);
    }
    let headers = headers(endpoint);
    let resp = post(&endpoint.client, &url, &headers, &body, endpoint.timeout).await?;
    match progress.filter(|_| streaming && is_event_stream(&resp)) {
        Some(p) => stream::read(resp, Events::default(), endpoint, (model, started), p)
            .await
            .map_err(|e| redact_error(e, &headers)),
        None => parse(&body_of(resp, endpoint.timeout).await?),
    }
}

/// A streamed Messages answer: `message_start` (input tokens), per content block a
/// `content_block_start`, its `content_block_delta`s (text, or a tool's input as pieces of
/// JSON) and `content_block_stop`, then `message_delta` (output tokens) and `message_stop`.
#[derive(Default)]
pub struct Events {
    /// By index: the block as started, and what its deltas brought so far (text, or the tool
    /// input's JSON).
    blocks: BTreeMap<u64, (Block, String)>,
    counts: Counts,
    tokens: u64,
    done: bool,
}

/// The most content blocks one streamed answer may start (a real one has a few: thinking,
/// text, a tool call or several).
const MAX_BLOCKS: usize = 256;

/// One streamed event, as far as it is read.
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: Lenient<String>,
    #[serde(default)]
    index: Lenient<u64>,
    /// `message_start`'s message, for its usage.
    #[serde(default)]
    message: Option<Started>,
    #[serde(default)]
    content_block: Option<Block>,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    usage: Lenient<Counts>,
    /// An `error` event's error (kept as written: only its type and message are read).
    #[serde(default)]
    error: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Started {
    #[serde(default)]
    usage: Lenient<Counts>,
}

#[derive(Deserialize)]
struct Delta {
    #[serde(rename = "type", default)]
    kind: Lenient<String>,
    #[serde(default)]
    text: Lenient<String>,
    #[serde(default)]
    partial_json: Lenient<String>,
}

impl stream::Fold for Events {
    fn event(&mut self, event: &sse::Event) -> Result<(), CallError> {
        let v: Event = stream::json(event)?;
        let index = v.index.0.unwrap_or(0);
        match v.kind.0.as_deref().or(event.event.as_deref()).unwrap_or("") {
            "message_start" => {
                let usage = v.message.and_then(|m| m.usage.0).unwrap_or_default();
                self.counts = usage;
            }
            "content_block_start" => {
                if !self.blocks.contains_key(&index) && self.blocks.len() >= MAX_BLOCKS {
                    return Err(CallError::Malformed(format!(
                        "a streamed answer with more than {MAX_BLOCKS} content blocks"
                    )));
                }
                let block = v.content_block.unwrap_or_default();
                self.blocks.insert(index, (block, String::new()));
            }
            "content_block_delta" => {
                let Some((block, streamed)) = self.blocks.get_mut(&index) else {
                    return Err(CallError::Malformed(format!(
                        "a streamed delta for block {index}, which was never started"
                    )));
                };
                let Some(delta) = v.delta else {
                    return Ok(());
                };
                match delta.kind.0.as_deref() {
                    Some("text_delta") => {
                        streamed.push_str(delta.text.0.as_deref().unwrap_or_default());
                    }
                    Some("input_json_delta") => {
                        streamed.push_str(delta.partial_json.0.as_deref().unwrap_or_default());
                        if block.is("tool_use") && streamed.len() > lenient::MAX_ARGUMENTS {
                            return Err(lenient::too_long(streamed.len()));
                        }
                    }
                    // Thinking and signatures are not the answer.
                    _ => return Ok(()),
                }
                self.tokens += 1;
            }
            "message_delta" => {
                if let Some(n) = v.usage.0.and_then(|u| u.output_tokens.0) {
                    self.counts.output_tokens = Lenient(Some(n));
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let written = v.error.as_deref().map_or("null", RawValue::get);
                let said = serde_json::from_str::<lenient::ErrorSaid>(written).ok();
                let (kind, message) = said.map_or((None, None), |s| (s.kind.0, s.message.0));
                let kind: String = kind
                    .as_deref()
                    .unwrap_or("error")
                    .chars()
                    .take(64)
                    .collect();
                let message = message.as_deref().unwrap_or(written);
                let said: String = message.chars().take(300).collect();
                return Err(CallError::Stream(format!("{kind}: {said}")));
            }
            // `ping`, `content_block_stop`, and what a later API version adds.
            _ => {}
        }
        Ok(())
    }

    fn tokens(&self) -> u64 {
        self.tokens
    }

    fn done(&self) -> bool {
        self.done
    }

    fn finish(self) -> Result<(ProviderReply, Usage), CallError> {
        let mut content = Content::default();
        for (mut block, streamed) in self.blocks.into_values() {
            if block.is("tool_use") && !streamed.trim().is_empty() {
                block.input = Some(RawValue::from_string(streamed).map_err(|e| {
                    CallError::Malformed(format!("a streamed tool input is not JSON: {e}"))
                })?);
            } else if block.is("text") {
                let start = block.text.0.take().unwrap_or_default();
                block.text = Lenient(Some(start + &streamed));
            }
            content.add(block);
        }
        // The answer as it would have come whole, read the one way.
        decide(content, &self.counts)
    }
}

/// Is the endpoint there? (`GET /v1/models`)
///
/// # Errors
/// Why it is not reachable.
pub async fn probe(endpoint: &Endpoint) -> Result<u16, CallError> {
    let url = format!("{}/v1/models", endpoint.base_url.trim_end_matches('/'));
    get_status(
        &endpoint.client,
        &url,
        &headers(endpoint),
        endpoint.timeout.min(PROBE_TIMEOUT),
    )
    .await
}
