//! A blocking client for the daemon: connect, hello, send requests, collect the events and the
//! reply that belong to each. Used by `passepartout send`, `chat`, and the tests.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use super::protocol::{self, MAX_FRAME, Signer};

/// Why talking to the daemon failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No daemon answers.
    #[error("no daemon answers at {addr}: {why}. Start one with `passepartout daemon`")]
    Unreachable {
        /// Where we tried.
        addr: String,
        /// Why.
        why: String,
    },
    /// The connection broke.
    #[error("the connection to the daemon broke: {0}")]
    Io(#[from] std::io::Error),
    /// The daemon sent something that is not the protocol, or refused ours.
    #[error("protocol: {0}")]
    Protocol(String),
}

/// A connection to the daemon.
pub struct Client {
    stream: TcpStream,
    signer: Option<Signer>,
    buf: Vec<u8>,
    next_id: u64,
    /// The daemon's hello.
    pub hello: Value,
}

impl Client {
    /// Connect to `addr` and exchange hellos.
    ///
    /// # Errors
    /// [`ClientError::Unreachable`] when nothing listens; a protocol error when the hello fails
    /// (a wrong HMAC secret shows here).
    pub fn connect(addr: &str, signer: Option<Signer>) -> Result<Client, ClientError> {
        let stream = TcpStream::connect(addr).map_err(|e| ClientError::Unreachable {
            addr: addr.into(),
            why: e.to_string(),
        })?;
        stream.set_nodelay(true)?;
        let mut c = Client {
            stream,
            signer,
            buf: Vec::new(),
            next_id: 1,
            hello: Value::Null,
        };
        c.send(&json!({ "type": "hello", "version": protocol::VERSION, "client": "passepartout-cli", "capabilities": ["events"] }))?;
        let hello = c.read()?;
        if hello["type"] != "hello" {
            return Err(ClientError::Protocol(
                hello["error"]["message"]
                    .as_str()
                    .unwrap_or("the daemon did not say hello")
                    .to_owned(),
            ));
        }
        c.hello = hello;
        Ok(c)
    }

    /// Send one message.
    ///
    /// # Errors
    /// The connection broke.
    pub fn send(&mut self, message: &Value) -> Result<(), ClientError> {
        let bytes =
            serde_json::to_vec(message).map_err(|e| ClientError::Protocol(e.to_string()))?;
        let frame = protocol::encode(&bytes, self.signer.as_ref())
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        self.stream.write_all(&frame)?;
        Ok(())
    }

    /// Read one message.
    ///
    /// # Errors
    /// The connection broke or the frame is bad.
    pub fn read(&mut self) -> Result<Value, ClientError> {
        loop {
            match protocol::decode(&self.buf, self.signer.as_ref(), MAX_FRAME) {
                Ok(Some((v, used))) => {
                    self.buf.drain(..used);
                    return Ok(v);
                }
                Ok(None) => {}
                Err(e) => return Err(ClientError::Protocol(e.to_string())),
            }
            let mut chunk = [0u8; 8192];
            let n = self.stream.read(&mut chunk)?;
            if n == 0 {
                return Err(ClientError::Io(std::io::ErrorKind::UnexpectedEof.into()));
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Send request `op` with `fields`, and return the events for it and its reply (or error).
    ///
    /// # Errors
    /// The connection broke.
    pub fn request(&mut self, op: &str, fields: Value) -> Result<(Vec<Value>, Value), ClientError> {
        let id = self.next_id.to_string();
        self.next_id += 1;
        let mut message = json!({ "type": "request", "id": id, "op": op });
        if let (Value::Object(m), Value::Object(f)) = (&mut message, fields) {
            m.extend(f);
        }
        self.send(&message)?;
        let mut events = Vec::new();
        loop {
            let m = self.read()?;
            match m["type"].as_str() {
                Some("event") if m["id"] == id => events.push(m),
                Some("reply" | "error") if m["id"] == id => return Ok((events, m)),
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
