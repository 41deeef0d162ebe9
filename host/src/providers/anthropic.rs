//! Anthropic Messages, with `tool_use` and `tool_result` blocks.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::http::{CallError, get_status, is_event_stream, json_of, post, redact_error};
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

/// Read a Messages answer: the first `tool_use` block, else the text blocks joined.
///
/// # Errors
/// [`CallError::Malformed`] when it is not the protocol (a tool call whose name or id is
/// longer than [`super::MAX_TOOL_CALL_FIELD`] included).
pub fn parse(v: &Value) -> Result<(ProviderReply, Usage), CallError> {
    let malformed = |m: &str| CallError::Malformed(m.to_owned());
    let blocks = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no `content` array"))?;
    let usage = Usage {
        input_tokens: v["usage"]["input_tokens"].as_u64().unwrap_or(0),
        output_tokens: v["usage"]["output_tokens"].as_u64().unwrap_or(0),
    };
    if let Some(call) = blocks.iter().find(|b| b["type"] == "tool_use") {
        let name = call["name"]
            .as_str()
            .ok_or_else(|| malformed("a tool_use block without a name"))?;
        let id = call["id"].as_str().unwrap_or("toolu_0").to_owned();
        check_tool_call(name, &id)?;
        let input = if call["input"].is_object() {
            call["input"].clone()
        } else {
            json!({})
        };
        return Ok((
            ProviderReply::ToolCall {
                id,
                name: name.to_owned(),
                arguments: input,
            },
            usage,
        ));
    }
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    if texts.is_empty() {
        return Err(malformed("no text and no tool_use block"));
    }
    Ok((ProviderReply::Text(texts.join("")), usage))
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
        None => parse(&json_of(resp, endpoint.timeout).await?),
    }
}

/// A streamed Messages answer: `message_start` (input tokens), per content block a
/// `content_block_start`, its `content_block_delta`s (text, or a tool's input as pieces of
/// JSON) and `content_block_stop`, then `message_delta` (output tokens) and `message_stop`.
#[derive(Debug, Default)]
pub struct Events {
    /// By index: the block as started, and what its deltas brought so far (text, or the tool
    /// input's JSON).
    blocks: BTreeMap<u64, (Value, String)>,
    input_tokens: u64,
    output_tokens: u64,
    tokens: u64,
    done: bool,
}

impl stream::Fold for Events {
    fn event(&mut self, event: &sse::Event) -> Result<(), CallError> {
        let v = stream::json(event)?;
        let index = v["index"].as_u64().unwrap_or(0);
        match v["type"].as_str().or(event.event.as_deref()).unwrap_or("") {
            "message_start" => {
                let usage = &v["message"]["usage"];
                self.input_tokens = usage["input_tokens"].as_u64().unwrap_or(0);
                self.output_tokens = usage["output_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                self.blocks
                    .insert(index, (v["content_block"].clone(), String::new()));
            }
            "content_block_delta" => {
                let Some((_, streamed)) = self.blocks.get_mut(&index) else {
                    return Err(CallError::Malformed(format!(
                        "a streamed delta for block {index}, which was never started"
                    )));
                };
                let delta = &v["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => {
                        streamed.push_str(delta["text"].as_str().unwrap_or_default());
                    }
                    Some("input_json_delta") => {
                        streamed.push_str(delta["partial_json"].as_str().unwrap_or_default());
                    }
                    // Thinking and signatures are not the answer.
                    _ => return Ok(()),
                }
                self.tokens += 1;
            }
            "message_delta" => {
                if let Some(n) = v["usage"]["output_tokens"].as_u64() {
                    self.output_tokens = n;
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let e = &v["error"];
                let message = e["message"]
                    .as_str()
                    .map_or_else(|| e.to_string(), str::to_owned);
                let kind: String = e["type"]
                    .as_str()
                    .unwrap_or("error")
                    .chars()
                    .take(64)
                    .collect();
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
        let mut content = Vec::with_capacity(self.blocks.len());
        for (mut block, streamed) in self.blocks.into_values() {
            if block["type"] == "tool_use" && !streamed.trim().is_empty() {
                block["input"] = serde_json::from_str(&streamed).map_err(|e| {
                    CallError::Malformed(format!("a streamed tool input is not JSON: {e}"))
                })?;
            } else if block["type"] == "text" {
                let start = block["text"].as_str().unwrap_or_default();
                block["text"] = json!(format!("{start}{streamed}"));
            }
            content.push(block);
        }
        // The answer as it would have come whole, read the one way.
        parse(&json!({
            "content": content,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
        }))
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
