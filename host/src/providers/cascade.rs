//! The cascade: providers in order until one answers, each behind its circuit breaker
//! ([`super::breaker`]: timeouts, connection failures, slow failures and 429s leave a provider
//! alone for a while); a selector may pick the model or skip a provider; the budgets
//! ([`super::budget`]) refuse a call that could overspend, counting what the calls in flight
//! have reserved. When all fail, one error lists each provider and why. A streamed answer that
//! breaks off after its first token is not asked of the next provider.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;

use super::breaker::{Admit, Breakers, ProviderHealth};
use super::budget::{Budget, DailyRefusal, Spending, SpentToday};
use super::config::{Price, SelectorRule};
use super::{Endpoint, Usage, prices};
use crate::pipeline::{OnProgress, PipelineError, Provider, ProviderReply, ProviderRequest};

/// Tokens assumed for an answer when checking the budget before a call.
const ANSWER_ALLOWANCE: u64 = 1024;
/// Most tokens a provider's count of one call is taken for, prompt and answer each (past the
/// largest context any model offers): a count past it is a broken or hostile server's, which
/// would otherwise spend the day's budget in one call and overflow the spend log's sums.
pub const MOST_REPORTED: u64 = 4_000_000;

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

/// Where usage records go (the database, for `passepartout status` and the daily budget).
///
/// # Errors
/// The record could not be written; its cost is then counted in this process instead.
pub type UsageSink = Box<dyn Fn(&UsageRecord) -> rusqlite::Result<()> + Send + Sync>;

/// What a cascade keeps across the daemon's reloads, which build a new one from the changed
/// configuration: the breakers' states and what each session spent (a reload must neither
/// retry a provider that is left alone nor refill a budget).
#[derive(Clone, Debug, Default)]
pub struct Carried {
    breakers: Arc<Breakers>,
    spending: Arc<Spending>,
}

/// The providers, tried in order.
pub struct Cascade {
    endpoints: Vec<Endpoint>,
    selector: Vec<SelectorRule>,
    prices: BTreeMap<String, Price>,
    budget: Budget,
    breakers: Arc<Breakers>,
    records: Mutex<Vec<UsageRecord>>,
    sink: Option<UsageSink>,
}

impl Cascade {
    /// A cascade over `endpoints`, without a budget.
    pub fn new(endpoints: Vec<Endpoint>) -> Cascade {
        Cascade {
            endpoints,
            selector: Vec::new(),
            prices: BTreeMap::new(),
            budget: Budget::new(None, None),
            breakers: Arc::default(),
            records: Mutex::new(Vec::new()),
            sink: None,
        }
    }

    /// From configuration: endpoints, selector, prices and budget.
    pub fn from_config(config: &super::ProvidersConfig) -> Cascade {
        let mut c = Cascade::new(config.endpoints());
        c.selector = config.selector.clone();
        c.prices = config.prices.clone();
        c.budget = Budget::new(config.budget.session_tokens, config.budget.daily_usd);
        c
    }

    /// Limit each session to `tokens`, and each day to `daily_usd`.
    pub fn with_budget(mut self, tokens: Option<u64>, daily_usd: Option<f64>) -> Cascade {
        self.budget = Budget::new(tokens, daily_usd);
        self
    }

    /// Send each usage record to `sink` as well, and count today's dollars with `today`
    /// (both the spend log, which every process shares).
    pub fn with_spend_log(mut self, sink: UsageSink, today: SpentToday) -> Cascade {
        self.sink = Some(sink);
        let budget = std::mem::replace(&mut self.budget, Budget::new(None, None));
        self.budget = budget.with_spend_log(today);
        self
    }

    /// Price models with `prices` (dollars per million tokens) before the well-known list.
    pub fn with_prices(mut self, prices: BTreeMap<String, Price>) -> Cascade {
        self.prices = prices;
        self
    }

    /// Keep breakers and spending in `carried` (the daemon's, across reloads).
    pub fn carrying(mut self, carried: &Carried) -> Cascade {
        self.breakers = carried.breakers.clone();
        let budget = std::mem::replace(&mut self.budget, Budget::new(None, None));
        self.budget = budget.with_spending(carried.spending.clone());
        self
    }

    /// The endpoints, in order.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.endpoints
    }

    /// Tokens spent by the session `session` (`None`: calls made without one).
    pub fn spent_by(&self, session: Option<&str>) -> u64 {
        self.budget.spent(session)
    }

    /// Tokens spent by calls made without a session (a one-shot command's).
    pub fn spent(&self) -> u64 {
        self.spent_by(None)
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

    fn account(
        &self,
        session: Option<&str>,
        endpoint: &Endpoint,
        model: &str,
        price: Option<Price>,
        usage: Usage,
    ) {
        let cost = price.map(|p| prices::cost(p, usage.input_tokens, usage.output_tokens));
        self.budget.charge(
            session,
            usage.input_tokens.saturating_add(usage.output_tokens),
            cost,
        );
        let record = UsageRecord {
            provider: endpoint.name.clone(),
            model: model.to_owned(),
            usage,
            cost,
        };
        if let Some(sink) = &self.sink
            && let Err(e) = sink(&record)
        {
            tracing::error!(
                "cannot record the spend of a call to {} ({model}): {e}; this process counts it \
                 against today's budget instead",
                endpoint.name
            );
            if let Some(cost) = cost {
                self.budget.unrecorded(cost);
            }
        }
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }
}

/// What an answer is charged: for the prompt and for the answer each, the larger of the
/// provider's count and the local estimate (the prompt's by [`estimate`], the answer's by its
/// length in [`tokens_of`]), and at least one token. A provider's count is never trusted alone:
/// a server that reports one token beside megabytes of answer, or leaves `usage` out (a stream
/// without its usage chunk), would otherwise never run a budget out.
fn charged(usage: Usage, requested: u64, reply: &ProviderReply) -> Usage {
    let believable = |n: u64, what: &str| {
        if n > MOST_REPORTED {
            tracing::warn!(
                "the provider reported {n} {what} tokens for one call; counted as {MOST_REPORTED}"
            );
        }
        n.min(MOST_REPORTED)
    };
    let usage = Usage {
        input_tokens: believable(usage.input_tokens, "prompt"),
        output_tokens: believable(usage.output_tokens, "answer"),
    };
    let answer_bytes = match reply {
        ProviderReply::Text(t) => t.len(),
        ProviderReply::ToolCall {
            name, arguments, ..
        } => name.len() + arguments.to_string().len(),
    };
    Usage {
        input_tokens: usage
            .input_tokens
            .max(requested.saturating_sub(ANSWER_ALLOWANCE))
            .max(1),
        output_tokens: usage.output_tokens.max(tokens_of(answer_bytes)).max(1),
    }
}

/// The local estimate of `bytes` of text in tokens: 4 bytes a token, rounded up. Both the
/// check before a call ([`estimate`]) and the charge after it ([`charged`]) count with this.
fn tokens_of(bytes: usize) -> u64 {
    u64::try_from(bytes).unwrap_or(u64::MAX).div_ceil(4)
}

/// A rough token count of the prompt ([`tokens_of`] its text), plus the answer's allowance.
fn estimate(req: &ProviderRequest) -> u64 {
    let bytes = req.system.len()
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
    tokens_of(bytes).saturating_add(ANSWER_ALLOWANCE)
}

#[async_trait::async_trait]
impl Provider for Cascade {
    fn name(&self) -> &str {
        "cascade"
    }

    fn health(&self) -> Vec<ProviderHealth> {
        self.breakers.health(
            self.endpoints
                .iter()
                .map(|e| (e.name.clone(), e.breaker_key())),
        )
    }

    fn spend(&self, session: Option<Option<&str>>) -> Option<super::budget::SpendStatus> {
        Some(self.budget.status(session))
    }

    async fn complete_with(
        &self,
        req: &ProviderRequest,
        progress: Option<OnProgress<'_>>,
    ) -> Result<ProviderReply, PipelineError> {
        let session = req.session.as_deref();
        let requested = estimate(req);
        // Reserved until this ask returns, or its future is dropped: the asks in flight at
        // once count each other's estimates, and what answers is charged before it is given
        // back.
        let _tokens = self.budget.reserve_tokens(session, requested)?;
        let mut failures = Vec::new();
        let mut last = None;
        let mut attempts = 0;
        // The day's budget refused this provider's price: a cheaper one later may still fit.
        let mut over = None;
        // A streamed answer broke off: the providers after it were not asked.
        let mut cut = false;
        for endpoint in &self.endpoints {
            let Some(model) = self.select(endpoint, req) else {
                failures.push(format!("{}: skipped by the model selector", endpoint.name));
                continue;
            };
            let price = prices::price(&self.prices, &model);
            // Today's spend may be read from the spend log (SQLite). The estimate is reserved
            // for this provider's call, and given back when it is over (`dollars` dropped).
            let affordable = crate::blocking::in_place(|| {
                self.budget.reserve_dollars(
                    &model,
                    price,
                    requested.saturating_sub(ANSWER_ALLOWANCE),
                    ANSWER_ALLOWANCE,
                )
            });
            let dollars = match affordable {
                Ok(reservation) => reservation,
                Err(DailyRefusal::Unpriced(why)) => {
                    failures.push(format!("{} ({model}): {why}", endpoint.name));
                    continue;
                }
                Err(DailyRefusal::Over {
                    spent,
                    reserved,
                    limit,
                    estimate,
                }) => {
                    let in_flight = if reserved > 0.0 {
                        format!(" (${reserved:.4} more reserved by calls in flight)")
                    } else {
                        String::new()
                    };
                    // Refused for what calls in flight may cost: room may come back sooner.
                    let when = if spent + estimate <= limit {
                        "try again once the calls in flight have answered"
                    } else {
                        "it starts again at midnight UTC"
                    };
                    let why = format!(
                        "today's spend is ${spent:.4}{in_flight} of the ${limit:.2} [budget] \
                         daily_usd allows, and this call could cost about ${estimate:.4}; {when}"
                    );
                    failures.push(format!("{} ({model}): {why}", endpoint.name));
                    over = Some((why, spent, limit));
                    continue;
                }
            };
            let key = endpoint.breaker_key();
            if let Admit::Skip(why) = self.breakers.admit(&key, endpoint.timeout) {
                failures.push(format!("{}: {why}", endpoint.name));
                continue;
            }
            attempts += 1;
            last = Some(endpoint.name.clone());
            let started = Instant::now();
            match endpoint.call(req, &model, progress).await {
                Ok((reply, usage)) => {
                    self.breakers.succeeded(&key);
                    let usage = charged(usage, requested, &reply);
                    // The spend log's sink writes to SQLite.
                    crate::blocking::in_place(|| {
                        self.account(session, endpoint, &model, price, usage);
                    });
                    // Charged, then given back: a check in between counts the call at least
                    // once. (The session's tokens go back when this returns.)
                    drop(dollars);
                    return Ok(reply);
                }
                Err(e) => {
                    self.breakers
                        .failed(&key, &e, started.elapsed(), endpoint.timeout);
                    // The error reaches the person in the answer; the log has it for the
                    // daemon's operator, not as a second copy on a one-shot command's stderr.
                    tracing::info!("provider {} ({model}) failed: {e}", endpoint.name);
                    failures.push(format!("{} ({model}): {e}", endpoint.name));
                    // What a failed call was paid for is counted, the prompt by estimate: part
                    // of an answer received (and its progress shown), or a 2xx answer that is
                    // not the protocol (a tool call whose arguments are not JSON, say), so that
                    // answers no one can use still run the budgets out.
                    use crate::providers::http::CallError;
                    let prompt = requested.saturating_sub(ANSWER_ALLOWANCE);
                    let paid = match &e {
                        CallError::Cut { tokens, .. } => Some(Usage {
                            input_tokens: prompt,
                            output_tokens: *tokens,
                        }),
                        CallError::Malformed(_) => Some(Usage {
                            input_tokens: prompt.max(1),
                            output_tokens: 1,
                        }),
                        _ => None,
                    };
                    if let Some(usage) = paid {
                        crate::blocking::in_place(|| {
                            self.account(session, endpoint, &model, price, usage);
                        });
                    }
                    // Another provider's answer would not continue one cut off: none is asked.
                    if matches!(e, CallError::Cut { .. }) {
                        drop(dollars);
                        cut = true;
                        break;
                    }
                }
            }
        }
        // Nothing was asked, and the day's budget is why: say that, not "every provider failed".
        if let (0, Some((message, spent_usd, limit_usd))) = (attempts, over) {
            return Err(PipelineError::DailySpend {
                message,
                spent_usd,
                limit_usd,
            });
        }
        let message = if cut {
            format!(
                "{}; the providers after it were not asked, since part of this answer had come",
                failures.join("; ")
            )
        } else if self.endpoints.is_empty() {
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
