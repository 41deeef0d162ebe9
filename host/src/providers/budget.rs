//! `[budget]`: tokens per session (a daemon client's connection; a one-shot command's own
//! invocation) and dollars per day (across every process that writes the same spend log).
//! Both refuse a call before it is made when it could overspend.
//!
//! Calls run concurrently (a connection may have several requests in flight, and there are
//! many connections), so the check before a call and the charge after it are not enough: every
//! call in flight would pass the same check. A call that passes **reserves** its estimate (a
//! [`Reservation`]) under the same lock as the check, and every later check counts what is
//! spent, what calls in flight have reserved and its own estimate. After the call its real
//! cost is charged and the reservation given back; dropping the reservation gives it back, so
//! a call that failed, or whose future was dropped mid-call, holds nothing afterwards.
//!
//! What this bounds: a call's estimate is checked before it is made, and what it is charged
//! after may be more (a longer answer than the allowance, say). So what is spent ends at most
//! the limit plus the sum of how much each call in flight at the last admission was charged
//! beyond its estimate; with calls that stay within their estimates, at most the limit.
//! Dollars are reserved in this process only: two processes on the same spend log each count
//! the other's calls once they are charged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use super::config::Price;
use crate::pipeline::PipelineError;

/// Sessions whose spend is remembered at once; the longest idle is forgotten past this (never
/// one whose calls are in flight).
const SESSIONS: usize = 4096;

/// Dollars spent today (UTC), as the spend log has them.
pub type SpentToday = Box<dyn Fn() -> f64 + Send + Sync>;

/// One session's tokens.
#[derive(Debug)]
struct Account {
    /// Charged for calls that answered.
    spent: u64,
    /// Reserved by its calls in flight.
    reserved: u64,
    /// When it last reserved or was charged, to forget the longest idle.
    at: Instant,
}

/// Dollars reserved by this process's calls in flight, against the day's limit.
#[derive(Debug, Default)]
struct Reserved {
    dollars: f64,
    /// How many calls hold some: at none the sum is exactly 0 again, whatever the rounding.
    calls: usize,
    /// How many reservations have been given back, ever: a check that read today's spend
    /// while this moved reads it again (what settled meanwhile may be in neither).
    released: u64,
}

/// This process's dollars on one day (UTC).
#[derive(Debug)]
struct Today {
    day: u64,
    /// Charged for calls that answered: today's spend when there is no spend log.
    dollars: f64,
    /// Of those, what the spend log could not record: counted beside the log's sum, so that
    /// a failed write does not make a call free.
    unrecorded: f64,
}

impl Today {
    /// This, started over if its day is past.
    fn current(&mut self) -> &mut Today {
        let today = day();
        if self.day != today {
            *self = Today {
                day: today,
                dollars: 0.0,
                unrecorded: 0.0,
            };
        }
        self
    }
}

/// How often a check reads today's spend again when calls settled while it read, before it
/// reads holding the lock that their reservations are given back under.
const REREADS: usize = 4;

/// What has been spent: tokens per session, and this process's dollars today; and what calls
/// in flight have reserved of both. Kept apart from the limits so that the daemon carries it
/// across reloads (a reload must neither refill budgets nor forget the calls in flight).
#[derive(Debug)]
pub struct Spending {
    sessions: Mutex<HashMap<Option<String>, Account>>,
    /// The dollars spent by this process today.
    own: Mutex<Today>,
    /// Dollars reserved. A check and its reservation are made under one hold of its lock, so
    /// that two checks never both count the same room; today's spend is read outside it (a
    /// reservation given back never waits behind the spend log) unless calls keep settling.
    reserved: Mutex<Reserved>,
}

impl Default for Spending {
    fn default() -> Self {
        Spending {
            sessions: Mutex::new(HashMap::new()),
            own: Mutex::new(Today {
                day: day(),
                dollars: 0.0,
                unrecorded: 0.0,
            }),
            reserved: Mutex::new(Reserved::default()),
        }
    }
}

/// `mutex`'s guard, poisoned or not (every update under these locks leaves a consistent value).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// `session`'s account in `sessions`, made if new. Past [`SESSIONS`] the longest idle session
/// that has no call in flight is forgotten first (when every one has, the map grows by the
/// calls in flight, which are bounded, rather than forget a reservation).
fn account<'a>(
    sessions: &'a mut HashMap<Option<String>, Account>,
    session: Option<&str>,
) -> &'a mut Account {
    let key = session.map(str::to_owned);
    if sessions.len() >= SESSIONS && !sessions.contains_key(&key) {
        let idle = sessions
            .iter()
            .filter(|(_, a)| a.reserved == 0)
            .min_by_key(|(_, a)| a.at)
            .map(|(k, _)| k.clone());
        if let Some(k) = idle {
            sessions.remove(&k);
        }
    }
    sessions.entry(key).or_insert_with(|| Account {
        spent: 0,
        reserved: 0,
        at: Instant::now(),
    })
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

    /// Count on `spending` (what an earlier cascade of the same daemon spent, and what its
    /// calls still in flight have reserved).
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

    /// Tokens `session` has spent (charged; not what its calls in flight reserve).
    pub fn spent(&self, session: Option<&str>) -> u64 {
        lock(&self.spending.sessions)
            .get(&session.map(str::to_owned))
            .map_or(0, |a| a.spent)
    }

    /// Dollars spent today: the spend log's sum (with what this process could not record in
    /// it), or without a log this process's own.
    pub fn spent_today(&self) -> f64 {
        match &self.today {
            Some(f) => f() + lock(&self.spending.own).current().unrecorded,
            None => lock(&self.spending.own).current().dollars,
        }
    }

    /// Reserve `requested` tokens of `session`'s budget for a call about to be made: it may be
    /// made when what the session has spent, what its calls in flight have reserved and
    /// `requested` fit the limit. Without a limit the tokens are reserved all the same (a
    /// reload may bring one while the call is in flight).
    ///
    /// # Errors
    /// [`PipelineError::Budget`] when the call could overspend the session; nothing is
    /// reserved then.
    pub fn reserve_tokens(
        &self,
        session: Option<&str>,
        requested: u64,
    ) -> Result<Reservation, PipelineError> {
        let mut sessions = lock(&self.spending.sessions);
        if let Some(limit) = self.session_tokens {
            let (spent, reserved) = sessions
                .get(&session.map(str::to_owned))
                .map_or((0, 0), |a| (a.spent, a.reserved));
            let remaining = limit.saturating_sub(spent).saturating_sub(reserved);
            if requested > remaining {
                let whose = if session.is_some() {
                    "this session"
                } else {
                    "this command"
                };
                let in_flight = if reserved > 0 {
                    format!(" ({reserved} more are reserved by its calls in flight)")
                } else {
                    String::new()
                };
                return Err(PipelineError::Budget {
                    message: format!(
                        "this request could use about {requested} tokens; {whose} has \
                         {remaining} of its {limit} left{in_flight} ([budget] session_tokens)"
                    ),
                    remaining,
                    requested,
                });
            }
        }
        let entry = account(&mut sessions, session);
        entry.reserved = entry.reserved.saturating_add(requested);
        entry.at = Instant::now();
        Ok(Reservation {
            spending: self.spending.clone(),
            tokens: Some((session.map(str::to_owned), requested)),
            dollars: None,
        })
    }

    /// Reserve, for a call to `model` at `price` that could use `tokens` (prompt) and `answer`
    /// (answer) tokens, its estimated cost of today's budget: it may be made when today's
    /// spend, what this process's calls in flight have reserved and the estimate fit the
    /// limit. Always when the call costs nothing (reserving nothing), and when there is no
    /// daily limit (reserving a priced call's estimate all the same, since a reload may bring
    /// one while the call is in flight). Reads the spend log when there is a limit.
    ///
    /// # Errors
    /// Why not, for the cascade's list: over the limit, or no price known to count it with;
    /// nothing is reserved then.
    pub fn reserve_dollars(
        &self,
        model: &str,
        price: Option<Price>,
        tokens: u64,
        answer: u64,
    ) -> Result<Reservation, DailyRefusal> {
        let nothing = || Reservation {
            spending: self.spending.clone(),
            tokens: None,
            dollars: None,
        };
        // What it could cost; `None` when nothing (a local model at 0, or no price).
        let costs = |price| Some(super::prices::cost(price, tokens, answer)).filter(|e| *e > 0.0);
        let Some(limit) = self.daily_usd else {
            return Ok(match price.and_then(costs) {
                Some(estimate) => self.hold(&mut lock(&self.spending.reserved), estimate),
                None => nothing(),
            });
        };
        let Some(price) = price else {
            return Err(DailyRefusal::Unpriced(format!(
                "no price is known for {model:?}, so [budget] daily_usd cannot count it: add \
                 [prices.\"{model}\"] with input and output (dollars per million tokens; 0 for a \
                 local model)"
            )));
        };
        // A call that costs nothing (a local model at 0) is never refused.
        let Some(estimate) = costs(price) else {
            return Ok(nothing());
        };
        // A call that settles is charged (in the log) before it gives its reservation back.
        // So when none was given back from before the read to after it, each call is counted
        // in the read or in what is reserved, at least once; when some were, read again.
        let mut rereads = 0;
        let (mut reserved, spent) = loop {
            let seen = lock(&self.spending.reserved).released;
            let spent = self.spent_today();
            let reserved = lock(&self.spending.reserved);
            if reserved.released == seen {
                break (reserved, spent);
            }
            rereads += 1;
            if rereads == REREADS {
                // Calls keep settling: read once holding the lock they give back under.
                let spent = self.spent_today();
                break (reserved, spent);
            }
        };
        if spent + reserved.dollars + estimate > limit {
            return Err(DailyRefusal::Over {
                spent,
                reserved: reserved.dollars,
                limit,
                estimate,
            });
        }
        Ok(self.hold(&mut reserved, estimate))
    }

    /// Reserve `estimate` dollars in `reserved` (its lock held).
    fn hold(&self, reserved: &mut Reserved, estimate: f64) -> Reservation {
        reserved.dollars += estimate;
        reserved.calls += 1;
        Reservation {
            spending: self.spending.clone(),
            tokens: None,
            dollars: Some(estimate),
        }
    }

    /// `session` spent `tokens` and `dollars` on a call that answered (or broke off after its
    /// first token). Charge before dropping the call's [`Reservation`].
    pub fn charge(&self, session: Option<&str>, tokens: u64, dollars: Option<f64>) {
        let mut sessions = lock(&self.spending.sessions);
        let entry = account(&mut sessions, session);
        entry.spent = entry.spent.saturating_add(tokens);
        entry.at = Instant::now();
        drop(sessions);
        if let Some(d) = dollars {
            lock(&self.spending.own).current().dollars += d;
        }
    }

    /// `dollars` of a charge the spend log could not record: counted beside the log's sum
    /// for the rest of the day, in this process.
    pub fn unrecorded(&self, dollars: f64) {
        lock(&self.spending.own).current().unrecorded += dollars;
    }
}

/// What one call in flight has reserved of the budgets ([`Budget::reserve_tokens`],
/// [`Budget::reserve_dollars`]). Dropping it gives the reservation back, however the call
/// ended (answered, failed, or its future dropped mid-call): charge what the call cost
/// ([`Budget::charge`]) before it is dropped, so that no check in between misses the call.
#[must_use = "dropping a reservation gives it back at once"]
#[derive(Debug)]
pub struct Reservation {
    spending: Arc<Spending>,
    /// The session and the tokens reserved of its budget.
    tokens: Option<(Option<String>, u64)>,
    /// The dollars reserved of today's budget.
    dollars: Option<f64>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some((session, tokens)) = self.tokens.take() {
            // A session with a reservation is never forgotten, so its account is there.
            if let Some(a) = lock(&self.spending.sessions).get_mut(&session) {
                a.reserved = a.reserved.saturating_sub(tokens);
            }
        }
        if let Some(dollars) = self.dollars.take() {
            let mut reserved = lock(&self.spending.reserved);
            reserved.calls = reserved.calls.saturating_sub(1);
            reserved.dollars = if reserved.calls == 0 {
                0.0
            } else {
                (reserved.dollars - dollars).max(0.0)
            };
            reserved.released = reserved.released.wrapping_add(1);
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
        /// Dollars reserved by this process's calls in flight.
        reserved: f64,
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
        assert!(b.reserve_tokens(Some("a"), 200).is_err());
        assert!(
            b.reserve_tokens(Some("b"), 200).is_ok(),
            "another session has its own"
        );
        assert!(b.reserve_tokens(None, 1000).is_ok());
        assert!(b.reserve_tokens(None, 1001).is_err());
    }

    #[test]
    fn a_reservation_counts_against_the_session_until_it_is_dropped() {
        let b = Budget::new(Some(1000), None);
        let first = b.reserve_tokens(Some("a"), 600).expect("fits");
        match b.reserve_tokens(Some("a"), 600) {
            Err(PipelineError::Budget {
                remaining, message, ..
            }) => {
                assert_eq!(remaining, 400);
                assert!(message.contains("600 more are reserved"), "{message}");
            }
            other => panic!("expected a budget error, got {other:?}"),
        }
        // Charged what it used, then given back: the rest is free again.
        b.charge(Some("a"), 100, None);
        drop(first);
        let second = b
            .reserve_tokens(Some("a"), 900)
            .expect("fits after the first settled");
        assert_eq!(b.spent(Some("a")), 100, "a reservation is not spending");
        drop(second);
        assert_eq!(
            lock(&b.spending.sessions)
                .get(&Some("a".to_owned()))
                .map(|a| a.reserved),
            Some(0)
        );
    }

    /// $3 per million prompt tokens, answers free: 1000 prompt tokens cost $0.003.
    const PROMPT_AT_3: Option<Price> = Some(Price {
        input: 3.0,
        output: 0.0,
    });

    #[test]
    fn dollars_are_counted_per_day_and_unpriced_models_are_refused() {
        let b = Budget::new(None, Some(0.01));
        let price = Some(Price {
            input: 3.0,
            output: 15.0,
        });
        drop(b.reserve_dollars("m", price, 1000, 100).expect("fits"));
        b.charge(None, 0, Some(0.009));
        assert!(matches!(
            b.reserve_dollars("m", price, 1000, 100),
            Err(DailyRefusal::Over { .. })
        ));
        assert!(matches!(
            b.reserve_dollars("m", None, 1, 1),
            Err(DailyRefusal::Unpriced(w)) if w.contains("[prices.\"m\"]")
        ));
        let shared = Budget::new(None, Some(1.0)).with_spend_log(Box::new(|| 0.999));
        assert!(shared.reserve_dollars("m", price, 1000, 100).is_err());
    }

    #[test]
    fn dollars_reserved_by_calls_in_flight_count_until_dropped() {
        // $3 per million prompt tokens: 1000 tokens cost $0.003; three fit in $0.01, not four.
        let b = Budget::new(None, Some(0.01));
        let price = PROMPT_AT_3;
        let held: Vec<Reservation> = (0..3)
            .map(|_| b.reserve_dollars("m", price, 1000, 0).expect("fits"))
            .collect();
        match b.reserve_dollars("m", price, 1000, 0) {
            Err(DailyRefusal::Over {
                spent, reserved, ..
            }) => {
                assert_eq!(spent, 0.0);
                assert!((reserved - 0.009).abs() < 1e-12, "{reserved}");
            }
            other => panic!("expected the day's limit, got {other:?}"),
        }
        drop(held);
        assert_eq!(lock(&b.spending.reserved).dollars, 0.0);
        assert!(b.reserve_dollars("m", price, 1000, 0).is_ok());
        // Free calls reserve nothing.
        let free = b.reserve_dollars("m", Some(Price::default()), 1000, 0);
        assert!(free.is_ok_and(|r| r.dollars.is_none()));
    }

    #[test]
    fn many_sessions_stay_bounded() {
        let b = Budget::new(Some(10), None);
        for i in 0..SESSIONS + 10 {
            b.charge(Some(&i.to_string()), 1, None);
        }
        assert!(lock(&b.spending.sessions).len() <= SESSIONS);
    }

    #[test]
    fn a_call_that_settles_while_the_spend_log_is_read_is_counted() {
        // $3 per million prompt tokens: 3000 tokens cost $0.009, 1000 cost $0.003.
        let price = PROMPT_AT_3;
        let log = Arc::new(Mutex::new(0.0_f64));
        let settling: Arc<Mutex<Option<Reservation>>> = Arc::default();
        let (l, s) = (log.clone(), settling.clone());
        // The spend log as another call settles while it is read: the read sees the log
        // before that call's charge, and the call gives its reservation back meanwhile.
        let b = Budget::new(None, Some(0.01)).with_spend_log(Box::new(move || {
            let before = *lock(&l);
            if let Some(call) = lock(&s).take() {
                *lock(&l) = 0.009;
                drop(call);
            }
            before
        }));
        let first = b.reserve_dollars("m", price, 3000, 0).expect("fits");
        *lock(&settling) = Some(first);
        assert!(
            matches!(
                b.reserve_dollars("m", price, 1000, 0),
                Err(DailyRefusal::Over { spent, .. }) if (spent - 0.009).abs() < 1e-12
            ),
            "read again once the call had settled"
        );
        assert!(lock(&settling).is_none());
    }

    #[test]
    fn a_priced_call_made_without_a_daily_limit_counts_once_a_reload_brings_one() {
        let price = PROMPT_AT_3;
        let unlimited = Budget::new(None, None);
        let in_flight = unlimited
            .reserve_dollars("m", price, 3000, 0)
            .expect("no limit");
        let reloaded = Budget::new(None, Some(0.01)).with_spending(unlimited.spending.clone());
        assert!(matches!(
            reloaded.reserve_dollars("m", price, 1000, 0),
            Err(DailyRefusal::Over { reserved, .. }) if (reserved - 0.009).abs() < 1e-12
        ));
        drop(in_flight);
        assert!(reloaded.reserve_dollars("m", price, 1000, 0).is_ok());
    }

    #[test]
    fn a_charge_the_spend_log_could_not_record_still_counts() {
        let b = Budget::new(None, Some(0.01)).with_spend_log(Box::new(|| 0.002));
        b.charge(None, 0, Some(0.005));
        assert_eq!(b.spent_today(), 0.002, "the log has this process's records");
        b.unrecorded(0.005);
        assert!((b.spent_today() - 0.007).abs() < 1e-12);
    }

    #[test]
    fn a_session_with_a_call_in_flight_is_never_forgotten() {
        let b = Budget::new(Some(10), None);
        let held = b.reserve_tokens(Some("busy"), 10).expect("fits");
        for i in 0..SESSIONS + 10 {
            b.charge(Some(&i.to_string()), 1, None);
        }
        assert!(
            b.reserve_tokens(Some("busy"), 1).is_err(),
            "its reservation still counts"
        );
        drop(held);
        assert!(b.reserve_tokens(Some("busy"), 10).is_ok());
    }
}
