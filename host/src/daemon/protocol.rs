//! The wire protocol, version 2 (docs/protocol.md): a frame is a 6-digit lowercase hex length,
//! then, once a connection is authenticated, 64 lowercase hex digits of a signature, then the
//! payload (JSON). The length limits a frame to 16 MiB - 1; a daemon may set a lower limit.
//!
//! A signature is HMAC-SHA256 under the connection's own key (derived from the shared secret
//! and a nonce from each side) over the direction, the frame's sequence number and the payload:
//! a frame recorded on one connection means nothing on another, and a frame replayed, dropped
//! or reordered on its own connection fails its check.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Digits of the length prefix.
pub const LEN_DIGITS: usize = 6;
/// Hex digits of a signature.
pub const MAC_DIGITS: usize = 64;
/// The largest payload six hex digits can announce.
pub const MAX_FRAME: usize = 0xff_ffff;
/// The protocol version this build speaks.
pub const VERSION: u32 = 2;
/// Every version this build speaks (a hello with another is refused with this list).
pub const SUPPORTED: &[u32] = &[VERSION];
/// The largest frame accepted before a connection has authenticated (the hello, the auth).
pub const HANDSHAKE_FRAME: usize = 4096;
/// Bytes of a nonce.
pub const NONCE_BYTES: usize = 32;

/// Why a frame was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The length prefix is not 6 lowercase hex digits.
    #[error("the frame length {0:?} is not 6 lowercase hex digits")]
    BadLength(String),
    /// The frame announces more than the limit.
    #[error("the frame announces {size} bytes, over the limit of {limit}")]
    TooLarge {
        /// Announced.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The connection ended inside a frame.
    #[error("the connection ended in the middle of a frame")]
    ShortRead,
    /// A frame without a signature on a connection that signs.
    #[error(
        "the frame is not signed: after the handshake every frame carries 64 lowercase hex digits of signature before its payload (docs/protocol.md)"
    )]
    Unsigned,
    /// The signature is not 64 lowercase hex digits, or does not match.
    #[error(
        "the frame's signature is wrong: a wrong secret, or a frame replayed, reordered or taken from another connection"
    )]
    BadSignature,
    /// The payload is not UTF-8 JSON.
    #[error("the payload is not JSON: {0}")]
    BadJson(String),
    /// A well-formed message this daemon does not understand.
    #[error("{0}")]
    BadMessage(String),
    /// A hello with a protocol version this daemon does not speak.
    #[error("{0}")]
    Unsupported(String),
    /// The daemon has no room for this frame now.
    #[error("{0}")]
    Busy(String),
    /// Nothing arrived within the read timeout.
    #[error("no frame arrived within {0} s")]
    Timeout(u64),
}

/// A shared secret: the client secret or the approver key. Never printed.
#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(***)")
    }
}

fn keyed(key: &[u8]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length; this cannot fail.
    <Hmac<Sha256> as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!("any key length"))
}

impl Secret {
    /// A secret of these bytes.
    pub fn new(bytes: &[u8]) -> Secret {
        Secret(bytes.to_vec())
    }

    /// Whether `other` is the same secret (a check of the daemon's own configuration at start,
    /// where no client can time it).
    pub fn same_as(&self, other: &Secret) -> bool {
        self.0 == other.0
    }

    fn derive(&self, label: &[u8], client: &Nonce, server: &Nonce) -> [u8; 32] {
        let mut m = keyed(&self.0);
        m.update(label);
        m.update(&client.0);
        m.update(&server.0);
        m.finalize().into_bytes().into()
    }

    /// The key of the connection whose hellos carried these nonces.
    pub fn session(&self, client: &Nonce, server: &Nonce) -> SessionKey {
        SessionKey(self.derive(b"passepartout/2 session\0", client, server))
    }

    /// Proof, for this connection only, that the client holds this (approver) key.
    pub fn approver_proof(&self, client: &Nonce, server: &Nonce) -> String {
        hex::encode(self.derive(b"passepartout/2 approver\0", client, server))
    }

    /// The key of an approver's connection after its auth frame: the connection's key, bound
    /// to this (approver) key too, so that a holder of the client key alone can neither sign
    /// for an approver nor relay one's session.
    pub fn approver_session(&self, session: &SessionKey) -> SessionKey {
        let mut m = keyed(&self.0);
        m.update(b"passepartout/2 approver session\0");
        m.update(&session.0);
        SessionKey(m.finalize().into_bytes().into())
    }

    /// Whether `presented` is this secret, compared in constant time (the MCP HTTP transport's
    /// bearer token is the client key itself): both are keyed into an HMAC of the same label,
    /// so the comparison's time says nothing about how much of `presented` was right.
    pub fn is(&self, presented: &[u8]) -> bool {
        let label = b"passepartout/2 bearer\0";
        let mut expected = keyed(&self.0);
        expected.update(label);
        let mut candidate = keyed(presented);
        candidate.update(label);
        // The lengths too: HMAC pads a short key with zeros, so `k` and `k\0` key alike.
        presented.len() == self.0.len()
            && candidate
                .verify_slice(&expected.finalize().into_bytes())
                .is_ok()
    }

    /// Whether `proof` is [`Secret::approver_proof`] for these nonces (constant time).
    pub fn check_approver_proof(&self, client: &Nonce, server: &Nonce, proof: &str) -> bool {
        let Some(bytes) = lowercase_hex(proof.as_bytes()) else {
            return false;
        };
        let mut m = keyed(&self.0);
        m.update(b"passepartout/2 approver\0");
        m.update(&client.0);
        m.update(&server.0);
        m.verify_slice(&bytes).is_ok()
    }
}

/// A hello's nonce: 32 random bytes, 64 lowercase hex digits on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nonce([u8; NONCE_BYTES]);

impl Nonce {
    /// A fresh nonce.
    ///
    /// # Errors
    /// The system has no randomness.
    pub fn random() -> Result<Nonce, getrandom::Error> {
        let mut bytes = [0u8; NONCE_BYTES];
        getrandom::fill(&mut bytes)?;
        Ok(Nonce(bytes))
    }

    /// Parse 64 lowercase hex digits.
    ///
    /// # Errors
    /// What is wrong with it, for the peer.
    pub fn parse(text: &str) -> Result<Nonce, ProtocolError> {
        lowercase_hex(text.as_bytes())
            .and_then(|b| <[u8; NONCE_BYTES]>::try_from(b).ok())
            .map(Nonce)
            .ok_or_else(|| {
                ProtocolError::BadMessage(
                    "the hello's `nonce` must be 64 lowercase hex digits (32 random bytes)".into(),
                )
            })
    }

    /// 64 lowercase hex digits.
    pub fn hex(&self) -> String {
        hex::encode(self.0)
    }
}

/// Which way a frame goes: part of what is signed, so a frame cannot be reflected back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Client to daemon.
    ToServer,
    /// Daemon to client.
    ToClient,
}

/// A connection's key (see [`Secret::session`]).
#[derive(Clone)]
pub struct SessionKey([u8; 32]);

impl SessionKey {
    fn mac(&self, direction: Direction) -> Signing {
        Signing {
            mac: keyed(&self.0),
            direction: match direction {
                Direction::ToServer => b'c',
                Direction::ToClient => b's',
            },
            seq: 0,
        }
    }

    /// What signs frames going `direction` (the sender's side).
    pub fn sealer(&self, direction: Direction) -> Sealer {
        Sealer(self.mac(direction))
    }

    /// What checks frames coming `direction` (the receiver's side).
    pub fn opener(&self, direction: Direction) -> Opener {
        Opener(self.mac(direction))
    }
}

struct Signing {
    /// Keyed once; cloned per frame.
    mac: Hmac<Sha256>,
    direction: u8,
    seq: u64,
}

impl Signing {
    fn over(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut m = self.mac.clone();
        m.update(&[self.direction]);
        m.update(&self.seq.to_be_bytes());
        m.update(payload);
        m
    }
}

/// Signs one direction's frames, each with the next sequence number.
pub struct Sealer(Signing);

impl Sealer {
    /// The signature of the next frame, `payload`: 64 lowercase hex digits.
    pub fn sign(&mut self, payload: &[u8]) -> String {
        let out = hex::encode(self.0.over(payload).finalize().into_bytes());
        self.0.seq += 1;
        out
    }
}

/// Checks one direction's frames, in order.
pub struct Opener(Signing);

impl Opener {
    /// Check `signature` over the next frame, `payload`, in constant time.
    ///
    /// # Errors
    /// [`ProtocolError::BadSignature`]: wrong key, wrong place in the sequence, or not 64
    /// lowercase hex digits.
    pub fn verify(&mut self, payload: &[u8], signature: &[u8]) -> Result<(), ProtocolError> {
        let bytes = lowercase_hex(signature)
            .filter(|b| b.len() == 32)
            .ok_or(ProtocolError::BadSignature)?;
        self.0
            .over(payload)
            .verify_slice(&bytes)
            .map_err(|_| ProtocolError::BadSignature)?;
        self.0.seq += 1;
        Ok(())
    }
}

/// Decode hex that is lowercase only, as the protocol says.
fn lowercase_hex(text: &[u8]) -> Option<Vec<u8>> {
    text.iter()
        .all(|b| is_lower_hex(*b))
        .then(|| hex::decode(text).ok())
        .flatten()
}

/// About how many bytes `value` takes in memory once parsed: what each array, object and
/// string allocates. What a frame costs the daemon is this, not its size: `[0,0,…]` takes ~16
/// times its bytes once read, `[{"":0},…]` ~90 times.
///
/// An array's values sit in a `Vec` grown by doubling (at least 4 slots); an object's entries
/// in the nodes of a `BTreeMap`, each with room for 11 keys and values however few it holds
/// (one entry takes a whole node, ~630 bytes), and a map built entry by entry leaves its nodes
/// about half full; a string's bytes are allocated in steps of 8.
pub fn parsed_size(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    const SLOT: usize = std::mem::size_of::<Value>();
    const KEY: usize = std::mem::size_of::<String>();
    // The keys and the values, and the node's parent link, place in it and length.
    const NODE: usize = NODE_ENTRIES * (KEY + SLOT) + 2 * std::mem::size_of::<usize>();
    /// Entries of a B-tree node that is not the only one, at least (std splits a full node
    /// of 11 into 5 and 6).
    const NODE_FILLED: usize = 5;
    let text = |len: usize| len.next_multiple_of(8);
    // The value itself, wherever it is held.
    let mut total = SLOT;
    // Iterative: a deep frame cannot overflow the stack here.
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::String(s) => total = total.saturating_add(text(s.len())),
            Value::Array(items) if !items.is_empty() => {
                let slots = items.len().next_power_of_two().max(4);
                total = total.saturating_add(slots.saturating_mul(SLOT));
                stack.extend(items.iter());
            }
            Value::Object(map) if !map.is_empty() => {
                let nodes = if map.len() <= NODE_ENTRIES {
                    1
                } else {
                    map.len().div_ceil(NODE_FILLED)
                };
                total = total.saturating_add(nodes.saturating_mul(NODE));
                for (k, v) in map {
                    total = total.saturating_add(text(k.len()));
                    stack.push(v);
                }
            }
            _ => {}
        }
    }
    total
}

/// Keys and values a node of the standard library's `BTreeMap` (what an object parses into)
/// has room for.
const NODE_ENTRIES: usize = 11;

/// Whether `b` is a lowercase hex digit.
pub fn is_lower_hex(b: u8) -> bool {
    b.is_ascii_digit() || (b'a'..=b'f').contains(&b)
}

/// Encode `payload` as a frame, signed by `sealer` when the connection signs.
///
/// # Errors
/// [`ProtocolError::TooLarge`] for a payload over [`MAX_FRAME`].
pub fn encode(payload: &[u8], sealer: Option<&mut Sealer>) -> Result<Vec<u8>, ProtocolError> {
    if payload.len() > MAX_FRAME {
        return Err(ProtocolError::TooLarge {
            size: payload.len(),
            limit: MAX_FRAME,
        });
    }
    let mut out = Vec::with_capacity(LEN_DIGITS + MAC_DIGITS + payload.len());
    out.extend_from_slice(format!("{:06x}", payload.len()).as_bytes());
    if let Some(s) = sealer {
        out.extend_from_slice(s.sign(payload).as_bytes());
    }
    out.extend_from_slice(payload);
    Ok(out)
}

/// Read the length prefix.
///
/// # Errors
/// [`ProtocolError::BadLength`] or [`ProtocolError::TooLarge`].
pub fn parse_len(prefix: &[u8], limit: usize) -> Result<usize, ProtocolError> {
    let ok = prefix.len() == LEN_DIGITS && prefix.iter().all(|b| is_lower_hex(*b));
    if !ok {
        return Err(ProtocolError::BadLength(
            String::from_utf8_lossy(prefix).into_owned(),
        ));
    }
    let text = std::str::from_utf8(prefix).map_err(|_| ProtocolError::BadLength(String::new()))?;
    let size =
        usize::from_str_radix(text, 16).map_err(|_| ProtocolError::BadLength(text.to_owned()))?;
    if size > limit {
        return Err(ProtocolError::TooLarge { size, limit });
    }
    Ok(size)
}

/// Decode one whole frame held in `buf`: the JSON payload and the bytes consumed. `Ok(None)`
/// when `buf` holds only part of a frame so far. With an `opener`, the frame must be signed (a
/// payload where the signature belongs is [`ProtocolError::Unsigned`] as soon as its first
/// byte is there). This is what the fuzz target exercises.
///
/// # Errors
/// Any [`ProtocolError`] but `ShortRead` and `Timeout`.
pub fn decode(
    buf: &[u8],
    opener: Option<&mut Opener>,
    limit: usize,
) -> Result<Option<(serde_json::Value, usize)>, ProtocolError> {
    if buf.len() < LEN_DIGITS {
        return Ok(None);
    }
    let size = parse_len(&buf[..LEN_DIGITS], limit)?;
    let mac_len = if opener.is_some() { MAC_DIGITS } else { 0 };
    let mac_end = (LEN_DIGITS + mac_len).min(buf.len());
    if !buf[LEN_DIGITS..mac_end].iter().all(|b| is_lower_hex(*b)) {
        return Err(if buf[LEN_DIGITS].is_ascii_hexdigit() {
            ProtocolError::BadSignature
        } else {
            ProtocolError::Unsigned
        });
    }
    let total = LEN_DIGITS + mac_len + size;
    if buf.len() < total {
        return Ok(None);
    }
    let payload = &buf[LEN_DIGITS + mac_len..total];
    if let Some(o) = opener {
        o.verify(payload, &buf[LEN_DIGITS..LEN_DIGITS + mac_len])?;
    }
    let value =
        serde_json::from_slice(payload).map_err(|e| ProtocolError::BadJson(e.to_string()))?;
    Ok(Some((value, total)))
}

#[cfg(test)]
mod tests;
