//! Each provider's circuit breaker: a provider that times out, cannot be reached, cuts its
//! answer off, or fails slowly (a server error or a broken answer after half its timeout or
//! more) is left alone for a cooling period (doubling on each failed probe, up to
//! [`MAX_COOLING`]); a 429 leaves it alone for as long as its `Retry-After` asks (bounded). Once
//! the period is over, a single request probes it: success closes the breaker, failure opens it
//! again. Without this, a hung provider, or one that answers 500 just inside its timeout, would
//! cost that timeout on every model call.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::http::CallError;

/// How long a provider is left alone after its first timeout or connection failure.
pub const COOLING: Duration = Duration::from_secs(30);

/// The longest cooling period, however many probes failed.
pub const MAX_COOLING: Duration = Duration::from_secs(600);

/// How long a 429 without `Retry-After` cools a provider.
pub const RATE_LIMIT_COOLING: Duration = Duration::from_secs(30);

/// What the breaker says of one provider, for `status` and `doctor`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProviderHealth {
    /// The provider.
    pub provider: String,
    /// `closed` (in use), `open` (left alone) or `probing` (one request is trying it).
    pub state: String,
    /// Seconds until it is tried again, when open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_in_secs: Option<u64>,
    /// Why it was opened, when it is not closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// Whether a request may use a provider now.
#[derive(Debug, PartialEq)]
pub enum Admit {
    /// Yes.
    Go,
    /// Yes, as the one probe after a cooling period.
    Probe,
    /// No, and why (for the error that lists every provider).
    Skip(String),
}

#[derive(Clone, Debug)]
enum State {
    Open {
        until: Instant,
        why: String,
        /// The period it was opened for (a failed probe doubles it).
        cooling: Duration,
    },
    Probing {
        since: Instant,
        why: String,
        cooling: Duration,
    },
}

/// The breakers of a cascade's providers, by name. Closed is the absence of an entry.
#[derive(Debug, Default)]
pub struct Breakers {
    states: Mutex<BTreeMap<String, State>>,
}

impl Breakers {
    /// May a request use `provider` now? `timeout` is the provider's own: a probe that has not
    /// reported back within twice that is taken as lost, and another request may probe.
    pub fn admit(&self, provider: &str, timeout: Duration) -> Admit {
        let now = Instant::now();
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        let Some(state) = states.get(provider).cloned() else {
            return Admit::Go;
        };
        // The period is over, or the last probe is taken as lost: this request probes.
        let (why, cooling) = match state {
            State::Open {
                until,
                why,
                cooling,
            } if until <= now => (why, cooling),
            State::Probing {
                since,
                why,
                cooling,
            } if now.duration_since(since) > timeout.saturating_mul(2) => (why, cooling),
            State::Open { until, why, .. } => {
                return Admit::Skip(format!(
                    "left alone for {} s more after: {why}",
                    until.saturating_duration_since(now).as_secs().max(1)
                ));
            }
            State::Probing { .. } => return Admit::Skip("another request is probing it".into()),
        };
        states.insert(
            provider.to_owned(),
            State::Probing {
                since: now,
                why,
                cooling,
            },
        );
        Admit::Probe
    }

    /// `provider` answered: its breaker closes.
    pub fn succeeded(&self, provider: &str) {
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        if states.remove(provider).is_some() {
            tracing::info!("provider {provider} answers again");
        }
    }

    /// `provider` failed with `error` after `took` of its `timeout`. Timeouts, connection
    /// failures, cut-off answers, and server errors (5xx), malformed answers and stream errors
    /// that came after half the timeout or more open its breaker (for twice as long as before
    /// when this was the probe; requests already in flight when it opened do not lengthen it);
    /// a 429 opens it for as long as it asked. Any other failure (a 4xx, a quick server error)
    /// is the answer of a provider that is up: it closes a probing breaker and leaves a closed
    /// one.
    pub fn failed(&self, provider: &str, error: &CallError, took: Duration, timeout: Duration) {
        let now = Instant::now();
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        let before = states.get(provider).cloned();
        // A stream that broke off counts as what broke it; it was answering, so not slowly.
        let (error, answering) = match error {
            CallError::Cut { cause, .. } => (&**cause, true),
            other => (other, false),
        };
        // A provider that is down but answers at the end of its timeout costs as much as one
        // that never answers. A 4xx judges the request, not the provider, however long it took.
        let slow = !answering
            && took >= timeout / 2
            && match error {
                CallError::Status(status, _) => *status >= 500,
                CallError::Malformed(_) | CallError::Stream(_) => true,
                _ => false,
            };
        let why = if slow {
            // Not the answer's text: it may quote the call of the client that made it, and the
            // reason is shown to every client whose call skips the provider.
            let what = match error {
                CallError::Status(status, _) => format!("HTTP {status}"),
                CallError::Malformed(_) => "a malformed answer".to_owned(),
                _ => "an error in its stream".to_owned(),
            };
            format!(
                "{what} (slowly: after {:.1} s of its {} s timeout)",
                took.as_secs_f64(),
                timeout.as_secs_f64()
            )
        } else {
            error.to_string()
        };
        let down = slow
            || matches!(
                error,
                CallError::Timeout(_) | CallError::Connect(_) | CallError::Truncated(_)
            );
        let cooling = match error {
            _ if down => match before {
                Some(State::Probing { cooling, .. }) => (cooling * 2).min(MAX_COOLING),
                // Already open: another request that was in flight failed too.
                Some(State::Open { .. }) => return,
                None => COOLING,
            },
            CallError::RateLimited { retry_after } => retry_after
                .unwrap_or(RATE_LIMIT_COOLING)
                .min(super::http::MAX_RETRY_AFTER),
            CallError::Timeout(_)
            | CallError::Connect(_)
            | CallError::Truncated(_)
            | CallError::Status(..)
            | CallError::Malformed(_)
            | CallError::Stream(_)
            | CallError::Redirect { .. }
            | CallError::Cut { .. } => {
                states.remove(provider);
                return;
            }
        };
        let until = now.checked_add(cooling).unwrap_or(now);
        tracing::info!(
            "provider {provider}: left alone for {} s after: {why}",
            cooling.as_secs()
        );
        states.insert(
            provider.to_owned(),
            State::Open {
                until,
                why,
                cooling,
            },
        );
    }

    /// Each of `providers`' state (by name, kept under a key), in their order.
    pub fn health(
        &self,
        providers: impl IntoIterator<Item = (String, String)>,
    ) -> Vec<ProviderHealth> {
        let now = Instant::now();
        let states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        providers
            .into_iter()
            .map(|(name, key)| {
                let (state, retry_in_secs, why) = match states.get(&key) {
                    None => ("closed", None, None),
                    Some(State::Open { until, why, .. }) => (
                        "open",
                        Some(until.saturating_duration_since(now).as_secs()),
                        Some(why.clone()),
                    ),
                    Some(State::Probing { why, .. }) => ("probing", None, Some(why.clone())),
                };
                ProviderHealth {
                    provider: name,
                    state: state.into(),
                    retry_in_secs,
                    why,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(5);
    const QUICK: Duration = Duration::from_millis(10);

    #[test]
    fn a_server_error_after_half_the_timeout_opens_a_client_error_never_does() {
        let b = Breakers::default();
        b.failed("a", &CallError::Status(400, "too long".into()), T, T);
        assert_eq!(b.admit("a", T), Admit::Go, "a 4xx judges the request");
        b.failed(
            "a",
            &CallError::Status(503, "alice's prompt".into()),
            T / 2,
            T,
        );
        assert!(matches!(b.admit("a", T), Admit::Skip(w)
            if w.contains("503") && w.contains("slowly") && !w.contains("alice")));
        let b = Breakers::default();
        b.failed("a", &CallError::Malformed("not JSON".into()), T * 3 / 4, T);
        assert!(matches!(b.admit("a", T), Admit::Skip(_)));
    }

    #[test]
    fn a_timeout_opens_a_success_closes_a_500_does_not_open() {
        let b = Breakers::default();
        assert_eq!(b.admit("a", T), Admit::Go);
        b.failed("a", &CallError::Status(500, "boom".into()), QUICK, T);
        assert_eq!(b.admit("a", T), Admit::Go, "a provider that answers is up");
        b.failed("a", &CallError::Timeout(T), T, T);
        assert!(matches!(b.admit("a", T), Admit::Skip(w) if w.contains("no answer within")));
        let health = b.health([("a".into(), "a".into()), ("b".into(), "b".into())]);
        assert_eq!(
            (health[0].state.as_str(), health[1].state.as_str()),
            ("open", "closed")
        );
        b.succeeded("a");
        assert_eq!(b.admit("a", T), Admit::Go);
    }

    #[test]
    fn after_the_cooling_period_one_request_probes_and_a_failed_probe_doubles_it() {
        let b = Breakers::default();
        b.failed("a", &CallError::Connect("refused".into()), QUICK, T);
        // Pretend the period is over.
        if let Some(State::Open { until, .. }) = b.states.lock().expect("lock").get_mut("a") {
            *until = Instant::now();
        }
        assert_eq!(b.admit("a", T), Admit::Probe);
        assert!(
            matches!(b.admit("a", T), Admit::Skip(w) if w.contains("probing")),
            "only one probe at a time"
        );
        b.failed("a", &CallError::Timeout(T), T, T);
        match b.states.lock().expect("lock").get("a") {
            Some(State::Open { cooling, .. }) => assert_eq!(*cooling, COOLING * 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn requests_in_flight_when_it_opened_do_not_lengthen_it() {
        let b = Breakers::default();
        for _ in 0..5 {
            b.failed("a", &CallError::Timeout(T), T, T);
        }
        match b.states.lock().expect("lock").get("a") {
            Some(State::Open { cooling, .. }) => assert_eq!(*cooling, COOLING),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_lost_probe_does_not_keep_the_provider_out_forever() {
        let b = Breakers::default();
        b.states.lock().expect("lock").insert(
            "a".into(),
            State::Probing {
                since: Instant::now() - T * 3,
                why: "x".into(),
                cooling: COOLING,
            },
        );
        assert_eq!(b.admit("a", T), Admit::Probe);
    }

    #[test]
    fn a_429_cools_for_what_it_asked_bounded() {
        let b = Breakers::default();
        b.failed(
            "a",
            &CallError::RateLimited {
                retry_after: Some(Duration::from_secs(u64::MAX)),
            },
            QUICK,
            T,
        );
        let h = &b.health([("a".into(), "a".into())])[0];
        assert_eq!(h.state, "open");
        assert!(
            h.retry_in_secs
                .is_some_and(|s| s <= super::super::http::MAX_RETRY_AFTER.as_secs())
        );
    }
}
