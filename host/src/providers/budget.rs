//! `[budget]`: tokens per session (a daemon client's connection; a one-shot command's own
//! invocation) and dollars per day (across every process that writes the same spend log).
//! Both refuse a call before it is made when it could overspend.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::config::Price;
use crate::pipeline::PipelineError;

/// Sessions whose spend is remembered at once; the longest idle is forgotten past this.
const SESSIONS: usize = 4096;

/// Dollars spent today (UTC), as the spend log has them.
pub type SpentToday = Box<dyn Fn() -> f64 + Send + Sync>;

/// What has been spent: tokens per session, and this process's dollars today. Kept apart from
/// the limits so that the daemon carries it across reloads (a reload must not refill budgets).
#[derive(Debug)]
pub struct Spending {
    sessions: Mutex<HashMap<Option<String>, (u64, Instant)>>,
    /// The day and the dollars spent by this process on it, for when there is no spend log.
    own: Mutex<(u64, f64)>,
}

impl Default for Spending {
    fn default() -> Self {
        Spending {
            sessions: Mutex::new(HashMap::new()),
            own: Mutex::new((day(), 0.0)),
        }
    }
}

/// What has been spent against the budgets, for `status`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SpendStatus {
    /// Tokens the asking client's session has spent (absent when the status is not for one
    /// client, as in `health` events).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_tokens: Option<u64>,
    /// Tokens a session may spend (`[budget] session_tokens`), if limited.
    pub session_limit: Option<u64>,
    /// Dollars spent today (UTC) by every session and process on this database.
    pub today_usd: f64,
    /// Dollars a day may cost (`[budget] daily_usd`), if limited.
    pub daily_limit_usd: Option<f64>,
}

/// The budgets of a cascade.
pub struct Budget {
    session_tokens: Option<u64>,
    daily_usd: Option<f64>,
    spending: Arc<Spending>,
    today: Option<SpentToday>,
}

impl Budget {
    /// `session_tokens` per session, `daily_usd` per day (UTC); `None` is no limit.
    pub fn new(session_tokens: Option<u64>, daily_usd: Option<f64>) -> Budget {
        Budget {
            session_tokens,
            daily_usd,
            spending: Arc::default(),
            today: None,
        }
    }

    /// Count on `spending` (what an earlier cascade of the same daemon spent).
    pub fn with_spending(mut self, spending: Arc<Spending>) -> Budget {
        self.spending = spending;
        self
    }

    /// Count today's dollars with `today` (the spend log, shared by every process).
    pub fn with_spend_log(mut self, today: SpentToday) -> Budget {
        self.today = Some(today);
        self
    }

    /// The daily limit, if any.
    pub fn daily_usd(&self) -> Option<f64> {
        self.daily_usd
    }

    /// What has been spent, with `session`'s tokens when `Some` (`Some(None)`: calls made
    /// without a session). Reads the spend log.
    pub fn status(&self, session: Option<Option<&str>>) -> SpendStatus {
        SpendStatus {
            session_tokens: session.map(|s| self.spent(s)),
            session_limit: self.session_tokens,
            today_usd: self.spent_today(),
            daily_limit_usd: self.daily_usd,
        }
    }

    /// Tokens `session` has spent.
    pub fn spent(&self, session: Option<&str>) -> u64 {
        self.spending
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&session.map(str::to_owned))
            .map_or(0, |(t, _)| *t)
    }

    /// Dollars spent today.
    pub fn spent_today(&self) -> f64 {
        match &self.today {
            Some(f) => f(),
            None => {
                let own = self.spending.own.lock().unwrap_or_else(|p| p.into_inner());
                if own.0 == day() { own.1 } else { 0.0 }
            }
        }
    }

    /// May `session` make a call that could use `requested` tokens?
    ///
    /// # Errors
    /// [`PipelineError::Budget`] when it could overspend the session.
    pub fn check_tokens(&self, session: Option<&str>, requested: u64) -> Result<(), PipelineError> {
        let Some(limit) = self.session_tokens else {
            return Ok(());
        };
        let remaining = limit.saturating_sub(self.spent(session));
        if requested > remaining {
            let whose = if session.is_some() {
                "this session"
            } else {
                "this command"
            };
            return Err(PipelineError::Budget {
                message: format!(
                    "this request could use about {requested} tokens; {whose} has {remaining} of \
                     its {limit} left ([budget] session_tokens)"
                ),
                remaining,
                requested,
            });
        }
        Ok(())
    }

    /// May a call to `model` at `price` that could use `tokens` (prompt) and `answer` (answer)
    /// tokens be made today? Always, when there is no daily limit or the call costs nothing.
    ///
    /// # Errors
    /// Why not, for the cascade's list: over the limit, or no price known to count it with.
    pub fn check_dollars(
        &self,
        model: &str,
        price: Option<Price>,
        tokens: u64,
        answer: u64,
    ) -> Result<(), DailyRefusal> {
        let Some(limit) = self.daily_usd else {
            return Ok(());
        };
        let Some(price) = price else {
            return Err(DailyRefusal::Unpriced(format!(
                "no price is known for {model:?}, so [budget] daily_usd cannot count it: add \
                 [prices.\"{model}\"] with input and output (dollars per million tokens; 0 for a \
                 local model)"
            )));
        };
        let spent = self.spent_today();
        let estimate = super::prices::cost(price, tokens, answer);
        // A call that costs nothing (a local model at 0) is never refused.
        if estimate > 0.0 && spent + estimate > limit {
            return Err(DailyRefusal::Over {
                spent,
                limit,
                estimate,
            });
        }
        Ok(())
    }

    /// `session` spent `tokens` and `dollars` on a call that answered.
    pub fn charge(&self, session: Option<&str>, tokens: u64, dollars: Option<f64>) {
        let mut sessions = self
            .spending
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if sessions.len() >= SESSIONS && !sessions.contains_key(&session.map(str::to_owned)) {
            let idle = sessions
                .iter()
                .min_by_key(|(_, (_, at))| *at)
                .map(|(k, _)| k.clone());
            if let Some(k) = idle {
                sessions.remove(&k);
            }
        }
        let entry = sessions
            .entry(session.map(str::to_owned))
            .or_insert((0, Instant::now()));
        entry.0 = entry.0.saturating_add(tokens);
        entry.1 = Instant::now();
        drop(sessions);
        if let Some(d) = dollars {
            let mut own = self.spending.own.lock().unwrap_or_else(|p| p.into_inner());
            let today = day();
            if own.0 != today {
                *own = (today, 0.0);
            }
            own.1 += d;
        }
    }
}

/// Why the daily budget refuses a call.
#[derive(Debug)]
pub enum DailyRefusal {
    /// The provider's model has no price: it is skipped, the next may answer.
    Unpriced(String),
    /// The call could pass the day's limit: no provider is asked.
    Over {
        /// Dollars spent today.
        spent: f64,
        /// The limit.
        limit: f64,
        /// What this call could cost.
        estimate: f64,
    },
}

/// Days since the epoch (UTC): when the daily budget starts again.
pub fn day() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_counted_per_session() {
        let b = Budget::new(Some(1000), None);
        b.charge(Some("a"), 900, None);
        assert!(b.check_tokens(Some("a"), 200).is_err());
        assert!(
            b.check_tokens(Some("b"), 200).is_ok(),
            "another session has its own"
        );
        assert!(b.check_tokens(None, 1000).is_ok());
        assert!(b.check_tokens(None, 1001).is_err());
    }

    #[test]
    fn dollars_are_counted_per_day_and_unpriced_models_are_refused() {
        let b = Budget::new(None, Some(0.01));
        let price = Some(Price {
            input: 3.0,
            output: 15.0,
        });
        assert!(b.check_dollars("m", price, 1000, 100).is_ok());
        b.charge(None, 0, Some(0.009));
        assert!(matches!(
            b.check_dollars("m", price, 1000, 100),
            Err(DailyRefusal::Over { .. })
        ));
        assert!(matches!(
            b.check_dollars("m", None, 1, 1),
            Err(DailyRefusal::Unpriced(w)) if w.contains("[prices.\"m\"]")
        ));
        let shared = Budget::new(None, Some(1.0)).with_spend_log(Box::new(|| 0.999));
        assert!(shared.check_dollars("m", price, 1000, 100).is_err());
    }

    #[test]
    fn many_sessions_stay_bounded() {
        let b = Budget::new(Some(10), None);
        for i in 0..SESSIONS + 10 {
            b.charge(Some(&i.to_string()), 1, None);
        }
        assert!(b.spending.sessions.lock().expect("lock").len() <= SESSIONS);
    }
}
