//! The daemon's server: accept clients, give each a bounded handshake, run each request on
//! the pipeline (blocking work, off the async threads), and route replies and events to the
//! client that asked. Connections are in `connection.rs`, requests in `ops.rs`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use super::keys::Keys;
use super::lobby::Lobby;
use super::outbox::{Class, Outbox};
use super::reload::{Reload, ReloadError, Reloaded, Swap};
use crate::pipeline::Agent;
use crate::pipeline::actuators::{ActError, Actuator};
use crate::signal::{Action, Signal};

/// Settings of a running daemon.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The keys clients must prove; `None` turns authentication off (`--insecure-no-auth`:
    /// every local process may do everything, approvals included).
    pub keys: Option<Keys>,
    /// How long a new connection has for its whole handshake.
    pub handshake_deadline: Duration,
    /// Close a client silent for this long.
    pub read_timeout: Duration,
    /// Inject a heartbeat signal this often.
    pub heartbeat: Duration,
    /// Save memory this often (MEMORY_AUTO_SAVE_INTERVAL): re-ingest `[memory] paths` and
    /// checkpoint the database. Also done once at shutdown.
    pub auto_save: Duration,
    /// The largest frame accepted after the handshake, and sent (a larger reply becomes an
    /// error reply for its request).
    pub max_frame: usize,
    /// How often to look at the plugin directory, policy and pins for changes (reloading
    /// when they change); zero never looks.
    pub reload_poll: Duration,
}

/// Auto-save: re-ingest the configured Org paths (unchanged files change nothing) and
/// checkpoint the database, so that what is in memory is on disk.
pub fn save_memory(pipeline: &Agent) {
    let Some(memory) = pipeline.memory() else {
        return;
    };
    for path in &memory.config().paths {
        match memory.ingest(path, &crate::memory::IngestOptions::default()) {
            Ok(r) => {
                for w in &r.warnings {
                    tracing::warn!("memory auto-save: {w}");
                }
                for f in &r.removed_files {
                    tracing::warn!(
                        "memory auto-save: {f} is gone from disk, so it left the store (a \
                         `passepartout memory rollback` shows its headlines again only until the \
                         next auto-save; write the file back to keep it)"
                    );
                }
                if r.root_after != r.root_before
                    && let Err(e) = memory.collect_garbage()
                {
                    tracing::warn!("memory garbage collection: {e}");
                }
            }
            Err(e) => tracing::warn!("memory auto-save of {}: {e}", path.display()),
        }
    }
    match memory.checkpoint() {
        Ok(()) => tracing::info!(root = %memory.root(), "memory saved"),
        Err(e) => tracing::error!("memory auto-save failed: {e}"),
    }
}

/// Routes what the pipeline sends to a client (`target = "client"`) to the connection and
/// request it belongs to, found in the signal's `meta.session` (`boot:conn:request`). The boot
/// id is random per daemon start: an approval suspended before a restart must not reach a new
/// client that happens to get the same connection number.
pub struct Router {
    boot: String,
    clients: Mutex<HashMap<u64, Arc<Outbox>>>,
    /// Every gate verdict as the walks make it, for `traces` subscriptions.
    gate_events: tokio::sync::broadcast::Sender<crate::gates::LiveVerdict>,
}

impl Default for Router {
    fn default() -> Router {
        let mut bytes = [0u8; 8];
        let _ = getrandom::fill(&mut bytes);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Router {
            boot: format!("{}{nanos:x}", hex::encode(bytes)),
            clients: Mutex::new(HashMap::new()),
            gate_events: tokio::sync::broadcast::Sender::new(GATE_EVENTS),
        }
    }
}

/// Gate verdicts kept for a `traces` follower that reads slowly (beyond, it is told it lagged).
const GATE_EVENTS: usize = 4096;

impl Router {
    /// Where the agents' walks send each verdict ([`Agent::with_gate_events`]).
    pub fn gate_events(&self) -> tokio::sync::broadcast::Sender<crate::gates::LiveVerdict> {
        self.gate_events.clone()
    }

    fn clients(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Outbox>>> {
        self.clients.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, conn: u64, message: &Value) {
        let outbox = self.clients().get(&conn).cloned();
        if let Some(o) = outbox {
            o.push(message, Class::Must);
        }
    }

    pub(super) fn add(&self, conn: u64, outbox: Arc<Outbox>) {
        self.clients().insert(conn, outbox);
    }

    pub(super) fn remove(&self, conn: u64) {
        self.clients().remove(&conn);
    }

    /// This daemon start's random id (the first part of every session).
    pub(super) fn boot(&self) -> &str {
        &self.boot
    }

    /// The connection and request id a session (`boot:conn:request`) of this daemon start
    /// names; `None` for another start's or none.
    fn route(&self, session: Option<&str>) -> Option<(u64, Value)> {
        let mut parts = session?.splitn(3, ':');
        let (boot, conn, id) = (parts.next()?, parts.next()?, parts.next()?);
        // The request id is kept as the client sent it (JSON: a string or a number).
        (boot == self.boot)
            .then(|| Some((conn.parse().ok()?, serde_json::from_str(id).ok()?)))
            .flatten()
    }

    /// Where the agents send a streamed answer's progress ([`Agent::with_progress`]): as a
    /// `model` event under the request it answers, which a busy client may miss (the reply
    /// never is).
    pub fn progress(self: &Arc<Router>) -> crate::pipeline::ProgressSink {
        let me = Arc::downgrade(self);
        Arc::new(move |meta, progress| {
            let Some(me) = me.upgrade() else { return };
            if let Some((conn, id)) = me.route(meta.session.as_deref()) {
                let event = super::request::Event::Model {
                    progress: progress.clone(),
                };
                let outbox = me.clients().get(&conn).cloned();
                if let Some(o) = outbox {
                    o.push(&event.frame(&id), Class::May);
                }
            }
        })
    }
}

/// The actuator a pipeline uses for clients of this daemon.
pub struct RouterActuator(pub Arc<Router>);

#[async_trait::async_trait]
impl Actuator for RouterActuator {
    async fn act(&self, action: &Action, signal: &Signal) -> Result<String, ActError> {
        Ok(self.send(action, signal, None))
    }

    async fn tell(
        &self,
        action: &Action,
        signal: &Signal,
        told: crate::signal::Told,
    ) -> Result<String, ActError> {
        Ok(self.send(action, signal, Some(told)))
    }
}

impl RouterActuator {
    /// Send `action`'s text to the client whose request `signal` answers, under that request's
    /// id, with what it is about (`told`: only what the pipeline tells, never a proposal's).
    fn send(&self, action: &Action, signal: &Signal, told: Option<crate::signal::Told>) -> String {
        let text = action
            .text
            .clone()
            .unwrap_or_else(|| Value::Object(action.args.clone()).to_string());
        if let Some((conn, id)) = self.0.route(signal.meta.session.as_deref()) {
            let event = super::request::Event::Message {
                text: text.clone(),
                told,
            };
            self.0.send(conn, &event.frame(&id));
        }
        text
    }
}

/// Most clients connected at once; more are told so and closed.
pub const MAX_CONNECTIONS: usize = 256;
/// Of those, the places only a client with the approver key takes: clients with the client
/// key alone (the agent's own tools, MCP clients) cannot fill the daemon so that the operator
/// cannot connect to follow, approve or deny what they do.
pub const APPROVER_PLACES: usize = 16;
/// Most requests of one client running at once.
pub const MAX_IN_FLIGHT: usize = 16;

/// Most connections in their handshake at once. Past it, a new connection evicts a random one
/// of those that have been at it for [`EVICTABLE_AFTER`] (an honest handshake takes a fraction
/// of a millisecond), or, when none has, a random one of them all ([`super::lobby`]):
/// connections that never authenticate cannot keep anyone out, however fast they come. A flood of N new connections a
/// second evicts a given handshake of t seconds with a chance of about N·t / 256 (a 1 ms
/// handshake under 10,000 connections a second: 4%), and the client tries again when it is.
pub const MAX_HANDSHAKES: usize = 256;
pub use super::lobby::EVICTABLE_AFTER;
/// Bytes of large frames the daemon reads at once, from all clients with the client key alone
/// together (and, as much again, from all approver-key clients together: the operator's
/// requests are never kept out by others').
pub const READ_BUDGET: usize = 64 << 20;

/// How long a request received while the daemon loads its plugins at start waits for them.
pub(super) const BOOT_PATIENCE: Duration = Duration::from_secs(60);

/// A running daemon's shared state.
pub struct Server {
    /// One permit per authenticated client, of any role ([`MAX_CONNECTIONS`] less
    /// [`APPROVER_PLACES`]).
    pub(super) connections: Arc<Semaphore>,
    /// One permit per approver-key client once `connections` has none ([`APPROVER_PLACES`]).
    pub(super) approver_places: Arc<Semaphore>,
    /// Connections in their handshake ([`MAX_HANDSHAKES`]), each with what evicts it.
    pub(super) handshakes: Lobby,
    /// [`READ_BUDGET`], in bytes, for clients with the client key alone (and every client
    /// with authentication off).
    pub(super) reading: Arc<Semaphore>,
    /// [`READ_BUDGET`] again, for approver-key clients: clients with the client key alone
    /// cannot fill it so that the operator's larger requests are refused as busy.
    pub(super) approver_reading: Arc<Semaphore>,
    /// What the outboxes of clients with the client key alone hold together
    /// ([`super::outbox::OUTGOING_BYTES`]).
    pub(super) outgoing: Arc<super::outbox::Outgoing>,
    /// What approver-key clients' outboxes hold together
    /// ([`super::outbox::APPROVER_OUTGOING_BYTES`]).
    pub(super) approver_outgoing: Arc<super::outbox::Outgoing>,
    /// Connection tasks the daemon still holds (running or finished and not yet reaped), as
    /// of the accept loop's last turn: `status` shows it, so that a leak shows.
    pub(super) tasks_held: AtomicUsize,
    pub(super) swap: Arc<Swap>,
    pub(super) router: Arc<Router>,
    pub(super) config: ServerConfig,
    next_conn: AtomicU64,
    pub(super) started: Instant,
    /// The last status sent to `health` followers, and when it was made.
    pub(super) health: std::sync::Mutex<super::connection::HealthCache>,
    /// Set when the daemon stops: idle clients are closed at once.
    pub(super) stopping: watch::Sender<bool>,
}

impl Server {
    /// A server for `pipeline`, whose `client` actuator must be a [`RouterActuator`] over
    /// `router`.
    pub fn new(pipeline: Arc<Agent>, router: Arc<Router>, config: ServerConfig) -> Arc<Server> {
        Server::with_swap(Swap::new(pipeline, None), router, config)
    }

    /// As [`Server::new`], reloading its plugin set through `reload` on a `reload` request, on
    /// [`Server::reload`] (SIGHUP) and when the files it comes from change.
    pub fn reloadable(
        pipeline: Arc<Agent>,
        reload: Box<dyn Reload>,
        router: Arc<Router>,
        config: ServerConfig,
    ) -> Arc<Server> {
        Server::with_swap(Swap::new(pipeline, Some(reload)), router, config)
    }

    /// As [`Server::reloadable`], listening before the plugin set is loaded: `placeholder`
    /// serves until [`Server::reload`] loads the set; requests meanwhile wait for it (up to a
    /// minute), then run on it.
    pub fn loading(
        placeholder: Arc<Agent>,
        reload: Box<dyn Reload>,
        router: Arc<Router>,
        config: ServerConfig,
    ) -> Arc<Server> {
        Server::with_swap(Swap::loading(placeholder, reload), router, config)
    }

    fn with_swap(swap: Swap, router: Arc<Router>, config: ServerConfig) -> Arc<Server> {
        Arc::new(Server {
            connections: Arc::new(Semaphore::new(MAX_CONNECTIONS - APPROVER_PLACES)),
            approver_places: Arc::new(Semaphore::new(APPROVER_PLACES)),
            handshakes: Lobby::new(MAX_HANDSHAKES),
            reading: Arc::new(Semaphore::new(READ_BUDGET)),
            approver_reading: Arc::new(Semaphore::new(READ_BUDGET)),
            outgoing: Arc::new(super::outbox::Outgoing::new(super::outbox::OUTGOING_BYTES)),
            approver_outgoing: Arc::new(super::outbox::Outgoing::new(
                super::outbox::APPROVER_OUTGOING_BYTES,
            )),
            tasks_held: AtomicUsize::new(0),
            stopping: watch::Sender::new(false),
            swap: Arc::new(swap),
            router,
            config,
            next_conn: AtomicU64::new(1),
            started: Instant::now(),
            health: std::sync::Mutex::default(),
        })
    }

    /// The pipeline requests start on now.
    pub fn current(&self) -> Arc<Agent> {
        self.swap.current()
    }

    /// Reload the plugin set (SIGHUP, a changed file): off the async threads.
    ///
    /// # Errors
    /// As [`Swap::reload_off_thread`], or [`ReloadError::Crashed`] when the reload's thread gave no
    /// answer; the running set stays.
    pub async fn reload(&self, why: &'static str) -> Result<Reloaded, ReloadError> {
        self.swap.reload_off_thread(why, true).await
    }

    /// Watch the files the plugin set comes from and reload when they change.
    async fn watch(self: Arc<Self>, every: Duration) {
        let Some(mut seen) = self.swap.fingerprint() else {
            return;
        };
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let swap = self.swap.clone();
            let Ok(Some(now)) = tokio::task::spawn_blocking(move || swap.fingerprint()).await
            else {
                continue;
            };
            if now != seen {
                seen = now;
                // A failure is logged and shown by `status`; the old set keeps serving.
                let _ = self.reload("files changed").await;
            }
        }
    }

    /// Serve `listener` until `shutdown` resolves; then stop accepting, let in-flight requests
    /// finish (up to 10 s), and return.
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl std::future::Future<Output = ()>,
    ) {
        let mut tasks = tokio::task::JoinSet::new();
        let heartbeat = {
            let me = self.clone();
            let mut stopping = self.stopping.subscribe();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(me.config.heartbeat);
                tick.tick().await;
                let mut beat: u64 = 0;
                loop {
                    // Stopping ends the loop between turns, never inside one (a turn may be
                    // running a tool): the daemon waits for the turn under way.
                    tokio::select! {
                        _ = tick.tick() => {}
                        _ = stopping.wait_for(|stop| *stop) => break,
                    }
                    beat += 1;
                    let p = me.swap.current();
                    // Each heartbeat is a session of its own for the token budget (as one
                    // `send` is); the day's budget bounds them all together.
                    let mut signal = Signal::event("heartbeat", None, Some("daemon"));
                    signal.meta.client = Some(format!("{}:heartbeat:{beat}", me.router.boot()));
                    // A task of its own: a turn that panics does not end the heartbeats.
                    let _ = tokio::spawn(async move { p.run(signal).await }).await;
                }
            })
        };
        let saver = {
            let me = self.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(me.config.auto_save);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let p = me.swap.current();
                    let _ = tokio::task::spawn_blocking(move || save_memory(&p)).await;
                }
            })
        };
        let watcher = (!self.config.reload_poll.is_zero())
            .then(|| tokio::spawn(self.clone().watch(self.config.reload_poll)));
        tokio::pin!(shutdown);
        let mut accept_failures = AcceptFailures::default();
        loop {
            self.tasks_held.store(tasks.len(), Ordering::Relaxed);
            tokio::select! {
                _ = &mut shutdown => break,
                // Finished connection tasks are reaped as they end, not kept until shutdown.
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
                        let evict = self.handshakes.enter(conn);
                        tasks.spawn(self.clone().connection(stream, peer, conn, evict));
                    }
                    Err(e) => {
                        // Out of descriptors (EMFILE), a connection reset before it was
                        // accepted: the next may work, but not at once. Without a pause the
                        // loop would spin on the error and fill the log.
                        let _logged = accept_failures.failed(&e);
                        tokio::time::sleep(ACCEPT_PAUSE).await;
                    }
                },
            }
        }
        if let Some(w) = watcher {
            w.abort();
        }
        drop(listener);
        // Idle clients are closed at once; requests in flight finish first.
        self.stopping.send_replace(true);
        tracing::info!(
            "stopping: no new requests; waiting for {} connection(s)",
            tasks.len()
        );
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            while tasks.join_next().await.is_some() {}
            let _ = heartbeat.await;
        })
        .await;
        saver.abort();
        // Stopped while the plugins were still loading at start: the last save needs the set.
        let last = self.swap.current_when_ready(BOOT_PATIENCE).await;
        let _ = tokio::task::spawn_blocking(move || save_memory(&last)).await;
    }
}

/// How long the accept loop waits after a failed accept.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);
/// At most one log line about failed accepts this often.
const ACCEPT_LOG_EVERY: Duration = Duration::from_secs(10);

/// Failed accepts, logged at most once per [`ACCEPT_LOG_EVERY`] with how many there were.
#[derive(Default)]
struct AcceptFailures {
    /// When the last line was logged.
    said: Option<Instant>,
    /// Failures since then.
    unsaid: u64,
}

impl AcceptFailures {
    /// Note one; log it when the last line is old enough. Whether it was logged.
    fn failed(&mut self, e: &std::io::Error) -> bool {
        self.unsaid += 1;
        let say = self.said.is_none_or(|at| at.elapsed() >= ACCEPT_LOG_EVERY);
        if say {
            tracing::warn!(
                "accept failed ({} time(s) since the last such line): {e}",
                self.unsaid
            );
            self.said = Some(Instant::now());
            self.unsaid = 0;
        }
        say
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::outbox::{Next, OUTGOING_BYTES, Outgoing};
    use crate::signal::Told;

    /// What `RouterActuator` sends the client of request 7 on connection 1, for `send`.
    fn sent(send: impl AsyncFnOnce(&RouterActuator, &Action, &Signal)) -> Vec<Value> {
        let router = Arc::new(Router::default());
        let outbox = Arc::new(Outbox::new(
            1 << 20,
            Arc::new(Outgoing::new(OUTGOING_BYTES)),
        ));
        router.add(1, outbox.clone());
        let mut signal = Signal::event("user-input", Some("hi"), Some("client"));
        signal.meta.session = Some(format!("{}:1:7", router.boot()));
        // A reply whose arguments claim what the line is about, as a model could write it.
        let mut action = Action::reply("it ran, honest");
        action.args.insert("told".into(), serde_json::json!("ran"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("rt");
        rt.block_on(send(&RouterActuator(router), &action, &signal));
        outbox.finish();
        let mut frames = Vec::new();
        while let Next::Frames(f, _) = rt.block_on(outbox.next()) {
            frames.extend(f.iter().map(|b| serde_json::from_slice(b).expect("json")));
        }
        frames
    }

    /// A failed accept (out of descriptors) is said once, then not again for a while
    /// however often it fails: the loop cannot fill the log.
    #[test]
    fn failed_accepts_are_logged_at_most_once_in_a_while() {
        let mut failures = AcceptFailures::default();
        let e = std::io::Error::from_raw_os_error(libc::EMFILE);
        assert!(failures.failed(&e), "the first is said");
        let said = (0..10_000).filter(|_| failures.failed(&e)).count();
        assert_eq!(said, 0, "then none for {ACCEPT_LOG_EVERY:?}");
        assert_eq!(failures.unsaid, 10_000, "counted for the next line");
    }

    #[test]
    fn only_the_pipeline_says_what_a_line_is_about() {
        // Through `act` (where a model's reply goes), its arguments cannot set `told`.
        let acted = sent(async |a, action, signal| {
            a.act(action, signal).await.expect("sent");
        });
        assert_eq!(acted.len(), 1, "{acted:?}");
        assert_eq!(acted[0]["id"], 7);
        assert!(acted[0].get("told").is_none(), "{acted:?}");
        // Through `tell`, the pipeline's own word.
        let told = sent(async |a, action, signal| {
            a.tell(action, signal, Told::Denied).await.expect("sent");
        });
        assert_eq!(told[0]["told"], "denied", "{told:?}");
    }
}
