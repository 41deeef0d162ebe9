//! A blocking client for the daemon: connect, authenticate (docs/protocol.md), send requests,
//! collect the events and the reply that belong to each. Used by `passepartout send`, `chat`,
//! `approve`, and the tests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use super::keys::Keys;
use super::protocol::{self, Direction, HANDSHAKE_FRAME, MAX_FRAME, Nonce, Opener, Sealer};
use super::request::Request;

/// Why talking to the daemon failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No daemon answers.
    #[error("no daemon answers at {addr}: {source}. Start one with `passepartout daemon`")]
    Unreachable {
        /// Where we tried.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The connection broke.
    #[error("the connection to the daemon broke: {0}")]
    Io(#[from] std::io::Error),
    /// The daemon sent something that is not the protocol, or refused ours.
    #[error("protocol: {0}")]
    Protocol(String),
    /// A frame could not be made or read (its length, its seal, its JSON).
    #[error("protocol: {0}")]
    Frame(#[from] protocol::ProtocolError),
    /// A message could not be written as JSON.
    #[error("protocol: {0}")]
    Json(#[from] serde_json::Error),
    /// The daemon had no room for this connection (its handshake places were taken by others
    /// and this one was evicted, or it serves as many clients as it takes), after
    /// [`CONNECT_TRIES`] tries.
    #[error("the daemon is busy: {0}")]
    Busy(String),
    /// No randomness for the handshake's nonce.
    #[error("no randomness for the handshake: {0}")]
    Random(getrandom::Error),
}

/// How often [`Client::connect`] tries when the daemon says it is busy: over about 1.3 s, the
/// waits doubling from 20 ms.
pub const CONNECT_TRIES: usize = 7;

/// A connection to the daemon.
pub struct Client {
    stream: TcpStream,
    sealer: Option<Sealer>,
    opener: Option<Opener>,
    buf: Vec<u8>,
    next_id: u64,
    /// The daemon's hello (after authentication): its `role` says whether this client may
    /// decide approvals.
    pub hello: Value,
}

impl Client {
    /// Connect to `addr` and authenticate with `keys` (the client key, and the approver key
    /// when given). `None` only works with a daemon that runs `--insecure-no-auth`.
    ///
    /// # Errors
    /// [`ClientError::Unreachable`] when nothing listens; a protocol error when the handshake
    /// fails (a wrong key shows here, as the daemon's refusal).
    pub fn connect(addr: &str, keys: Option<&Keys>) -> Result<Client, ClientError> {
        Client::connect_as(addr, keys, "passepartout-cli")
    }

    /// [`Client::connect`], calling itself `name` in its hello (the daemon journals it with each
    /// request: which door a request came through).
    ///
    /// # Errors
    /// As [`Client::connect`].
    pub fn connect_as(addr: &str, keys: Option<&Keys>, name: &str) -> Result<Client, ClientError> {
        Client::connect_trying(addr, keys, name, CONNECT_TRIES)
    }

    /// [`Client::connect_as`], trying at most `tries` times (at least once) while the daemon
    /// says it is busy.
    ///
    /// # Errors
    /// As [`Client::connect`].
    pub fn connect_trying(
        addr: &str,
        keys: Option<&Keys>,
        name: &str,
        tries: usize,
    ) -> Result<Client, ClientError> {
        let mut wait = Duration::from_millis(20);
        for _ in 1..tries {
            match Client::connect_once(addr, keys, name) {
                Err(ClientError::Busy(_)) => {
                    // A little jitter, so that clients evicted together do not come back together.
                    let mut r = [0u8; 1];
                    let _ = getrandom::fill(&mut r);
                    std::thread::sleep(wait + Duration::from_millis(u64::from(r[0] % 16)));
                    wait *= 2;
                }
                done => return done,
            }
        }
        Client::connect_once(addr, keys, name)
    }

    fn connect_once(addr: &str, keys: Option<&Keys>, name: &str) -> Result<Client, ClientError> {
        let stream = TcpStream::connect(addr).map_err(|source| ClientError::Unreachable {
            addr: addr.into(),
            source,
        })?;
        stream.set_nodelay(true)?;
        let mut c = Client {
            stream,
            sealer: None,
            opener: None,
            buf: Vec::new(),
            next_id: 1,
            hello: Value::Null,
        };
        let ours = Nonce::random().map_err(ClientError::Random)?;
        c.send(&json!({ "type": "hello", "version": protocol::VERSION, "client": name, "nonce": ours.hex(), "capabilities": ["events"] }))?;
        let challenge = c.read_limited(HANDSHAKE_FRAME, false)?;
        if challenge["type"] != "challenge" {
            return Err(refusal(&challenge, "the daemon did not send its challenge"));
        }
        let theirs = Nonce::parse(challenge["nonce"].as_str().unwrap_or_default())?;
        let mut auth = json!({ "type": "auth" });
        let mut upgrade = None;
        if keys.is_some() && challenge["auth"] != "hmac" {
            return Err(ClientError::Protocol(format!(
                "the daemon at {addr} does not authenticate (auth {}): refusing to talk to it with this installation's keys (a daemon started with --insecure-no-auth, or not ours)",
                challenge["auth"]
            )));
        }
        if challenge["auth"] == "hmac" {
            let keys = keys.ok_or_else(|| {
                ClientError::Protocol(
                    "the daemon requires authentication and this client has no client key: run it as the daemon's user (the key is in its keys directory) or set PASSEPARTOUT_HMAC_SECRET".into(),
                )
            })?;
            let session = keys.client.session(&ours, &theirs);
            c.sealer = Some(session.sealer(Direction::ToServer));
            c.opener = Some(session.opener(Direction::ToClient));
            if let Some(approver) = &keys.approver {
                auth["approver"] = json!(approver.approver_proof(&ours, &theirs));
                upgrade = Some(approver.approver_session(&session));
            }
        }
        c.send(&auth)?;
        // An approver's connection goes on under a key bound to the approver key as well.
        if let Some(k) = upgrade {
            c.sealer = Some(k.sealer(Direction::ToServer));
            c.opener = Some(k.opener(Direction::ToClient));
        }
        let hello = c.read_limited(MAX_FRAME, true)?;
        if hello["type"] != "hello" {
            return Err(refusal(&hello, "the daemon did not say hello"));
        }
        c.hello = hello;
        Ok(c)
    }

    /// Whether the daemon accepted this client as an approver.
    pub fn is_approver(&self) -> bool {
        self.hello["role"] == "approver"
    }

    /// Send one message.
    ///
    /// # Errors
    /// The connection broke.
    pub fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        let bytes = serde_json::to_vec(message)?;
        let frame = protocol::encode(&bytes, self.sealer.as_mut())?;
        self.stream.write_all(&frame)?;
        Ok(())
    }

    /// Read one message.
    ///
    /// # Errors
    /// The connection broke or the frame is bad.
    pub fn read(&mut self) -> Result<Value, ClientError> {
        self.read_limited(MAX_FRAME, false)
    }

    /// Read one message of at most `limit` bytes. `refusal`: the reply to our auth, which may
    /// be the daemon's unsigned refusal (an error, and nothing else).
    fn read_limited(&mut self, limit: usize, refusal: bool) -> Result<Value, ClientError> {
        read_frame(
            &mut self.stream,
            &mut self.buf,
            self.opener.as_mut(),
            limit,
            refusal,
        )
    }

    /// Split the connection into its sending half and its reading half, for a client that
    /// reads on one thread (events come at any time: the result of an approval granted
    /// elsewhere) while it sends on another.
    ///
    /// # Errors
    /// The socket cannot be shared between the halves.
    pub fn split(self) -> Result<(Sender, Reader), ClientError> {
        let reading = self.stream.try_clone()?;
        Ok((
            Sender {
                stream: self.stream,
                sealer: self.sealer,
                next_id: self.next_id,
            },
            Reader {
                stream: reading,
                opener: self.opener,
                buf: self.buf,
            },
        ))
    }

    /// Send `request` and return the events for it and its reply (or error) frame.
    ///
    /// # Errors
    /// The connection broke.
    pub fn call(&mut self, request: &Request) -> Result<(Vec<Value>, Value), ClientError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.exchange(&request.frame(&id), &id)
    }

    /// Send a request frame built by hand: op `op` with `fields`. For frames [`Request`] cannot
    /// express (an op this client does not know, fields a test gets wrong on purpose); use
    /// [`Client::call`] otherwise.
    ///
    /// # Errors
    /// The connection broke.
    pub fn request_raw(
        &mut self,
        op: &str,
        fields: Value,
    ) -> Result<(Vec<Value>, Value), ClientError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut message = json!({ "type": "request", "id": id, "op": op });
        if let (Value::Object(m), Value::Object(f)) = (&mut message, fields) {
            m.extend(f);
        }
        self.exchange(&message, &id)
    }

    fn exchange(
        &mut self,
        message: &Value,
        id: &Value,
    ) -> Result<(Vec<Value>, Value), ClientError> {
        self.send(message)?;
        let mut events = Vec::new();
        loop {
            let m = self.read()?;
            match m["type"].as_str() {
                Some("event") if m["id"] == *id => events.push(m),
                Some("reply" | "error") if m["id"] == *id => return Ok((events, m)),
                Some("error") if m["id"].is_null() => {
                    return Err(ClientError::Protocol(
                        m["error"]["message"].as_str().unwrap_or("error").to_owned(),
                    ));
                }
                // Events for an earlier request of this client (an approval granted elsewhere).
                _ => events.push(m),
            }
        }
    }

    /// Give up waiting after `timeout` on reads.
    ///
    /// # Errors
    /// The socket refused the setting.
    pub fn set_timeout(&self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.stream.set_read_timeout(timeout)?;
        Ok(())
    }
}

/// The sending half of a [`Client::split`] connection.
pub struct Sender {
    stream: TcpStream,
    sealer: Option<Sealer>,
    next_id: u64,
}

impl Sender {
    /// The id the next request sent will have.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Send `request`; its id, which the events and the reply for it carry.
    ///
    /// # Errors
    /// The connection broke.
    pub fn send(&mut self, request: &Request) -> Result<Value, ClientError> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let bytes = serde_json::to_vec(&request.frame(&id))?;
        let frame = protocol::encode(&bytes, self.sealer.as_mut())?;
        self.stream.write_all(&frame)?;
        Ok(id)
    }
}

/// The reading half of a [`Client::split`] connection.
pub struct Reader {
    stream: TcpStream,
    opener: Option<Opener>,
    buf: Vec<u8>,
}

impl Reader {
    /// Read the next message (an event, a reply, an error), whichever request it is for.
    ///
    /// # Errors
    /// The connection broke or the frame is bad.
    pub fn read(&mut self) -> Result<Value, ClientError> {
        read_frame(
            &mut self.stream,
            &mut self.buf,
            self.opener.as_mut(),
            MAX_FRAME,
            false,
        )
    }
}

/// Read one message of at most `limit` bytes from `stream` (`buf` holds what was read past the
/// last one). `refusal`: the reply to our auth, which may be the daemon's unsigned refusal (an
/// error, and nothing else).
fn read_frame(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    mut opener: Option<&mut Opener>,
    limit: usize,
    refusal: bool,
) -> Result<Value, ClientError> {
    loop {
        let unsigned = refusal && opener.is_some() && buf.get(protocol::LEN_DIGITS) == Some(&b'{');
        let opening = opener.as_deref_mut().filter(|_| !unsigned);
        match protocol::decode(buf, opening, limit) {
            Ok(Some((v, _))) if unsigned && v["type"] != "error" => {
                return Err(ClientError::Protocol(
                    "the daemon's hello is not signed: this is not the daemon that holds the key"
                        .into(),
                ));
            }
            Ok(Some((v, used))) => {
                buf.drain(..used);
                return Ok(v);
            }
            Ok(None) => {}
            Err(e) => return Err(e.into()),
        }
        let mut chunk = [0u8; 8192];
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Err(ClientError::Io(std::io::ErrorKind::UnexpectedEof.into()));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The daemon's refusal, from its error frame: [`ClientError::Busy`] when it says it has no
/// room for us now.
fn refusal(message: &Value, otherwise: &str) -> ClientError {
    let text = message["error"]["message"]
        .as_str()
        .unwrap_or(otherwise)
        .to_owned();
    if message["type"] == "error" && message["error"]["kind"] == "busy" {
        ClientError::Busy(text)
    } else {
        ClientError::Protocol(text)
    }
}
