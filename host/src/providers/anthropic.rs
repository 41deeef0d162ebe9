//! Anthropic Messages, with `tool_use` and `tool_result` blocks.

use serde_json::{Value, json};

use super::http::{CallError, get_status, post_json};
use super::{Endpoint, PROBE_TIMEOUT, Usage};
use crate::pipeline::{ProviderReply, ProviderRequest};

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
/// [`CallError::Malformed`] when it is not the protocol.
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

/// Call `endpoint` with `req`.
///
/// # Errors
/// Any [`CallError`].
pub async fn call(
    endpoint: &Endpoint,
    req: &ProviderRequest,
    model: &str,
) -> Result<(ProviderReply, Usage), CallError> {
    let url = format!("{}/v1/messages", endpoint.base_url.trim_end_matches('/'));
    let answer = post_json(
        &endpoint.client,
        &url,
        &headers(endpoint),
        &body(req, model),
        endpoint.timeout,
    )
    .await?;
    parse(&answer)
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
