//! OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio,
//! Gemini's OpenAI endpoint), with `tools` and `tool_calls`.

use serde_json::{Value, json};

use super::http::{CallError, get_status, post_json};
use super::{Endpoint, PROBE_TIMEOUT, Usage};
use crate::pipeline::{ProviderReply, ProviderRequest};

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

/// Read a Chat Completions answer: the first tool call, else the text.
///
/// # Errors
/// [`CallError::Malformed`] when the answer is not the protocol (no choices, no message, a
/// tool call whose arguments are not JSON).
pub fn parse(v: &Value) -> Result<(ProviderReply, Usage), CallError> {
    let malformed = |m: &str| CallError::Malformed(m.to_owned());
    let choices = v
        .get("choices")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("no `choices` array"))?;
    let message = choices
        .first()
        .and_then(|c| c.get("message"))
        .ok_or_else(|| malformed("empty `choices`"))?;
    let usage = Usage {
        input_tokens: v["usage"]["prompt_tokens"].as_u64().unwrap_or(0),
        output_tokens: v["usage"]["completion_tokens"].as_u64().unwrap_or(0),
    };
    if let Some(call) = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    {
        let name = call["function"]["name"]
            .as_str()
            .ok_or_else(|| malformed("a tool call without a function name"))?;
        let arguments = match &call["function"]["arguments"] {
            Value::String(s) if s.trim().is_empty() => json!({}),
            Value::String(s) => serde_json::from_str(s).map_err(|e| {
                CallError::Malformed(format!("tool call arguments are not JSON: {e}"))
            })?,
            Value::Object(_) => call["function"]["arguments"].clone(),
            _ => json!({}),
        };
        let id = call["id"].as_str().unwrap_or("call_0").to_owned();
        return Ok((
            ProviderReply::ToolCall {
                id,
                name: name.to_owned(),
                arguments,
            },
            usage,
        ));
    }
    match message.get("content") {
        Some(Value::String(text)) => Ok((ProviderReply::Text(text.clone()), usage)),
        Some(Value::Null) | None => Err(malformed("a message with neither content nor tool calls")),
        Some(_) => Err(malformed("`content` is not a string")),
    }
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
    let url = format!(
        "{}/chat/completions",
        endpoint.base_url.trim_end_matches('/')
    );
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
