//! Provider configuration: the providers' sections of `passepartout.toml`
//! ([`crate::settings::ConfigFile`]), then the vendors' environment variables.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::{Endpoint, Protocol, Secret};

/// What the provider cascade is built from: `[[providers]]`, `[budget]`, `[prices]` and
/// `[[selector]]` of `passepartout.toml` ([`crate::settings::ConfigFile::providers`]).
#[derive(Clone, Debug, Default)]
pub struct ProvidersConfig {
    /// The cascade, in order.
    pub providers: Vec<ProviderConfig>,
    /// The session budget.
    pub budget: BudgetConfig,
    /// Prices by model, per million tokens.
    pub prices: BTreeMap<String, Price>,
    /// Rules that pick a model or skip a provider.
    pub selector: Vec<SelectorRule>,
}

/// One provider.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// Its name in the cascade and in errors.
    pub name: String,
    /// `openai` (any Chat Completions server) or `anthropic`.
    pub protocol: Protocol,
    /// Base URL.
    pub base_url: String,
    /// Model.
    pub model: String,
    /// The environment variable holding its key (never the key itself in the file).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Seconds one call may take (default 60; 1 to 86400).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Ask for streamed answers when someone follows them (default true; false for a server
    /// that mishandles `stream`).
    #[serde(default)]
    pub stream: Option<bool>,
}

/// `[budget]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetConfig {
    /// Tokens one session may spend (a daemon client's connection, a one-shot command's
    /// invocation); none = unlimited.
    pub session_tokens: Option<u64>,
    /// Dollars all sessions together may spend in a day (UTC), priced by `[prices]` and the
    /// well-known models' list prices ([`super::prices`]); none = unlimited.
    #[serde(default, deserialize_with = "some_dollars")]
    pub daily_usd: Option<f64>,
}

/// A number of dollars: finite and not negative (a `nan` limit would never refuse, a negative
/// price would lower the day's spend).
fn dollars<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(serde::de::Error::custom(format!(
            "{v} is not a number of dollars: give 0 or more"
        )))
    }
}

fn some_dollars<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    dollars(d).map(Some)
}

/// `[prices.MODEL]`: dollars per million tokens.
#[derive(Clone, Copy, Debug, Default, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens.
    #[serde(deserialize_with = "dollars")]
    pub input: f64,
    /// Per million output tokens.
    #[serde(deserialize_with = "dollars")]
    pub output: f64,
}

/// `[[selector]]`: when the condition holds, use `model` on `provider`, or skip it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectorRule {
    /// The provider the rule is about.
    pub provider: String,
    /// Applies when this skill supplied the prompt.
    #[serde(default)]
    pub skill: Option<String>,
    /// Applies when the prompt (system + user) is longer than this many characters.
    #[serde(default)]
    pub prompt_over_chars: Option<usize>,
    /// Use this model instead.
    #[serde(default)]
    pub model: Option<String>,
    /// Skip the provider.
    #[serde(default)]
    pub skip: bool,
}

/// Default per-provider timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A vendor's variable (`OPENAI_API_KEY`...), through [`crate::settings`].
fn env(name: &str) -> Option<String> {
    crate::settings::named(name)
}

/// The HTTP client every provider uses: our user agent, and no redirect followed.
pub fn client() -> reqwest::Client {
    crate::tls::client_builder()
        .user_agent(concat!("passepartout/", env!("CARGO_PKG_VERSION")))
        // A redirect could carry the key header to another host: never follow one.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| {
            // Not reached with the TLS of `crate::tls`; a plain client rather than none.
            tracing::error!("the providers' HTTP client: {e}");
            reqwest::Client::default()
        })
}

impl ProvidersConfig {
    /// The cascade's endpoints: the configured providers, with keys, base URLs and the model
    /// overridden by the environment; with none configured, one per key variable that is set
    /// (Anthropic, OpenAI, OpenRouter, Gemini), else a local Ollama.
    pub fn endpoints(&self) -> Vec<Endpoint> {
        let model_override = crate::settings::MODEL.get();
        let endpoint = |name: &str,
                        protocol,
                        base_url: String,
                        model: String,
                        key: Option<String>,
                        timeout: Option<u64>| Endpoint {
            name: name.to_owned(),
            protocol,
            base_url,
            model: model_override.clone().unwrap_or(model),
            key: key.map(Secret::new),
            // At most a day: a timeout past that is a typo, and deadlines that far out
            // overflow the clocks that keep them.
            timeout: timeout.map_or(DEFAULT_TIMEOUT, |s| Duration::from_secs(s.clamp(1, 86_400))),
            client: client(),
            stream: true,
        };
        if !self.providers.is_empty() {
            return self
                .providers
                .iter()
                .map(|p| {
                    let key = p
                        .api_key_env
                        .as_deref()
                        .and_then(env)
                        .or_else(|| default_key(&p.name, p.protocol));
                    let base =
                        base_override(p.protocol, &p.name).unwrap_or_else(|| p.base_url.clone());
                    let mut e = endpoint(
                        &p.name,
                        p.protocol,
                        base,
                        p.model.clone(),
                        key,
                        p.timeout_secs,
                    );
                    e.stream = p.stream.unwrap_or(true);
                    e
                })
                .collect();
        }
        let mut out = Vec::new();
        if let Some(key) = env("ANTHROPIC_API_KEY") {
            let base =
                env("ANTHROPIC_BASE_URL").unwrap_or_else(|| "https://api.anthropic.com".into());
            out.push(endpoint(
                "anthropic",
                Protocol::Anthropic,
                base,
                "claude-sonnet-4-5".into(),
                Some(key),
                None,
            ));
        }
        if let Some(key) = env("OPENAI_API_KEY").or_else(|| env("LLM_API_KEY")) {
            let base = env("OPENAI_BASE_URL").unwrap_or_else(|| "https://api.openai.com/v1".into());
            out.push(endpoint(
                "openai",
                Protocol::Openai,
                base,
                "gpt-4o-mini".into(),
                Some(key),
                None,
            ));
        }
        if let Some(key) = env("OPENROUTER_API_KEY") {
            out.push(endpoint(
                "openrouter",
                Protocol::Openai,
                "https://openrouter.ai/api/v1".into(),
                "openrouter/auto".into(),
                Some(key),
                None,
            ));
        }
        if let Some(key) = env("GEMINI_API_KEY") {
            let base = "https://generativelanguage.googleapis.com/v1beta/openai".to_owned();
            out.push(endpoint(
                "gemini",
                Protocol::Openai,
                base,
                "gemini-2.0-flash".into(),
                Some(key),
                None,
            ));
        }
        if out.is_empty() {
            // Nothing configured: a local Ollama, if it answers. A short timeout keeps a missing
            // one from stalling every request.
            out.push(endpoint(
                "ollama",
                Protocol::Openai,
                "http://127.0.0.1:11434/v1".into(),
                "llama3.2".into(),
                None,
                Some(120),
            ));
        }
        out
    }
}

/// A configured provider without `api_key_env` gets a key only when it is one of the
/// well-known providers, by its own name: a key is never sent to a server it was not meant for.
fn default_key(name: &str, _protocol: Protocol) -> Option<String> {
    match name {
        "openrouter" => env("OPENROUTER_API_KEY"),
        "gemini" => env("GEMINI_API_KEY"),
        "anthropic" => env("ANTHROPIC_API_KEY"),
        "openai" => env("OPENAI_API_KEY").or_else(|| env("LLM_API_KEY")),
        _ => None,
    }
}

fn base_override(protocol: Protocol, name: &str) -> Option<String> {
    match (protocol, name) {
        (Protocol::Anthropic, "anthropic") => env("ANTHROPIC_BASE_URL"),
        (Protocol::Openai, "openai") => env("OPENAI_BASE_URL"),
        _ => None,
    }
}
