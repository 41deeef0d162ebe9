//! Subscriptions (`subscribe`, docs/protocol.md): what a client follows until its connection
//! closes. Gate verdicts come live from the walks ([`crate::gates::Tap`]); approvals and
//! journal records are read from the journal after each commit (and once a second, for
//! records another process wrote), so none is missed while the client keeps reading; the
//! daemon's status is sent when it changes, at most once a second. A plain request gets none
//! of this.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::ops::{Role, Status};
use super::outbox::{Class, Outbox};
use super::request::{Event, Topic};
use super::server::Server;
use crate::journal::Record;

/// Journal records read at a time.
const BATCH: usize = 256;
/// How often the journal is looked at without a commit seen, and the status compared.
const TICK: Duration = Duration::from_secs(1);

/// One subscription: who asked and what for.
pub(super) struct Subscription {
    /// What is followed (each once).
    pub topics: Vec<Topic>,
    /// The connection's role: an approver hears every request's verdicts.
    pub role: Role,
    /// The connection, as requests' `Meta::client` names it.
    pub client: String,
    /// The subscribing request's id: every event carries it.
    pub id: Value,
}

/// Send `sub`'s events to `outbox` until `closing` is cancelled or the client is gone.
pub(super) async fn follow(
    server: Arc<Server>,
    mut sub: Subscription,
    outbox: Arc<Outbox>,
    closing: tokio_util::sync::CancellationToken,
) {
    sub.topics.sort();
    sub.topics.dedup();
    let has = |t| sub.topics.contains(&t);
    let (traces, approvals, journal, health) = (
        has(Topic::Traces),
        has(Topic::Approvals),
        has(Topic::Journal),
        has(Topic::Health),
    );
    let send = |event: &Event, class| outbox.push(&event.frame(&sub.id), class);
    send(
        &Event::Subscribed {
            topics: sub.topics.clone(),
        },
        Class::Must,
    );
    // Only a `traces` follower holds a receiver: an unread one would keep every verdict.
    let mut verdicts = traces.then(|| server.router.gate_events().subscribe());
    let mut agent = server.swap.current();
    let mut commits = agent.journal().commits();
    // From now on: what was before is listed by `approvals` and `journal show`.
    let mut seq = 0;
    if approvals || journal {
        match crate::blocking::in_place(|| agent.journal().last_seq()) {
            Ok(s) => seq = s,
            Err(e) => {
                // Never from the start of the journal: say so, and follow nothing of it.
                tracing::warn!("subscription: cannot read the journal: {e}");
                send(
                    &Event::Lagged {
                        topic: if journal {
                            Topic::Journal
                        } else {
                            Topic::Approvals
                        },
                        missed: 0,
                    },
                    Class::Must,
                );
                return;
            }
        }
    }
    // Approvals waiting, with when they expire: an approval that expires unanswered writes no
    // record, so the follower says so itself.
    let mut deadlines = Deadlines::default();
    if approvals {
        let pending = crate::blocking::in_place(|| {
            crate::approvals::Approvals::new(agent.journal()).and_then(|a| a.pending())
        });
        for p in pending.into_iter().flatten() {
            if p.state == "pending" {
                deadlines.add(p.token, 0, p.expires_at);
            }
        }
    }
    let mut last_status = String::new();
    let mut tick = tokio::time::interval(TICK);
    loop {
        let mut look = false;
        let mut expiring = false;
        tokio::select! {
            // Verdicts first: a walk's verdicts are all sent before the journal commit that
            // follows it (an approval asked), and are heard before it.
            biased;
            () = closing.cancelled() => return,
            () = outbox.aborted() => return,
            verdict = next(&mut verdicts), if traces => match verdict {
                Ok(v) if sub.role == Role::Approver || v.client.as_deref() == Some(&sub.client) => {
                    send(&Event::Gate { verdict: v }, Class::May);
                }
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => {
                    // How many (others' too) is not this client's to know.
                    let missed = if sub.role == Role::Approver { missed } else { 0 };
                    send(&Event::Lagged { topic: Topic::Traces, missed }, Class::Must);
                }
                Err(RecvError::Closed) => return,
            },
            changed = commits.changed(), if approvals || journal => {
                if changed.is_err() {
                    // This set's journal is gone (a reload): follow the new one.
                    agent = server.swap.current();
                    commits = agent.journal().commits();
                }
                look = true;
            }
            _ = tick.tick() => {
                let now = server.swap.current();
                if !Arc::ptr_eq(&now, &agent) {
                    agent = now;
                    commits = agent.journal().commits();
                }
                look = true;
                expiring = approvals;
                if health {
                    let status = server.health_status();
                    let key = steady(&status);
                    if key != last_status {
                        last_status = key;
                        send(&Event::Health { status: Box::new(status.for_role(sub.role)) }, Class::May);
                    }
                }
            }
        }
        if look && (approvals || journal) {
            loop {
                let records =
                    match crate::blocking::in_place(|| agent.journal().records_after(seq, BATCH)) {
                        Ok(r) => r,
                        Err(e) => {
                            tracing::warn!("subscription: cannot read the journal: {e}");
                            break;
                        }
                    };
                let full = records.len() == BATCH;
                for record in records {
                    seq = record.seq;
                    if approvals && let Some(event) = approval_event(&record) {
                        deadlines.saw(&event);
                        send(&event, Class::Must);
                    }
                    if journal {
                        send(&Event::Journal { record }, Class::May);
                    }
                }
                if !full {
                    break;
                }
            }
        }
        // After the records: a decision committed meanwhile is heard as itself. Told only of
        // what the database says ran out of time unanswered.
        if expiring {
            for (token, seq) in deadlines.expired(crate::approvals::epoch()) {
                let expired = crate::blocking::in_place(|| {
                    crate::approvals::Approvals::new(agent.journal())
                        .and_then(|a| a.has_expired(&token))
                });
                if expired.unwrap_or(false) {
                    let decision = "expired".to_owned();
                    send(
                        &Event::ApprovalDecided {
                            seq,
                            token,
                            decision,
                            by: None,
                        },
                        Class::Must,
                    );
                }
            }
        }
    }
}

/// Most approvals a follower watches for expiry (beyond, the newest are not watched).
const WATCHED: usize = 10_000;

/// The approvals a follower has heard of that wait, by token: the seq of their request and
/// when they expire.
#[derive(Default)]
struct Deadlines(std::collections::HashMap<String, (i64, f64)>);

impl Deadlines {
    fn add(&mut self, token: String, seq: i64, expires_at: f64) {
        if self.0.len() < WATCHED {
            self.0.insert(token, (seq, expires_at));
        }
    }

    /// Note what `event` says of an approval.
    fn saw(&mut self, event: &Event) {
        match event {
            Event::ApprovalRequested {
                token,
                seq,
                expires_at: Some(at),
                ..
            } => self.add(token.clone(), *seq, *at),
            Event::ApprovalDecided { token, .. } => {
                self.0.remove(token);
            }
            _ => {}
        }
    }

    /// The approvals expired by `now` (forgotten once told).
    fn expired(&mut self, now: f64) -> Vec<(String, i64)> {
        let gone: Vec<(String, i64)> = self
            .0
            .iter()
            .filter(|(_, (_, at))| *at < now)
            .map(|(t, (seq, _))| (t.clone(), *seq))
            .collect();
        for (t, _) in &gone {
            self.0.remove(t);
        }
        gone
    }
}

/// The next verdict of `verdicts` (never, without a receiver).
async fn next(
    verdicts: &mut Option<tokio::sync::broadcast::Receiver<crate::gates::LiveVerdict>>,
) -> Result<crate::gates::LiveVerdict, RecvError> {
    match verdicts {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

/// The status without what changes every second by itself (uptime, bytes queued): what a
/// follower is told again when it changes.
fn steady(status: &Status) -> String {
    let mut s = status.clone();
    s.uptime_secs = 0;
    s.outgoing_bytes = 0;
    s.handshaking = 0;
    s.connection_tasks = 0;
    serde_json::to_string(&s).unwrap_or_default()
}

/// The approval event a journal record is, if it is one.
fn approval_event(record: &Record) -> Option<Event> {
    let b = &record.body;
    let token = b["token"].as_str()?.to_owned();
    match record.kind.as_str() {
        "approval-requested" => Some(Event::ApprovalRequested {
            seq: record.seq,
            token,
            action: serde_json::from_value(b["action"].clone()).ok()?,
            digest: b["digest"].as_str().unwrap_or_default().to_owned(),
            reasons: serde_json::from_value(b["reasons"].clone()).unwrap_or_default(),
            expires_at: b["expires_at"].as_f64(),
        }),
        "approval" => Some(Event::ApprovalDecided {
            seq: record.seq,
            token,
            decision: b["decision"].as_str().unwrap_or("decided").to_owned(),
            by: b["by"].as_str().map(str::to_owned),
        }),
        "approval-interrupted" => Some(Event::ApprovalDecided {
            seq: record.seq,
            token,
            decision: "interrupted".into(),
            by: None,
        }),
        _ => None,
    }
}
