//! The daemon's server: accept clients, speak the framed protocol, run each request on the
//! pipeline (blocking work, off the async threads), and route replies and events to the client
//! that asked.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::protocol::{self, LEN_DIGITS, MAC_DIGITS, ProtocolError, Signer};
use super::reload::{Reload, Reloaded, Swap};
use crate::pipeline::actuators::{ActError, Actuator};
use crate::pipeline::{Pipeline, Report};
use crate::signal::{Action, Meta, Signal};

/// Settings of a running daemon.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Sign and verify frames.
    pub signer: Option<Signer>,
    /// Close a client silent for this long.
    pub read_timeout: Duration,
    /// Inject a heartbeat signal this often.
    pub heartbeat: Duration,
    /// Save memory this often (MEMORY_AUTO_SAVE_INTERVAL): re-ingest `[memory] paths` and
    /// checkpoint the database. Also done once at shutdown.
    pub auto_save: Duration,
    /// The largest frame accepted.
    pub max_frame: usize,
    /// How often to look at the plugin directory, policy and pins for changes (reloading
    /// when they change); zero never looks.
    pub reload_poll: Duration,
}

/// Auto-save: re-ingest the configured Org paths (unchanged files change nothing) and
/// checkpoint the database, so that what is in memory is on disk.
pub fn save_memory(pipeline: &Pipeline) {
    let Some(memory) = pipeline.memory() else {
        return;
    };
    for path in &memory.config().paths {
        match memory.ingest(path, &crate::memory::IngestOptions::default()) {
            Ok(r) => {
                for w in &r.warnings {
                    tracing::warn!("memory auto-save: {w}");
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
    clients: Mutex<HashMap<u64, mpsc::UnboundedSender<Value>>>,
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
        }
    }
}

impl Router {
    fn send(&self, conn: u64, message: Value) {
        if let Some(tx) = self
            .clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&conn)
        {
            let _ = tx.send(message);
        }
    }
}

/// The actuator a pipeline uses for clients of this daemon.
pub struct RouterActuator(pub Arc<Router>);

impl Actuator for RouterActuator {
    fn act(&self, action: &Action, signal: &Signal) -> Result<String, ActError> {
        let text = action
            .text
            .clone()
            .unwrap_or_else(|| Value::Object(action.args.clone()).to_string());
        let mut parts = signal
            .meta
            .session
            .as_deref()
            .unwrap_or_default()
            .splitn(3, ':');
        if let (Some(boot), Some(conn), Some(id)) = (parts.next(), parts.next(), parts.next())
            && boot == self.0.boot
            && let Ok(conn) = conn.parse()
        {
            self.0.send(
                conn,
                json!({ "type": "event", "id": id, "event": "message", "text": text }),
            );
        }
        Ok(text)
    }
}

/// Most clients connected at once; more are told so and closed.
pub const MAX_CONNECTIONS: usize = 256;
/// Most requests of one client running at once.
pub const MAX_IN_FLIGHT: usize = 16;

/// Tell a client over [`MAX_CONNECTIONS`] why it is refused, and close.
async fn refuse(mut stream: TcpStream, signer: Option<Signer>) {
    let message = json!({ "type": "error", "error": { "kind": "protocol", "message": format!("the daemon already serves {MAX_CONNECTIONS} clients; try again later") } });
    let bytes = serde_json::to_vec(&message).unwrap_or_default();
    if let Ok(frame) = protocol::encode(&bytes, signer.as_ref()) {
        let _ = stream.write_all(&frame).await;
    }
    let _ = stream.shutdown().await;
}

/// How long a request received while the daemon loads its plugins at start waits for them.
const BOOT_PATIENCE: Duration = Duration::from_secs(60);

/// A running daemon's shared state.
pub struct Server {
    connections: Arc<tokio::sync::Semaphore>,
    /// Connection tasks the daemon still holds (running or finished and not yet reaped), as
    /// of the accept loop's last turn: `status` shows it, so that a leak shows.
    tasks_held: Arc<std::sync::atomic::AtomicUsize>,
    swap: Arc<Swap>,
    router: Arc<Router>,
    config: ServerConfig,
    next_conn: AtomicU64,
    started: Instant,
}

impl Server {
    /// A server for `pipeline`, whose `client` actuator must be a [`RouterActuator`] over
    /// `router`.
    pub fn new(pipeline: Arc<Pipeline>, router: Arc<Router>, config: ServerConfig) -> Arc<Server> {
        Server::with_swap(Swap::new(pipeline, None), router, config)
    }

    /// As [`Server::new`], reloading its plugin set through `reload` on a `reload` request, on
    /// [`Server::reload`] (SIGHUP) and when the files it comes from change.
    pub fn reloadable(
        pipeline: Arc<Pipeline>,
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
        placeholder: Arc<Pipeline>,
        reload: Box<dyn Reload>,
        router: Arc<Router>,
        config: ServerConfig,
    ) -> Arc<Server> {
        Server::with_swap(Swap::loading(placeholder, reload), router, config)
    }

    fn with_swap(swap: Swap, router: Arc<Router>, config: ServerConfig) -> Arc<Server> {
        Arc::new(Server {
            connections: Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS)),
            tasks_held: Arc::default(),
            swap: Arc::new(swap),
            router,
            config,
            next_conn: AtomicU64::new(1),
            started: Instant::now(),
        })
    }

    /// The pipeline requests start on now.
    pub fn current(&self) -> Arc<Pipeline> {
        self.swap.current()
    }

    /// Reload the plugin set (SIGHUP, a changed file): off the async threads.
    ///
    /// # Errors
    /// Why the new set did not load; the running one stays.
    pub async fn reload(&self, why: &'static str) -> Result<Reloaded, String> {
        let swap = self.swap.clone();
        tokio::task::spawn_blocking(move || swap.reload(why))
            .await
            .unwrap_or_else(|e| Err(format!("the reload failed inside the daemon: {e}")))
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
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(me.config.heartbeat);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    let p = me.swap.current();
                    let _ = tokio::task::spawn_blocking(move || {
                        p.run(Signal::event("heartbeat", None, Some("daemon")))
                    })
                    .await;
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
        loop {
            self.tasks_held
                .store(tasks.len(), std::sync::atomic::Ordering::Relaxed);
            tokio::select! {
                _ = &mut shutdown => break,
                // Finished connection tasks are reaped as they end, not kept until shutdown.
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => {
                        let Ok(permit) = self.connections.clone().try_acquire_owned() else {
                            tracing::warn!("refusing {peer}: {MAX_CONNECTIONS} clients are connected");
                            tasks.spawn(refuse(stream, self.config.signer.clone()));
                            continue;
                        };
                        let me = self.clone();
                        tasks.spawn(async move {
                            me.connection(stream, peer).await;
                            drop(permit);
                        });
                    }
                    Err(e) => tracing::warn!("accept failed: {e}"),
                },
            }
        }
        heartbeat.abort();
        if let Some(w) = watcher {
            w.abort();
        }
        drop(listener);
        tracing::info!(
            "stopping: no new requests; waiting for {} connection(s)",
            tasks.len()
        );
        let _ = tokio::time::timeout(Duration::from_secs(10), async {
            while tasks.join_next().await.is_some() {}
        })
        .await;
        saver.abort();
        // Stopped while the plugins were still loading at start: the last save needs the set.
        let swap = self.swap.clone();
        let _ = tokio::task::spawn_blocking(move || {
            save_memory(&swap.current_when_ready(BOOT_PATIENCE));
        })
        .await;
    }

    async fn connection(self: Arc<Self>, stream: TcpStream, peer: SocketAddr) {
        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
        // Replies are small frames written one by one: without this, Nagle's algorithm and
        // delayed ACKs add ~40 ms to each round trip.
        let _ = stream.set_nodelay(true);
        let (mut reader, mut writer) = stream.into_split();
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let signer = self.config.signer.clone();
        let writer_task = tokio::spawn(async move {
            while let Some(message) = rx.recv().await {
                let bytes = serde_json::to_vec(&message).unwrap_or_default();
                let Ok(frame) = protocol::encode(&bytes, signer.as_ref()) else {
                    continue;
                };
                if writer.write_all(&frame).await.is_err() {
                    break;
                }
                if message.get("close").is_some() {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        self.router
            .clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(conn, tx.clone());
        let result = self.conversation(conn, &mut reader, &tx).await;
        if let Err(e) = result {
            tracing::info!("client {peer} (#{conn}): {e}");
            let _ = tx.send(json!({ "type": "error", "error": { "kind": "protocol", "message": e.to_string() }, "close": true }));
        }
        self.router
            .clients
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&conn);
        drop(tx);
        let _ = writer_task.await;
    }

    /// Read frames until the client leaves or breaks the protocol.
    async fn conversation(
        self: &Arc<Self>,
        conn: u64,
        reader: &mut tokio::net::tcp::OwnedReadHalf,
        tx: &mpsc::UnboundedSender<Value>,
    ) -> Result<(), ProtocolError> {
        let started = Instant::now();
        let Some(hello) = self.read_frame(reader, || Some(started)).await? else {
            return Ok(());
        };
        if hello["type"] != "hello" {
            return Err(ProtocolError::BadMessage(
                "the first message must be a hello".into(),
            ));
        }
        let _ = tx.send(json!({
            "type": "hello",
            "version": protocol::VERSION,
            "server": concat!("passepartout ", env!("CARGO_PKG_VERSION")),
            "capabilities": ["act", "ask", "approve", "deny", "approvals", "status", "reload", "ping", "events"],
            "hmac": self.config.signer.is_some(),
        }));
        let mut in_flight = tokio::task::JoinSet::new();
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
        // When this client last had a reply sent (its silence is counted from then).
        let answered = Arc::new(Mutex::new(Instant::now()));
        loop {
            // Requests that have answered are reaped as they end, not kept until the client
            // leaves.
            while in_flight.try_join_next().is_some() {}
            let idle = || {
                (slots.available_permits() == MAX_IN_FLIGHT)
                    .then(|| *answered.lock().unwrap_or_else(|p| p.into_inner()))
            };
            let message = match self.read_frame(reader, idle).await {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => {
                    // Requests already running still answer (the writer stays open until then).
                    while in_flight.join_next().await.is_some() {}
                    return Err(e);
                }
            };
            if message["type"] != "request" {
                while in_flight.join_next().await.is_some() {}
                return Err(ProtocolError::BadMessage(format!(
                    "unknown message type {}: expected \"request\"",
                    message["type"]
                )));
            }
            let id = match &message["id"] {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => {
                    let _ = tx.send(json!({ "type": "error", "id": null, "error": { "kind": "protocol", "message": "a request needs an id (string or number)" } }));
                    continue;
                }
            };
            // Back-pressure: at most MAX_IN_FLIGHT requests of one client run at once; reading
            // its next frame waits for a slot.
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break;
            };
            let me = self.clone();
            let tx = tx.clone();
            let answered = answered.clone();
            in_flight.spawn(async move {
                let _slot = slot;
                let session = format!("{}:{conn}:{id}", me.router.boot);
                let swap = me.swap.clone();
                let facts = Facts {
                    uptime_secs: me.started.elapsed().as_secs(),
                    connections: MAX_CONNECTIONS - me.connections.available_permits(),
                    connection_tasks: me.tasks_held.load(std::sync::atomic::Ordering::Relaxed),
                };
                let answer = tokio::task::spawn_blocking(move || {
                    // The set this request starts on is the one it finishes on, whatever
                    // reloads; at start, it waits for the first set to load.
                    let pipeline = match message["op"].as_str() {
                        // These answer at once, loading or not.
                        Some("status" | "ping") => swap.current(),
                        _ => swap.current_when_ready(BOOT_PATIENCE),
                    };
                    handle(&pipeline, &swap, &message, &session, facts)
                })
                    .await
                    .unwrap_or_else(|e| Err(format!("the request failed inside the daemon: {e}")));
                let reply = match answer {
                    Ok((result, traces)) => {
                        for t in traces {
                            let _ = tx.send(json!({ "type": "event", "id": id, "event": "gate-trace", "trace": t }));
                        }
                        json!({ "type": "reply", "id": id, "ok": true, "result": result })
                    }
                    Err(message) => json!({ "type": "error", "id": id, "error": { "kind": "request", "message": message } }),
                };
                let _ = tx.send(reply);
                *answered.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
            });
        }
        while in_flight.join_next().await.is_some() {}
        Ok(())
    }

    /// One frame: `Ok(None)` when the client closed cleanly between frames. A client is
    /// silent only while `idle()` says since when it has had nothing in flight (`None`: it is
    /// waiting for its own replies, and is never timed out for that).
    async fn read_frame(
        &self,
        reader: &mut tokio::net::tcp::OwnedReadHalf,
        idle: impl Fn() -> Option<Instant>,
    ) -> Result<Option<Value>, ProtocolError> {
        let timeout = self.config.read_timeout;
        let mut wait = timeout;
        // The length prefix, read with `read` (cancel-safe: a timeout loses no byte). Until its
        // first byte, the client is silent only while `idle()` says so: `readable()` alone is
        // not enough, it may report a readiness left over from the previous frame, and a read
        // that then waited a fixed time would close the connection of a client whose long
        // request is still running.
        let mut prefix = [0u8; LEN_DIGITS];
        let mut got = 0;
        while got < LEN_DIGITS {
            match tokio::time::timeout(wait, reader.read(&mut prefix[got..])).await {
                Ok(Ok(0)) if got == 0 => return Ok(None),
                Ok(Ok(0)) | Ok(Err(_)) => return Err(ProtocolError::ShortRead),
                Ok(Ok(n)) => {
                    got += n;
                    wait = timeout;
                }
                Err(_) if got > 0 => return Err(ProtocolError::Timeout(timeout.as_secs())),
                Err(_) => match idle() {
                    None => wait = timeout,
                    Some(since) if since.elapsed() < timeout => {
                        wait = timeout.saturating_sub(since.elapsed());
                    }
                    Some(_) => return Err(ProtocolError::Timeout(timeout.as_secs())),
                },
            }
        }
        let size = protocol::parse_len(&prefix, self.config.max_frame)?;
        let mac_len = if self.config.signer.is_some() {
            MAC_DIGITS
        } else {
            0
        };
        // Grow the buffer as bytes arrive rather than allocating what the prefix announces: a
        // client that announces 16 MiB and sends nothing costs nothing.
        let want = mac_len + size;
        let mut rest = Vec::with_capacity(want.min(64 * 1024));
        match tokio::time::timeout(
            timeout,
            (&mut *reader).take(want as u64).read_to_end(&mut rest),
        )
        .await
        {
            Err(_) => return Err(ProtocolError::Timeout(timeout.as_secs())),
            Ok(Err(_)) => return Err(ProtocolError::ShortRead),
            Ok(Ok(n)) if n < want => return Err(ProtocolError::ShortRead),
            Ok(Ok(_)) => {}
        }
        let (mac, payload) = rest.split_at(mac_len);
        if let Some(s) = &self.config.signer {
            s.verify(payload, mac)?;
        }
        serde_json::from_slice(payload)
            .map(Some)
            .map_err(|e| ProtocolError::BadJson(e.to_string()))
    }
}

fn report_result(report: &Report) -> (Value, Vec<Value>) {
    let traces = report
        .steps
        .iter()
        .filter(|s| !s.trace.is_empty())
        .map(|s| json!(s.trace))
        .collect();
    (json!({ "steps": report.steps }), traces)
}

fn client_meta(session: &str) -> Meta {
    Meta {
        source: Some("client".into()),
        session: Some(session.into()),
    }
}

/// What `status` tells of the daemon itself.
#[derive(Clone, Copy, Debug)]
struct Facts {
    uptime_secs: u64,
    /// Clients connected now.
    connections: usize,
    /// Connection tasks held (see `Server::tasks_held`).
    connection_tasks: usize,
}

/// Run one request on the pipeline. `Ok((result, gate traces))` or the error for the client.
fn handle(
    pipeline: &Pipeline,
    swap: &Swap,
    message: &Value,
    session: &str,
    facts: Facts,
) -> Result<(Value, Vec<Value>), String> {
    let op = message["op"].as_str().unwrap_or_default();
    let field = |name: &str| {
        message[name]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| format!("`{op}` needs a string field `{name}`"))
    };
    match op {
        "ping" => Ok((json!("pong"), Vec::new())),
        "reload" => swap
            .reload_if_changed("requested by a client")
            .map(|r| (json!(r), Vec::new())),
        "act" => {
            let action: Action = serde_json::from_value(message["action"].clone())
                .map_err(|e| format!("`action` is not a valid action: {e}"))?;
            let report = pipeline.run(Signal::request(json!(action), client_meta(session)));
            Ok(report_result(&report))
        }
        "ask" => {
            let text = field("text")?;
            let mut signal = Signal::event("user-input", Some(&text), None);
            signal.meta = client_meta(session);
            Ok(report_result(&pipeline.run(signal)))
        }
        "approve" => pipeline
            .approve(&field("token")?)
            .map(|r| report_result(&r))
            .map_err(|e| e.to_string()),
        "deny" => pipeline
            .deny(&field("token")?)
            .map(|a| (json!({ "dropped": a }), Vec::new()))
            .map_err(|e| e.to_string()),
        "approvals" => {
            let approvals =
                crate::approvals::Approvals::new(pipeline.journal()).map_err(|e| e.to_string())?;
            approvals
                .pending()
                .map(|p| (json!(p), Vec::new()))
                .map_err(|e| e.to_string())
        }
        "status" => {
            let pending = crate::approvals::Approvals::new(pipeline.journal())
                .and_then(|a| a.pending())
                .map(|p| p.len())
                .unwrap_or(0);
            let plugins: Vec<Value> = pipeline
                .plugins()
                .iter()
                .map(|p| json!({ "name": p.id.name, "version": p.id.version, "telemetry": p.telemetry.snapshot() }))
                .collect();
            let reload = swap.status();
            let health = if !swap.ready() {
                "loading"
            } else if !pipeline.missing_gates().is_empty() {
                "unhealthy"
            } else if reload.last_error.is_some() {
                "degraded"
            } else {
                "healthy"
            };
            Ok((
                json!({
                    "health": health,
                    "uptime_secs": facts.uptime_secs,
                    "connections": facts.connections,
                    "connection_tasks": facts.connection_tasks,
                    "plugins": plugins,
                    "plugin_set": pipeline.plugin_set(),
                    "missing_gates": pipeline.missing_gates(),
                    "reload": reload,
                    "pending_approvals": pending
                }),
                Vec::new(),
            ))
        }
        other => Err(format!(
            "unknown op {other:?}: use act, ask, approve, deny, approvals, status, reload or ping"
        )),
    }
}
