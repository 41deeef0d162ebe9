//! OpenAI-compatible Chat Completions (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio,
//! Gemini's OpenAI endpoint), with `tools` and `tool_calls`.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::http::{CallError, get_status, is_event_stream, json_of, post, redact_error};
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

/// Read a Chat Completions answer: the first tool call, else the text.
///
/// # Errors
/// [`CallError::Malformed`] when the answer is not the protocol (no choices, no message, a
/// tool call whose arguments are not JSON, or whose name or id is longer than
/// [`super::MAX_TOOL_CALL_FIELD`]).
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
        check_tool_call(name, &id)?;
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
        None => parse(&json_of(resp, endpoint.timeout).await?),
    }
}

/// The most tool calls one streamed answer may carry (the first is the one read).
const MAX_CALLS: usize = 64;

/// A streamed Chat Completions answer, read chunk by chunk: `choices[0].delta` carries text
/// or pieces of tool calls (by `index`), a last chunk the `usage`, then `data: [DONE]`.
#[derive(Debug, Default)]
pub struct Chunks {
    text: String,
    /// By index: id, name, arguments so far.
    calls: BTreeMap<u64, (String, String, String)>,
    usage: Option<Value>,
    tokens: u64,
    finished: bool,
    done: bool,
}

impl stream::Fold for Chunks {
    fn event(&mut self, event: &sse::Event) -> Result<(), CallError> {
        if event.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let v = stream::json(event)?;
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            let message = e["message"]
                .as_str()
                .map_or_else(|| e.to_string(), str::to_owned);
            return Err(CallError::Stream(message.chars().take(300).collect()));
        }
        if v["usage"].is_object() {
            self.usage = Some(v["usage"].clone());
        }
        let Some(choice) = v["choices"].as_array().and_then(|c| c.first()) else {
            return Ok(());
        };
        let delta = &choice["delta"];
        if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
            self.text.push_str(t);
            self.tokens += 1;
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap_or(0);
            if !self.calls.contains_key(&index) && self.calls.len() >= MAX_CALLS {
                return Err(CallError::Malformed(format!(
                    "a streamed answer with more than {MAX_CALLS} tool calls"
                )));
            }
            let (id, name, args) = self.calls.entry(index).or_default();
            if let Some(i) = call["id"].as_str() {
                i.clone_into(id);
            }
            if let Some(n) = call["function"]["name"].as_str() {
                name.push_str(n);
            }
            // Refused as soon as it is too long, not after megabytes more of it.
            check_tool_call(name.as_str(), id.as_str())?;
            if let Some(a) = call["function"]["arguments"].as_str() {
                args.push_str(a);
                self.tokens += 1;
            }
        }
        self.finished |= choice["finish_reason"].is_string();
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
        let calls: Vec<Value> = self
            .calls
            .into_values()
            .map(|(id, name, arguments)| {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let content = if self.text.is_empty() && !self.finished {
            Value::Null
        } else {
            json!(self.text)
        };
        let mut message = json!({"role": "assistant", "content": content});
        if !calls.is_empty() {
            message["tool_calls"] = json!(calls);
        }
        // The answer as it would have come whole, read the one way.
        parse(&json!({"choices": [{"message": message}], "usage": self.usage}))
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
