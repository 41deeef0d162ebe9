//! The cascade: providers in order until one answers; a 429's Retry-After puts a provider on
//! cooldown; a selector may pick the model or skip a provider; a session budget refuses a call
//! that could overspend. When all fail, one error lists each provider and why.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::config::{Price, SelectorRule};
use super::http::CallError;
use super::{Endpoint, Usage};
use crate::pipeline::{PipelineError, Provider, ProviderReply, ProviderRequest};

/// Tokens assumed for an answer when checking the budget before a call.
const ANSWER_ALLOWANCE: u64 = 1024;

/// One call's accounting.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UsageRecord {
    /// The provider that answered.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Tokens.
    pub usage: Usage,
    /// Dollars, when the model has a price.
    pub cost: Option<f64>,
}

/// Where usage records go (the database, for `passepartout status`).
pub type UsageSink = Box<dyn Fn(&UsageRecord) + Send + Sync>;

/// The providers, tried in order.
pub struct Cascade {
    endpoints: Vec<Endpoint>,
    selector: Vec<SelectorRule>,
    prices: BTreeMap<String, Price>,
    session_tokens: Option<u64>,
    spent: Mutex<u64>,
    cooldown: Mutex<BTreeMap<String, Instant>>,
    records: Mutex<Vec<UsageRecord>>,
    sink: Option<UsageSink>,
}

impl Cascade {
    /// A cascade over `endpoints`.
    pub fn new(endpoints: Vec<Endpoint>) -> Cascade {
        Cascade {
            endpoints,
            selector: Vec::new(),
            prices: BTreeMap::new(),
            session_tokens: None,
            spent: Mutex::new(0),
            cooldown: Mutex::new(BTreeMap::new()),
            records: Mutex::new(Vec::new()),
            sink: None,
        }
    }

    /// From configuration: endpoints, selector, prices and budget.
    pub fn from_config(config: &super::ProvidersConfig) -> Cascade {
        let mut c = Cascade::new(config.endpoints());
        c.selector = config.selector.clone();
        c.prices = config.prices.clone();
        c.session_tokens = config.budget.session_tokens;
        c
    }

    /// Limit the session to `tokens`.
    pub fn with_budget(mut self, tokens: Option<u64>) -> Cascade {
        self.session_tokens = tokens;
        self
    }

    /// Send each usage record to `sink` as well.
    pub fn with_sink(mut self, sink: UsageSink) -> Cascade {
        self.sink = Some(sink);
        self
    }

    /// The endpoints, in order.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// Tokens spent this session.
    pub fn spent(&self) -> u64 {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every call's accounting, in order.
    pub fn records(&self) -> Vec<UsageRecord> {
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The model to use on `endpoint` for `req`, or `None` to skip it.
    fn select(&self, endpoint: &Endpoint, req: &ProviderRequest) -> Option<String> {
        let size = req.system.len() + req.prompt.len();
        let mut model = endpoint.model.clone();
        for rule in self.selector.iter().filter(|r| r.provider == endpoint.name) {
            let by_skill = rule
                .skill
                .as_ref()
                .is_some_and(|s| req.skill.as_deref() == Some(s.as_str()));
            let by_size = rule.prompt_over_chars.is_some_and(|n| size > n);
            let unconditional = rule.skill.is_none() && rule.prompt_over_chars.is_none();
            if by_skill || by_size || unconditional {
                if rule.skip {
                    return None;
                }
                if let Some(m) = &rule.model {
                    model = m.clone();
                }
            }
        }
        Some(model)
    }

    fn account(&self, endpoint: &Endpoint, model: &str, usage: Usage) {
        *self.spent.lock().unwrap_or_else(|p| p.into_inner()) +=
            usage.input_tokens + usage.output_tokens;
        let cost = self.prices.get(model).map(|p| {
            (usage.input_tokens as f64 * p.input + usage.output_tokens as f64 * p.output)
                / 1_000_000.0
        });
        let record = UsageRecord {
            provider: endpoint.name.clone(),
            model: model.to_owned(),
            usage,
            cost,
        };
        if let Some(sink) = &self.sink {
            sink(&record);
        }
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }
}

/// A rough token count: 4 characters a token.
fn estimate(req: &ProviderRequest) -> u64 {
    let chars = req.system.len()
        + req.prompt.len()
        + req
            .turns
            .iter()
            .map(|t| t.result.len() + t.arguments.to_string().len())
            .sum::<usize>()
        + req
            .tools
            .iter()
            .map(|t| t.description.len() + t.parameters.to_string().len())
            .sum::<usize>();
    (chars as u64).div_ceil(4) + ANSWER_ALLOWANCE
}

impl Provider for Cascade {
    fn name(&self) -> &str {
        "cascade"
    }

    fn complete(&self, req: &ProviderRequest) -> Result<ProviderReply, PipelineError> {
        if let Some(limit) = self.session_tokens {
            let remaining = limit.saturating_sub(self.spent());
            let requested = estimate(req);
            if requested > remaining {
                return Err(PipelineError::Budget {
                    message: format!(
                        "this request could use about {requested} tokens; the session has {remaining} of {limit} left"
                    ),
                    remaining,
                    requested,
                });
            }
        }
        let mut failures = Vec::new();
        let mut last = None;
        let mut attempts = 0;
        for endpoint in &self.endpoints {
            let cooling = self
                .cooldown
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(&endpoint.name)
                .copied();
            if let Some(until) = cooling.filter(|u| *u > Instant::now()) {
                failures.push(format!(
                    "{}: cooling down for {} s after HTTP 429",
                    endpoint.name,
                    until.duration_since(Instant::now()).as_secs()
                ));
                continue;
            }
            let Some(model) = self.select(endpoint, req) else {
                failures.push(format!("{}: skipped by the model selector", endpoint.name));
                continue;
            };
            attempts += 1;
            last = Some(endpoint.name.clone());
            match endpoint.call(req, &model) {
                Ok((reply, usage)) => {
                    self.account(endpoint, &model, usage);
                    return Ok(reply);
                }
                Err(e) => {
                    if let CallError::RateLimited { retry_after } = &e {
                        let wait = retry_after.unwrap_or(Duration::from_secs(30));
                        self.cooldown
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .insert(endpoint.name.clone(), Instant::now() + wait);
                    }
                    tracing::warn!("provider {} ({model}) failed: {e}", endpoint.name);
                    failures.push(format!("{} ({model}): {e}", endpoint.name));
                }
            }
        }
        let message = if self.endpoints.is_empty() {
            "no provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or GEMINI_API_KEY, or [[providers]] in passepartout.toml".to_owned()
        } else if self.endpoints.len() == 1
            && self.endpoints[0].name == "ollama"
            && self.endpoints[0].key.is_none()
        {
            format!(
                "no language model is configured and no local Ollama answers ({}). Set ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or GEMINI_API_KEY, or add [[providers]] to passepartout.toml; direct actions keep working without one",
                failures.join("; ")
            )
        } else {
            format!("every provider failed: {}", failures.join("; "))
        };
        Err(PipelineError::Llm {
            message,
            provider: last,
            cascade: self.endpoints.iter().map(|e| e.name.clone()).collect(),
            attempt_count: attempts,
        })
    }
}
