//! Subscriptions (`subscribe`, docs/protocol.md): what a client follows until its connection
//! closes. Gate verdicts come live from the walks ([`crate::gates::Tap`]); approvals and
//! journal records are read from the journal after each commit (and once a second, for
//! records another process wrote), so none is missed while the client keeps reading; the
//! daemon's status is sent when it changes, at most once a second. A plain request gets none
//! of this.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::ops::{Role, Status};
use super::outbox::{Class, Outbox};
use super::request::{Event, Topic};
use super::server::Server;
use crate::gates::LiveVerdict;
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
        // Pending and interrupted ones: both wait only so long.
        for p in pending.into_iter().flatten() {
            deadlines.add(p.token, 0, p.expires_at);
        }
    }
    let mut last_status = String::new();
    let mut tick = tokio::time::interval(TICK);
    loop {
        let mut look = false;
        let mut expiring = false;
        // No branch first: a flood of verdicts (a busy daemon) must not keep a follower from
        // the journal, the approvals or the status. The order a walk's verdicts and the commit
        // after it are heard in is kept below instead.
        tokio::select! {
            () = closing.cancelled() => return,
            () = outbox.aborted() => return,
            verdict = next(&mut verdicts), if traces => {
                if !hear(&sub, verdict, &send) {
                    return;
                }
            }
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
                    // Compared as this follower sees it: a change only the approver key is
                    // told of (another client's call failing, say) sends a client-key
                    // follower nothing.
                    let status = server.health_status().for_role(sub.role);
                    let key = steady(&status);
                    if key != last_status {
                        last_status = key;
                        send(&Event::Health { status: Box::new(status) }, Class::May);
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
                // The verdicts of the walks these records follow were sent before the records
                // were committed, so they are queued by now: heard first (those queued only,
                // so a flood cannot hold the records back).
                if let Some(r) = verdicts.as_mut() {
                    for _ in 0..r.len() {
                        let verdict = match r.try_recv() {
                            Ok(v) => Ok(v),
                            Err(TryRecvError::Lagged(n)) => Err(RecvError::Lagged(n)),
                            Err(TryRecvError::Closed) => Err(RecvError::Closed),
                            Err(TryRecvError::Empty) => break,
                        };
                        if !hear(&sub, verdict, &send) {
                            return;
                        }
                    }
                }
                for record in records {
                    seq = record.seq;
                    if approvals && let Some(event) = approval_event(&record) {
                        deadlines.saw(&event);
                        // Interrupted, it waits for a person again, until its new expiry.
                        if let (Event::ApprovalDecided { token, .. }, Some(at)) =
                            (&event, interrupted_until(&record))
                        {
                            deadlines.add(token.clone(), record.seq, at);
                        }
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

/// Send `sub` one verdict it may hear (or the news that some were missed); `false` once no walk
/// can send any more.
fn hear(
    sub: &Subscription,
    verdict: Result<LiveVerdict, RecvError>,
    send: &impl Fn(&Event, Class) -> bool,
) -> bool {
    match verdict {
        Ok(v) if sub.role == Role::Approver || v.client.as_deref() == Some(&sub.client) => {
            send(&Event::Gate { verdict: v }, Class::May);
        }
        Ok(_) => {}
        Err(RecvError::Lagged(missed)) => {
            // How many (others' too) is not this client's to know.
            let missed = if sub.role == Role::Approver {
                missed
            } else {
                0
            };
            send(
                &Event::Lagged {
                    topic: Topic::Traces,
                    missed,
                },
                Class::Must,
            );
        }
        Err(RecvError::Closed) => return false,
    }
    true
}

/// The next verdict of `verdicts` (never, without a receiver).
async fn next(
    verdicts: &mut Option<tokio::sync::broadcast::Receiver<LiveVerdict>>,
) -> Result<LiveVerdict, RecvError> {
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

/// When an `approval-interrupted` record says the approval expires (records from before
/// interrupted approvals expired say nothing).
fn interrupted_until(record: &Record) -> Option<f64> {
    (record.kind == "approval-interrupted")
        .then(|| record.body["expires_at"].as_f64())
        .flatten()
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::daemon::outbox::{Next, OUTGOING_BYTES, Outgoing};
    use crate::daemon::server::{Router, ServerConfig};
    use crate::journal::Journal;
    use crate::pipeline::{Agent, PipelineConfig};
    use crate::signal::{Action, GateRecord, Signal, TraceVerdict};

    fn verdict(action: &str) -> LiveVerdict {
        LiveVerdict {
            client: Some("busy".into()),
            session: None,
            action: action.into(),
            last_mile: false,
            record: GateRecord {
                gate: "shell-guard".into(),
                version: "1.0.0".into(),
                priority: 10,
                round: 1,
                verdict: TraceVerdict::Pass,
                reason: None,
                micros: 20,
                fuel: None,
            },
            rewritten: None,
        }
    }

    /// An approver following the traces and the approvals of a daemon with no plugins, on one
    /// thread (the order its tasks run in is the same each time).
    struct Follower {
        rt: tokio::runtime::Runtime,
        router: Arc<Router>,
        agent: Arc<Agent>,
        outbox: Arc<Outbox>,
        closing: tokio_util::sync::CancellationToken,
    }

    impl Follower {
        fn start() -> Follower {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let router = Arc::new(Router::default());
            let journal = Journal::in_memory().expect("journal");
            let agent = Arc::new(
                Agent::new(Vec::new(), journal, PipelineConfig::default()).expect("agent"),
            );
            let config = ServerConfig {
                keys: None,
                handshake_deadline: Duration::from_secs(5),
                read_timeout: Duration::from_secs(60),
                heartbeat: Duration::from_secs(3600),
                auto_save: Duration::from_secs(3600),
                max_frame: 1 << 20,
                reload_poll: Duration::ZERO,
            };
            let server = Server::new(agent.clone(), router.clone(), config);
            let outbox = Arc::new(Outbox::new(
                1 << 20,
                Arc::new(Outgoing::new(OUTGOING_BYTES)),
            ));
            let closing = tokio_util::sync::CancellationToken::new();
            let sub = Subscription {
                topics: vec![Topic::Traces, Topic::Approvals],
                role: Role::Approver,
                client: "follower".into(),
                id: json!(1),
            };
            rt.spawn(follow(server, sub, outbox.clone(), closing.clone()));
            Follower {
                rt,
                router,
                agent,
                outbox,
                closing,
            }
        }

        /// Ask for an approval (its journal record committed): its token.
        fn ask(&self) -> String {
            let action = Action::reply("hi");
            let signal = Signal::request(action.clone(), Default::default());
            crate::approvals::Approvals::new(self.agent.journal())
                .and_then(|a| a.suspend(&action, &signal, vec!["a test".into()], None, TICK * 60))
                .expect("suspend")
                .token
        }

        /// The frames the follower sent, up to and with the first `want` says is the last;
        /// `None` when none came within 10 s.
        async fn until(&self, mut want: impl FnMut(&Value) -> bool) -> Option<Vec<Value>> {
            let read = async {
                let mut seen = Vec::new();
                loop {
                    let Next::Frames(frames, _) = self.outbox.next().await else {
                        return seen;
                    };
                    for f in frames {
                        let f: Value = serde_json::from_slice(&f).expect("json");
                        let last = want(&f);
                        seen.push(f);
                        if last {
                            return seen;
                        }
                    }
                }
            };
            tokio::time::timeout(Duration::from_secs(10), read)
                .await
                .ok()
        }
    }

    impl Drop for Follower {
        fn drop(&mut self) {
            self.closing.cancel();
        }
    }

    /// A busy daemon's walks send verdicts faster than a follower passes them on (here: more
    /// per turn of the runtime than a task may take, so some always wait); an approval asked
    /// meanwhile still reaches the approver who follows both.
    #[test]
    fn a_flood_of_verdicts_does_not_hold_an_approval_back() {
        let f = Follower::start();
        let sender = f.router.gate_events();
        f.rt.spawn(async move {
            loop {
                for _ in 0..512 {
                    let _ = sender.send(verdict("eval (+ 1 2)"));
                }
                tokio::task::yield_now().await;
            }
        });
        let flowing = f.rt.block_on(f.until(|frame| frame["event"] == "gate"));
        assert!(flowing.is_some(), "the verdicts are heard");
        let token = f.ask();
        let heard =
            f.rt.block_on(f.until(|frame| frame["event"] == "approval-requested"));
        let heard = heard.expect("the approval was not heard within 10 s while verdicts flowed");
        let asked = heard.last().expect("heard");
        assert_eq!(asked["token"].as_str(), Some(token.as_str()), "{asked}");
    }

    /// A walk's verdicts are sent before the commit of the approval it asks for: the follower
    /// hears them first, each time, though both wait for it at once.
    #[test]
    fn the_verdicts_of_a_walk_are_heard_before_the_approval_it_asks() {
        let f = Follower::start();
        let sender = f.router.gate_events();
        f.rt.block_on(f.until(|frame| frame["event"] == "subscribed"))
            .expect("subscribed");
        for walk in 0..32 {
            let action = format!("walk {walk}");
            for _ in 0..3 {
                sender.send(verdict(&action)).expect("a follower listens");
            }
            let token = f.ask();
            let heard = f.rt.block_on(f.until(|frame| {
                frame["event"] == "approval-requested" && frame["token"] == token.as_str()
            }));
            let heard = heard.expect("the approval is heard");
            let verdicts = heard
                .iter()
                .filter(|v| v["event"] == "gate" && v["verdict"]["action"] == action.as_str())
                .count();
            assert_eq!(verdicts, 3, "walk {walk}: {heard:?}");
        }
    }
}
