//! One client connection: the handshake (a nonce each way, proof of the client key, and of
//! the approver key when the client has it), then signed frames in both directions, requests
//! run off the async threads, replies through the client's bounded [`Outbox`].

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use super::handshake::{Field, Handshake};
use super::ops::{self, Facts, Role};
use super::outbox::{Class, Next, Outbox};
use super::protocol::{
    self, Direction, HANDSHAKE_FRAME, LEN_DIGITS, MAC_DIGITS, Nonce, Opener, ProtocolError, Sealer,
};
use super::request::{Event, Op, Request, Topic, refused_frame, request_error};
use super::server::{BOOT_PATIENCE, MAX_IN_FLIGHT, READ_BUDGET, Server};
use crate::signal::Meta;

/// A connection's reading half, buffered: a frame's length, signature and payload arrive
/// together, and are taken from one receive instead of three system calls.
type Reader = tokio::io::BufReader<OwnedReadHalf>;

/// The read buffer of a connection: a request frame fits (the payload of a larger one is
/// mostly read straight into its own buffer).
const READ_BUFFER: usize = 8 << 10;

/// Subscriptions one connection may hold (each holds one of its request slots).
const MAX_SUBSCRIPTIONS: usize = 4;

/// The longest request id (a string's bytes) a client may choose.
const MAX_ID_BYTES: usize = 256;

/// Frames up to this size are read without asking the daemon-wide read budget.
const SMALL_FRAME: usize = 64 << 10;
/// How many copies of a message a request holds while it runs, about: the message, the
/// typed action, its journal records and its reply.
const HELD_COPIES: usize = 3;
/// How long a large frame waits for room in the read budget before the client is told to
/// send it again later.
const BUDGET_WAIT: Duration = Duration::from_secs(5);
/// How long a large frame's payload may take to arrive once it holds room in the read budget
/// (a client on this machine sends 16 MiB in milliseconds): one trickling in cannot keep the
/// room from the others for the whole read timeout.
const LARGE_FRAME_TIME: Duration = Duration::from_secs(10);
/// How long the writer may take to send what is queued once the connection ends.
const FLUSH_GRACE: Duration = Duration::from_secs(5);

/// An authenticated connection's state after the handshake.
struct Session {
    opener: Option<Opener>,
    sealer: Option<Sealer>,
    role: Role,
    client: String,
}

/// Why a handshake did not finish.
enum Refused {
    /// Told to the client, unsigned, then closed.
    Protocol(ProtocolError),
    /// Evicted for a newer connection.
    Evicted,
    /// The daemon is stopping.
    Stopping,
}

impl From<ProtocolError> for Refused {
    fn from(e: ProtocolError) -> Refused {
        Refused::Protocol(e)
    }
}

/// A protocol error as a frame: `{"type": "error", "error": {"kind", "message"}}`, with the
/// supported versions for a version refusal.
fn error_frame(e: &ProtocolError, kind: &str) -> Value {
    let mut v =
        json!({ "type": "error", "id": null, "error": { "kind": kind, "message": e.to_string() } });
    if let ProtocolError::Unsupported(_) = e {
        v["error"]["supported"] = json!(protocol::SUPPORTED);
    }
    v
}

async fn write_unsigned(writer: &mut OwnedWriteHalf, message: &Value) {
    let bytes = serde_json::to_vec(message).unwrap_or_default();
    if let Ok(frame) = protocol::encode(&bytes, None) {
        let _ = tokio::time::timeout(Duration::from_secs(1), writer.write_all(&frame)).await;
    }
}

impl Server {
    /// Serve one accepted connection; `evict` fires when a newer connection needs its
    /// handshake slot.
    pub(super) async fn connection(
        self: Arc<Self>,
        stream: TcpStream,
        peer: SocketAddr,
        conn: u64,
        evict: oneshot::Receiver<()>,
    ) {
        // Replies are small frames written one by one: without this, Nagle's algorithm and
        // delayed ACKs add ~40 ms to each round trip.
        let _ = stream.set_nodelay(true);
        let (reader, mut writer) = stream.into_split();
        let mut reader = Reader::with_capacity(READ_BUFFER, reader);
        let deadline = self.config.handshake_deadline;
        let mut stopping = self.stopping.subscribe();
        let handshake = tokio::select! {
            // An eviction that fired already (no room) wins over a handshake ready to go on.
            biased;
            _ = evict => Err(Refused::Evicted),
            r = tokio::time::timeout(deadline, self.handshake(&mut reader, &mut writer)) => match r {
                Ok(r) => r,
                Err(_) => Err(Refused::Protocol(ProtocolError::Timeout(deadline.as_secs()))),
            },
            _ = stopping.wait_for(|s| *s) => Err(Refused::Stopping),
        };
        let _ = self.handshakes.leave(conn);
        let session = match handshake {
            Ok(s) => s,
            Err(Refused::Protocol(e)) => {
                tracing::info!("client {peer} (#{conn}) refused: {e}");
                write_unsigned(&mut writer, &error_frame(&e, "protocol")).await;
                return;
            }
            Err(Refused::Evicted) => {
                let e = ProtocolError::Busy(
                    "closed: too many connections were waiting to authenticate; connect again"
                        .into(),
                );
                write_unsigned(&mut writer, &error_frame(&e, "busy")).await;
                return;
            }
            Err(Refused::Stopping) => {
                let e = ProtocolError::BadMessage("the daemon is stopping".into());
                write_unsigned(&mut writer, &error_frame(&e, "shutdown")).await;
                return;
            }
        };
        // The operator's replies have a budget of their own (`APPROVER_OUTGOING_BYTES`); with
        // authentication off every client is an approver, and they share the larger one.
        let budget = match session.role {
            ops::Role::Approver if self.config.keys.is_some() => &self.approver_outgoing,
            _ => &self.outgoing,
        };
        let outbox = Arc::new(Outbox::new(self.config.max_frame, budget.clone()));
        let mut writer_task = tokio::spawn(write_loop(outbox.clone(), writer, session.sealer));
        let permit = match self.connections.clone().try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) if session.role == ops::Role::Approver => {
                self.approver_places.clone().try_acquire_owned().ok()
            }
            Err(_) => None,
        };
        let Some(_permit) = permit else {
            use super::server::{APPROVER_PLACES, MAX_CONNECTIONS};
            let message = match session.role {
                ops::Role::Approver => {
                    format!("the daemon already serves {MAX_CONNECTIONS} clients; try again later")
                }
                ops::Role::Client => format!(
                    "the daemon already serves {} clients, as many as it takes with the client key (its last {APPROVER_PLACES} places are kept for the approver key); try again later",
                    MAX_CONNECTIONS - APPROVER_PLACES
                ),
            };
            tracing::warn!("refusing {peer} ({:?}): {message}", session.role);
            outbox.push(&json!({ "type": "error", "id": null, "error": { "kind": "busy", "message": message } }), Class::Must);
            outbox.finish();
            if tokio::time::timeout(FLUSH_GRACE, &mut writer_task)
                .await
                .is_err()
            {
                writer_task.abort();
            }
            return;
        };
        outbox.push(
            &json!({
                "type": "hello",
                "version": protocol::VERSION,
                "server": concat!("passepartout ", env!("CARGO_PKG_VERSION")),
                "auth": if self.config.keys.is_some() { "hmac" } else { "none" },
                "role": session.role,
                "capabilities": ops::capabilities(session.role),
            }),
            Class::Must,
        );
        self.router.add(conn, outbox.clone());
        tracing::debug!(
            "client {peer} (#{conn}) is {} as {:?}",
            session.client,
            session.role
        );
        let mut opener = session.opener;
        let result = self
            .conversation(
                conn,
                (session.role, &session.client),
                &mut reader,
                opener.as_mut(),
                &outbox,
            )
            .await;
        match result {
            Err(e) => {
                tracing::info!("client {peer} (#{conn}): {e}");
                outbox.push(&error_frame(&e, "protocol"), Class::Must);
            }
            Ok(Ended::Stopping) => {
                let e = ProtocolError::BadMessage("the daemon is stopping".into());
                outbox.push(&error_frame(&e, "shutdown"), Class::Must);
            }
            Ok(Ended::Left) => {}
        }
        self.router.remove(conn);
        outbox.finish();
        if let Some(why) = outbox.abort_reason() {
            tracing::warn!("client {peer} (#{conn}): {why}");
            writer_task.abort();
        } else if tokio::time::timeout(FLUSH_GRACE, &mut writer_task)
            .await
            .is_err()
        {
            tracing::info!("client {peer} (#{conn}) did not read what was left for it; dropped");
            writer_task.abort();
        }
    }

    /// The handshake: hello → challenge → signed auth. Every frame is small and unsigned
    /// until the client proves the key.
    async fn handshake(
        &self,
        reader: &mut Reader,
        writer: &mut OwnedWriteHalf,
    ) -> Result<Session, Refused> {
        // Silence is counted from the start of the handshake (and it has its own deadline).
        let started = Instant::now();
        let silent_since = || Some(started);
        let Some(hello) = self.read_handshake(reader, None, silent_since).await? else {
            return Err(ProtocolError::ShortRead.into());
        };
        match &hello.kind {
            Field::Text(kind) if kind == "hello" => {}
            Field::Missing => {
                return Err(
                    ProtocolError::BadMessage("the first message must be a hello".into()).into(),
                );
            }
            other => {
                return Err(ProtocolError::BadMessage(format!(
                    "the first message must be a hello, not {}",
                    other.shown()
                ))
                .into());
            }
        }
        match hello.version.number() {
            Some(v) if protocol::SUPPORTED.iter().any(|s| u64::from(*s) == v) => {}
            other => {
                return Err(ProtocolError::Unsupported(format!(
                    "the hello's protocol version {} is not supported: this daemon speaks {:?}; update the client",
                    other.map_or_else(|| "(missing)".to_owned(), |v| v.to_string()),
                    protocol::SUPPORTED
                ))
                .into());
            }
        }
        // Journaled and logged with what it asks (`via`, `by`): no control characters.
        let client = hello
            .client
            .text()
            .unwrap_or("a client")
            .chars()
            .filter(|c| !c.is_control())
            .take(64)
            .collect();
        let theirs = Nonce::parse(hello.nonce.text().unwrap_or_default())?;
        // Not kept while the client is waited for.
        drop(hello);
        let ours = Nonce::random()
            .map_err(|e| ProtocolError::BadMessage(format!("the daemon has no randomness: {e}")))?;
        let auth = if self.config.keys.is_some() {
            "hmac"
        } else {
            "none"
        };
        let challenge = json!({ "type": "challenge", "version": protocol::VERSION, "nonce": ours.hex(), "auth": auth });
        let bytes = serde_json::to_vec(&challenge).unwrap_or_default();
        let frame = protocol::encode(&bytes, None)?;
        writer
            .write_all(&frame)
            .await
            .map_err(|_| ProtocolError::ShortRead)?;
        let Some(keys) = &self.config.keys else {
            // Authentication off (--insecure-no-auth): every client may do everything. The
            // auth frame need only be JSON.
            let auth = self
                .read_payload(reader, None, HANDSHAKE_FRAME, silent_since, &self.reading)
                .await?;
            if let Some((payload, _)) = auth {
                serde_json::from_slice::<serde::de::IgnoredAny>(&payload)
                    .map_err(|e| ProtocolError::BadJson(e.to_string()))?;
            }
            return Ok(Session {
                opener: None,
                sealer: None,
                role: Role::Approver,
                client,
            });
        };
        let key = keys.client.session(&theirs, &ours);
        let mut opener = key.opener(Direction::ToServer);
        let auth = match self
            .read_handshake(reader, Some(&mut opener), silent_since)
            .await
        {
            Ok(Some(a)) if a.kind.text() == Some("auth") => a,
            Ok(Some(a)) => {
                return Err(ProtocolError::BadMessage(format!(
                    "after the challenge the client sends its signed auth, not {}",
                    a.kind.shown()
                ))
                .into());
            }
            Ok(None) => return Err(ProtocolError::ShortRead.into()),
            Err(ProtocolError::BadSignature | ProtocolError::Unsigned) => {
                return Err(ProtocolError::BadMessage(
                    "authentication failed: the client did not prove it holds the daemon's client key (passepartout reads it from the keys directory, or PASSEPARTOUT_HMAC_SECRET)".into(),
                )
                .into());
            }
            Err(e) => return Err(e.into()),
        };
        let approver = auth.approver.text().is_some_and(|proof| {
            keys.approver
                .as_ref()
                .is_some_and(|k| k.check_approver_proof(&theirs, &ours, proof))
        });
        if auth.approver.text().is_some() && !approver {
            return Err(ProtocolError::BadMessage(
                "the approver proof is wrong: this is not the daemon's approver key".into(),
            )
            .into());
        }
        // An approver's frames from here on are signed with a key that needs the approver
        // key as well (sequence numbers start again at 0).
        let (opener, key) = match keys.approver.as_ref().filter(|_| approver) {
            Some(a) => {
                let k = a.approver_session(&key);
                (k.opener(Direction::ToServer), k)
            }
            None => (opener, key),
        };
        Ok(Session {
            opener: Some(opener),
            sealer: Some(key.sealer(Direction::ToClient)),
            role: if approver {
                Role::Approver
            } else {
                Role::Client
            },
            client,
        })
    }

    /// Read requests until the client leaves, breaks the protocol, stops reading, or the
    /// daemon stops.
    async fn conversation(
        self: &Arc<Self>,
        conn: u64,
        (role, name): (Role, &str),
        reader: &mut Reader,
        mut opener: Option<&mut Opener>,
        outbox: &Arc<Outbox>,
    ) -> Result<Ended, ProtocolError> {
        let mut in_flight = tokio::task::JoinSet::new();
        let slots = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
        // When this client last had a reply sent (its silence is counted from then).
        let answered = Arc::new(std::sync::Mutex::new(Instant::now()));
        let mut stopping = self.stopping.subscribe();
        // Ends this connection's subscriptions when its conversation ends.
        let closing = tokio_util::sync::CancellationToken::new();
        let followed = Arc::new(std::sync::Mutex::new(Followed::default()));
        // The operator's large frames have a read budget of their own, so that clients with
        // the client key alone cannot keep them out; with authentication off every client is
        // an approver, and they share the one budget.
        let reading = match role {
            Role::Approver if self.config.keys.is_some() => &self.approver_reading,
            _ => &self.reading,
        };
        let ended = loop {
            // Requests that have answered are reaped as they end.
            while in_flight.try_join_next().is_some() {}
            // Idle: nothing running but its subscriptions (a follower that stays silent past
            // the read timeout is closed like any silent client; the TUI pings).
            let idle = || {
                let following = Followed::lock(&followed).subscriptions;
                (slots.available_permits() + following == MAX_IN_FLIGHT)
                    .then(|| *answered.lock().unwrap_or_else(|p| p.into_inner()))
            };
            let read = tokio::select! {
                biased;
                _ = stopping.wait_for(|s| *s) => break Ok(Ended::Stopping),
                () = outbox.aborted() => break Ok(Ended::Left),
                r = self.read_frame_held(reader, opener.as_deref_mut(), self.config.max_frame, idle, reading) => r,
            };
            let (message, budget) = match read {
                Ok(Some(m)) => m,
                Ok(None) => break Ok(Ended::Left),
                Err(e) => break Err(e),
            };
            if message["type"] != "request" {
                break Err(ProtocolError::BadMessage(format!(
                    "unknown message type {}: expected \"request\"",
                    message["type"]
                )));
            }
            let id = message["id"].clone();
            if !(id.is_string() || id.is_number()) {
                outbox.push(&json!({ "type": "error", "id": null, "error": { "kind": "protocol", "message": "a request needs an id (string or number)" } }), Class::Must);
                continue;
            }
            // The id is echoed in every answer, kept with a suspended action (the approver's
            // `approvals` listing) and in each verdict followers hear: a long one would make
            // those as long.
            if let Some(long) = id.as_str().filter(|s| s.len() > MAX_ID_BYTES) {
                let message = format!(
                    "a request id is at most {MAX_ID_BYTES} bytes; this one is {}: use a shorter one",
                    long.len()
                );
                outbox.push(&json!({ "type": "error", "id": null, "error": { "kind": "protocol", "message": message } }), Class::Must);
                *answered.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                continue;
            }
            // Parsed once, here: the role is checked before the op's fields are read, and what
            // runs below is a typed request (an action stays typed down to the tool).
            let request = match Request::parse(&message, role) {
                Ok(r) => r,
                Err(e) => {
                    outbox.push(&request_error(&id, &e.to_string()), Class::Must);
                    // Answered: the client is not silent.
                    *answered.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                    continue;
                }
            };
            drop(message);
            // Back-pressure: at most MAX_IN_FLIGHT requests of one client run at once; reading
            // its next frame waits for a slot.
            let Ok(slot) = slots.clone().acquire_owned().await else {
                break Ok(Ended::Left);
            };
            let me = self.clone();
            let outbox = outbox.clone();
            if let Request::Subscribe { topics } = request {
                // A few per connection, each holding a slot until the connection closes, and
                // each topic followed by one of them (a second would send every event twice).
                let refused = Followed::lock(&followed).take(&topics);
                if let Err(why) = refused {
                    outbox.push(&request_error(&id, &why), Class::Must);
                    *answered.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                    drop(slot);
                    continue;
                }
                // Its frame's share of the read budget is not held while it follows.
                drop(budget);
                // Given back when the follow ends, however it ends (a panic included).
                let following = Following {
                    followed: followed.clone(),
                    topics: topics.clone(),
                };
                let sub = super::events::Subscription {
                    topics,
                    role,
                    client: format!("{}:{conn}", me.router.boot()),
                    id,
                };
                let closing = closing.clone();
                in_flight.spawn(async move {
                    let _slot = slot;
                    let _following = following;
                    super::events::follow(me, sub, outbox, closing).await;
                });
                continue;
            }
            let answered = answered.clone();
            let via = name.to_owned();
            in_flight.spawn(async move {
                let _slot = slot;
                let _budget = budget;
                // Replies are routed by the request's session; budgets are kept by the
                // client's (this connection's).
                let meta = Meta {
                    source: Some("client".into()),
                    session: Some(format!("{}:{conn}:{id}", me.router.boot())),
                    client: Some(format!("{}:{conn}", me.router.boot())),
                    via: Some(via),
                    focus: None,
                    client_key: role == Role::Client,
                };
                let swap = me.swap.clone();
                let facts = me.facts();
                // The set this request starts on is the one it finishes on, whatever
                // reloads; at start, it waits for the first set to load.
                let op = request.op();
                let pipeline = match op {
                    Op::Status | Op::Ping => swap.current(),
                    _ => swap.current_when_ready(BOOT_PATIENCE).await,
                };
                // A panic anywhere in the request is an answer (the request failed), not a
                // client left waiting for ever. Caught here rather than in a task of its own:
                // a second task per request cost a wake-up and split its frames over writes.
                let answer = std::panic::AssertUnwindSafe(ops::handle(
                    &pipeline, &swap, request, &meta, facts,
                ))
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| {
                    Err(ops::Refused::Failed(format!(
                        "the request failed inside the daemon: {}",
                        panic_text(panic.as_ref())
                    )))
                })
                .map(|reply| match reply {
                    ops::Reply::Status(s) => ops::Reply::Status(Box::new(s.for_role(role))),
                    other => other,
                })
                .map_err(|refused| ops::Refused::for_role(refused, op, role));
                let reply = match answer {
                    Ok(result) => {
                        for trace in result.traces() {
                            outbox.push(&Event::GateTrace { trace }.frame(&id), Class::May);
                        }
                        super::request::reply_frame(&id, &result)
                    }
                    Err(refused) => refused_frame(&id, &refused),
                };
                outbox.push(&reply, Class::Must);
                *answered.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
            });
        };
        // Subscriptions end with the conversation; requests already running still answer
        // (the writer stays open until then).
        closing.cancel();
        while in_flight.join_next().await.is_some() {}
        ended
    }

    /// A handshake frame (at most [`HANDSHAKE_FRAME`] bytes, signed when `opener` is given),
    /// read into the few fields the handshake reads ([`Handshake`]): `Ok(None)` when the
    /// client closed cleanly before it.
    async fn read_handshake(
        &self,
        reader: &mut Reader,
        opener: Option<&mut Opener>,
        idle: impl Fn() -> Option<Instant>,
    ) -> Result<Option<Handshake>, ProtocolError> {
        // Handshake frames are small: they never take from a read budget.
        let Some((payload, _)) = self
            .read_payload(reader, opener, HANDSHAKE_FRAME, idle, &self.reading)
            .await?
        else {
            return Ok(None);
        };
        Handshake::parse(&payload).map(Some)
    }

    /// One frame, at most `limit` bytes, signed when `opener` is given, with its share of the
    /// read budget `budget` (large frames only; the request keeps it until it is answered,
    /// since the parsed message lives that long): `Ok(None)` when the client closed cleanly
    /// between frames. A client is silent only while `idle()` says since when it has had
    /// nothing in flight (`None`: it is waiting for its own replies, and is never timed out
    /// for that).
    async fn read_frame_held(
        &self,
        reader: &mut Reader,
        opener: Option<&mut Opener>,
        limit: usize,
        idle: impl Fn() -> Option<Instant>,
        budget: &Arc<Semaphore>,
    ) -> Result<Option<(Value, Option<OwnedSemaphorePermit>)>, ProtocolError> {
        let Some((payload, held)) = self
            .read_payload(reader, opener, limit, idle, budget)
            .await?
        else {
            return Ok(None);
        };
        let value =
            serde_json::from_slice(&payload).map_err(|e| ProtocolError::BadJson(e.to_string()))?;
        drop(payload);
        let held = self.parsed_budget(&value, held, budget).await?;
        Ok(Some((value, held)))
    }

    /// One frame's payload, as [`Server::read_frame_held`] reads it, with the room its bytes
    /// hold in `budget` (frames over [`SMALL_FRAME`]).
    async fn read_payload(
        &self,
        reader: &mut Reader,
        opener: Option<&mut Opener>,
        limit: usize,
        idle: impl Fn() -> Option<Instant>,
        budget: &Arc<Semaphore>,
    ) -> Result<Option<(Vec<u8>, Option<OwnedSemaphorePermit>)>, ProtocolError> {
        let timeout = self.config.read_timeout;
        let mut wait = timeout;
        // The length prefix, read with `read` (cancel-safe: a timeout loses no byte). Until its
        // first byte, the client is silent only while `idle()` says so.
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
        let size = protocol::parse_len(&prefix, limit)?;
        let mut mac = [0u8; MAC_DIGITS];
        if opener.is_some() {
            // Read as it arrives, so that an unsigned frame is refused at its first byte
            // instead of waiting for 64 that never come.
            let mut got = 0;
            while got < MAC_DIGITS {
                let n = match tokio::time::timeout(timeout, reader.read(&mut mac[got..])).await {
                    Err(_) => return Err(ProtocolError::Timeout(timeout.as_secs())),
                    Ok(Ok(0) | Err(_)) => return Err(ProtocolError::ShortRead),
                    Ok(Ok(n)) => n,
                };
                if let Some(bad) = mac[got..got + n]
                    .iter()
                    .position(|b| !protocol::is_lower_hex(*b))
                {
                    let first = got + bad == 0 && !mac[0].is_ascii_hexdigit();
                    return Err(if first {
                        ProtocolError::Unsigned
                    } else {
                        ProtocolError::BadSignature
                    });
                }
                got += n;
            }
        }
        // Large frames take their size from a budget shared by every connection of a role,
        // so that many clients sending large frames at once cannot make the daemon hold them
        // all.
        let held = if size > SMALL_FRAME {
            let permits = u32::try_from(size).unwrap_or(u32::MAX);
            match tokio::time::timeout(BUDGET_WAIT, budget.clone().acquire_many_owned(permits))
                .await
            {
                Ok(Ok(p)) => Some(p),
                _ => {
                    return Err(ProtocolError::Busy(format!(
                        "the daemon is reading other large frames; this one ({size} bytes) waited {} s for room: send it again later",
                        BUDGET_WAIT.as_secs()
                    )));
                }
            }
        } else {
            None
        };
        // Grow the buffer as bytes arrive rather than allocating what the prefix announces.
        let mut payload = Vec::with_capacity(size.min(SMALL_FRAME));
        let arrive = if held.is_some() {
            timeout.min(LARGE_FRAME_TIME)
        } else {
            timeout
        };
        match tokio::time::timeout(
            arrive,
            (&mut *reader).take(size as u64).read_to_end(&mut payload),
        )
        .await
        {
            Err(_) if held.is_some() => {
                return Err(ProtocolError::Busy(format!(
                    "a frame of {size} bytes did not arrive within {} s of its start: a large frame holds room other clients' large frames need; send it at once",
                    arrive.as_secs()
                )));
            }
            Err(_) => return Err(ProtocolError::Timeout(timeout.as_secs())),
            Ok(Err(_)) => return Err(ProtocolError::ShortRead),
            Ok(Ok(n)) if n < size => return Err(ProtocolError::ShortRead),
            Ok(Ok(_)) => {}
        }
        if let Some(o) = opener {
            o.verify(&payload, &mac)?;
        }
        Ok(Some((payload, held)))
    }

    /// The read budget a parsed message holds while its request runs: what it takes in memory
    /// ([`protocol::parsed_size`]) as often as a request holds it ([`HELD_COPIES`]), not its
    /// frame's size, once that is over [`SMALL_FRAME`] (many small values take many times
    /// their bytes: 200 clients sending 16 frames of 30,000 zeros each, just under
    /// [`SMALL_FRAME`], took the daemon from 49 MiB to 1.2 GiB). `held` is what the frame's
    /// bytes took.
    ///
    /// # Errors
    /// [`ProtocolError::BadMessage`] when it could never fit the budget;
    /// [`ProtocolError::Busy`] when no room came within [`BUDGET_WAIT`] (a large frame, which
    /// never waits holding room: when there was none at once and its values take well over
    /// their bytes).
    async fn parsed_budget(
        &self,
        value: &Value,
        held: Option<OwnedSemaphorePermit>,
        budget: &Arc<Semaphore>,
    ) -> Result<Option<OwnedSemaphorePermit>, ProtocolError> {
        let size = protocol::parsed_size(value);
        let parsed = size.saturating_mul(HELD_COPIES);
        let have = held.as_ref().map_or(0, OwnedSemaphorePermit::num_permits);
        if parsed <= SMALL_FRAME.max(have) {
            return Ok(held);
        }
        let mib = |bytes: usize| bytes.div_ceil(1 << 20);
        if parsed > READ_BUDGET {
            return Err(ProtocolError::BadMessage(format!(
                "this message takes about {} MiB once read, more than the {} MiB the daemon \
                 holds of all clients' messages at once: send fewer values",
                mib(parsed),
                mib(READ_BUDGET)
            )));
        }
        let more = u32::try_from(parsed - have).unwrap_or(u32::MAX);
        let busy = |waited: &str| {
            ProtocolError::Busy(format!(
                "the daemon holds other large messages; this one (about {} MiB once read) \
                 {waited} for room: send it again later",
                mib(parsed)
            ))
        };
        let Some(mut held) = held else {
            // Holding nothing, it may wait for room.
            return match tokio::time::timeout(BUDGET_WAIT, budget.clone().acquire_many_owned(more))
                .await
            {
                Ok(Ok(permit)) => Ok(Some(permit)),
                _ => Err(busy(&format!("waited {} s", BUDGET_WAIT.as_secs()))),
            };
        };
        // A large frame already holds its bytes' room: it never waits for more while holding
        // it (frames that each held some and waited for more could wait on each other). Room
        // taken at once, or none; then a frame whose values take about their bytes (text) is
        // kept with its bytes' room, as large frames always were, and one of many small values
        // is refused. (From the budget `held` came from: permits of one semaphore only merge.)
        match budget.clone().try_acquire_many_owned(more) {
            Ok(permit) => {
                held.merge(permit);
                Ok(Some(held))
            }
            Err(_) if size <= have.saturating_add(SMALL_FRAME) => Ok(Some(held)),
            Err(_) => Err(busy("found no room")),
        }
    }

    /// The status `health` followers are sent: computed at most once a second for all of
    /// them.
    ///
    /// The lock is not held while it is computed (the approvals table, every plugin's
    /// telemetry): a follower asking meanwhile gets the last one instead of blocking its
    /// worker thread, and once there is a last one, one caller computes at a time.
    pub(super) fn health_status(&self) -> ops::Status {
        let lock = || self.health.lock().unwrap_or_else(|p| p.into_inner());
        {
            let mut cache = lock();
            match &cache.last {
                Some((at, status)) if at.elapsed() < Duration::from_millis(900) => {
                    return status.clone();
                }
                Some((_, status)) if cache.refreshing => return status.clone(),
                _ => {}
            }
            cache.refreshing = true;
        }
        /// Lets the next caller compute, whatever happens to this one.
        struct Refreshed<'a>(&'a std::sync::Mutex<HealthCache>);
        impl Drop for Refreshed<'_> {
            fn drop(&mut self) {
                self.0.lock().unwrap_or_else(|p| p.into_inner()).refreshing = false;
            }
        }
        let _refreshed = Refreshed(&self.health);
        let status = crate::blocking::in_place(|| {
            ops::status(&self.swap.current(), &self.swap, self.facts(), None)
        });
        lock().last = Some((Instant::now(), status.clone()));
        status
    }

    pub(super) fn facts(&self) -> Facts {
        Facts {
            uptime_secs: self.started.elapsed().as_secs(),
            connections: super::server::MAX_CONNECTIONS
                - self.connections.available_permits()
                - self.approver_places.available_permits(),
            connection_tasks: self.tasks_held.load(std::sync::atomic::Ordering::Relaxed),
            handshaking: self.handshakes.len(),
            outgoing_bytes: self.outgoing.used() + self.approver_outgoing.used(),
        }
    }
}

/// The status `health` followers were last sent ([`Server::health_status`]).
#[derive(Default)]
pub(super) struct HealthCache {
    /// When it was computed, and what it was.
    last: Option<(Instant, ops::Status)>,
    /// A caller is computing a new one.
    refreshing: bool,
}

/// What a caught panic said: its message when it was text (as `panic!` makes it).
fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic with no message")
}

/// How a conversation ended without a protocol error.
enum Ended {
    /// The client closed, or was closed for not reading.
    Left,
    /// The daemon is stopping.
    Stopping,
}

/// Send what the outbox gives, signed in order, until it is done or the client is closed for
/// not reading.
async fn write_loop(outbox: Arc<Outbox>, mut writer: OwnedWriteHalf, mut sealer: Option<Sealer>) {
    let mut buf = Vec::new();
    // Done or Aborted end the loop.
    while let Next::Frames(payloads, _held) = outbox.next().await {
        // A large batch's buffer is not kept for the life of the connection.
        if buf.capacity() > 1 << 20 {
            buf = Vec::new();
        }
        buf.clear();
        for p in &payloads {
            match protocol::encode(p, sealer.as_mut()) {
                Ok(frame) => buf.extend_from_slice(&frame),
                // The outbox keeps payloads within the frame limit.
                Err(e) => tracing::error!("a frame could not be encoded: {e}"),
            }
        }
        if writer.write_all(&buf).await.is_err() {
            break;
        }
    }
    let _ = writer.shutdown().await;
}

/// What one connection's subscriptions follow.
#[derive(Debug, Default)]
struct Followed {
    /// Subscriptions running (at most [`MAX_SUBSCRIPTIONS`]).
    subscriptions: usize,
    /// The topics they follow, each by one of them.
    topics: Vec<Topic>,
}

impl Followed {
    fn lock(followed: &std::sync::Mutex<Followed>) -> std::sync::MutexGuard<'_, Followed> {
        followed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Count a new subscription to `topics`; why not, when there are as many as a connection
    /// may hold or one of `topics` is followed already.
    fn take(&mut self, topics: &[Topic]) -> Result<(), String> {
        if self.subscriptions >= MAX_SUBSCRIPTIONS {
            return Err(format!(
                "at most {MAX_SUBSCRIPTIONS} subscriptions per connection"
            ));
        }
        if let Some(topic) = topics.iter().find(|t| self.topics.contains(t)) {
            return Err(format!(
                "this connection already follows `{}`: each topic is followed by one \
                 subscription per connection, and its events come under that one's id",
                topic.name()
            ));
        }
        self.subscriptions += 1;
        self.topics.extend_from_slice(topics);
        Ok(())
    }
}

/// One subscription a connection follows: counted, with its topics, while it lives.
struct Following {
    followed: Arc<std::sync::Mutex<Followed>>,
    topics: Vec<Topic>,
}

impl Drop for Following {
    fn drop(&mut self) {
        let mut followed = Followed::lock(&self.followed);
        followed.subscriptions = followed.subscriptions.saturating_sub(1);
        followed.topics.retain(|t| !self.topics.contains(t));
    }
}
