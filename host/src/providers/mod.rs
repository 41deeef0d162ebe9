//! The language models behind Reason: OpenAI-compatible Chat Completions and Anthropic
//! Messages over HTTP, tried in order by a [`cascade::Cascade`] that falls through on failure,
//! with a token budget.
//!
//! Configuration: `[[providers]]` in `$XDG_CONFIG_HOME/passepartout/passepartout.toml`, with the
//! seed's variables as overrides (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `OPENROUTER_API_KEY`,
//! `GEMINI_API_KEY`, `LLM_API_KEY`; `OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`;
//! `PASSEPARTOUT_MODEL`). With nothing configured, a local Ollama is tried.

pub mod anthropic;
pub mod breaker;
pub mod budget;
pub mod cascade;
pub mod config;
pub mod http;
pub mod lenient;
pub mod openai;
pub mod prices;
pub mod spend;
pub mod sse;
pub mod stream;

use std::time::Duration;

pub use cascade::Cascade;
pub use config::{ProviderConfig, ProvidersConfig};

/// The longest `passepartout doctor` waits for one provider.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest tool name, and the longest tool call id, an answer may carry, in bytes. Real
/// ones are a few dozen; a longer one would be copied into logs, prompts and the journal (an
/// answer may be megabytes), so it is refused as not the protocol.
pub const MAX_TOOL_CALL_FIELD: usize = 256;

/// Whether a tool call's `name` and `id` fit [`MAX_TOOL_CALL_FIELD`] (both protocols, whole or
/// streamed, read their tool calls through this).
///
/// # Errors
/// [`http::CallError::Malformed`] naming what is too long, its length and the limit.
pub fn check_tool_call(name: &str, id: &str) -> Result<(), http::CallError> {
    for (what, value) in [("tool name", name), ("tool call id", id)] {
        if value.len() > MAX_TOOL_CALL_FIELD {
            return Err(http::CallError::Malformed(format!(
                "a {what} of {} bytes (at most {MAX_TOOL_CALL_FIELD})",
                value.len()
            )));
        }
    }
    Ok(())
}

/// An API key. Never printed: `Debug` shows `***`.
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    /// Wrap a key.
    pub fn new(key: impl Into<String>) -> Secret {
        Secret(key.into())
    }
    /// The key itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// The wire protocol a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// OpenAI-compatible Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// Tokens one answer used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Answer tokens.
    pub output_tokens: u64,
}

/// Where and how to reach one provider.
#[derive(Clone, Debug)]
pub struct Endpoint {
    /// The provider's name in the cascade (`openai`, `anthropic`, `ollama`...).
    pub name: String,
    /// Its protocol.
    pub protocol: Protocol,
    /// Base URL: `https://api.openai.com/v1` style for OpenAI, `https://api.anthropic.com`
    /// for Anthropic.
    pub base_url: String,
    /// The model to ask for.
    pub model: String,
    /// The key, if it needs one.
    pub key: Option<Secret>,
    /// How long one call may take.
    pub timeout: Duration,
    /// The HTTP client.
    pub client: reqwest::Client,
    /// Whether to ask for a streamed answer when someone follows it (`stream = false` in its
    /// `[[providers]]` section for a server that cannot).
    pub stream: bool,
}

impl Endpoint {
    /// Ask this provider; with `progress`, for a streamed answer whose progress it is told.
    ///
    /// # Errors
    /// Any [`http::CallError`].
    pub async fn call(
        &self,
        req: &crate::pipeline::ProviderRequest,
        model: &str,
        progress: Option<crate::pipeline::OnProgress<'_>>,
    ) -> Result<(crate::pipeline::ProviderReply, Usage), http::CallError> {
        match self.protocol {
            Protocol::Openai => openai::call(self, req, model, progress).await,
            Protocol::Anthropic => anthropic::call(self, req, model, progress).await,
        }
    }

    /// What its circuit breaker is kept under: its name, address and model, so that a reload
    /// that fixes a provider's address or model starts it afresh.
    pub fn breaker_key(&self) -> String {
        format!("{} {} {}", self.name, self.base_url, self.model)
    }

    /// The request body this provider would be sent (tests assert it exactly).
    pub fn body(&self, req: &crate::pipeline::ProviderRequest, model: &str) -> serde_json::Value {
        match self.protocol {
            Protocol::Openai => openai::body(req, model),
            Protocol::Anthropic => anthropic::body(req, model),
        }
    }

    /// Whether it answers, for `passepartout doctor`: `Ok(status)` or why not.
    ///
    /// # Errors
    /// The transport failure.
    pub async fn probe(&self) -> Result<u16, http::CallError> {
        match self.protocol {
            Protocol::Openai => openai::probe(self).await,
            Protocol::Anthropic => anthropic::probe(self).await,
        }
    }
}
