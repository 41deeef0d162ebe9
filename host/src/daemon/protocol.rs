//! The wire protocol (docs/protocol.md): a frame is a 6-digit lowercase hex length, then, with
//! HMAC on, 64 hex digits of HMAC-SHA256 over the payload, then the payload (JSON). The length
//! limits a frame to 16 MiB - 1; a daemon may set a lower limit.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// Digits of the length prefix.
pub const LEN_DIGITS: usize = 6;
/// Hex digits of the HMAC.
pub const MAC_DIGITS: usize = 64;
/// The largest payload six hex digits can announce.
pub const MAX_FRAME: usize = 0xff_ffff;
/// The protocol version in the hello.
pub const VERSION: u32 = 1;

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
    /// The HMAC is not 64 hex digits, or does not match.
    #[error("the frame's HMAC-SHA256 signature is wrong")]
    BadSignature,
    /// The payload is not UTF-8 JSON.
    #[error("the payload is not JSON: {0}")]
    BadJson(String),
    /// A well-formed message this daemon does not understand.
    #[error("{0}")]
    BadMessage(String),
    /// Nothing arrived within the read timeout.
    #[error("no frame arrived within {0} s")]
    Timeout(u64),
}

/// The HMAC key, when HMAC is on.
#[derive(Clone)]
pub struct Signer {
    key: Vec<u8>,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signer(***)")
    }
}

impl Signer {
    /// A signer with `secret`.
    pub fn new(secret: &[u8]) -> Signer {
        Signer {
            key: secret.to_vec(),
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC accepts keys of any length; this cannot fail.
        <Hmac<Sha256> as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes any key length"))
    }

    /// The signature of `payload`, 64 lowercase hex digits.
    pub fn sign(&self, payload: &[u8]) -> String {
        let mut m = self.mac();
        m.update(payload);
        hex::encode(m.finalize().into_bytes())
    }

    /// Check `signature` (hex) over `payload` in constant time.
    ///
    /// # Errors
    /// [`ProtocolError::BadSignature`].
    pub fn verify(&self, payload: &[u8], signature: &[u8]) -> Result<(), ProtocolError> {
        let bytes = std::str::from_utf8(signature)
            .ok()
            .and_then(|s| hex::decode(s).ok())
            .ok_or(ProtocolError::BadSignature)?;
        let mut m = self.mac();
        m.update(payload);
        m.verify_slice(&bytes)
            .map_err(|_| ProtocolError::BadSignature)
    }
}

/// Encode `payload` as a frame.
///
/// # Errors
/// [`ProtocolError::TooLarge`] for a payload over [`MAX_FRAME`].
pub fn encode(payload: &[u8], signer: Option<&Signer>) -> Result<Vec<u8>, ProtocolError> {
    if payload.len() > MAX_FRAME {
        return Err(ProtocolError::TooLarge {
            size: payload.len(),
            limit: MAX_FRAME,
        });
    }
    let mut out = format!("{:06x}", payload.len()).into_bytes();
    if let Some(s) = signer {
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
    let ok = prefix.len() == LEN_DIGITS
        && prefix
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
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
/// when `buf` holds only part of a frame so far. This is what the fuzz target exercises.
///
/// # Errors
/// Any [`ProtocolError`] but `ShortRead` and `Timeout`.
pub fn decode(
    buf: &[u8],
    signer: Option<&Signer>,
    limit: usize,
) -> Result<Option<(serde_json::Value, usize)>, ProtocolError> {
    if buf.len() < LEN_DIGITS {
        return Ok(None);
    }
    let size = parse_len(&buf[..LEN_DIGITS], limit)?;
    let mac_len = if signer.is_some() { MAC_DIGITS } else { 0 };
    let total = LEN_DIGITS + mac_len + size;
    if buf.len() < total {
        return Ok(None);
    }
    let payload = &buf[LEN_DIGITS + mac_len..total];
    if let Some(s) = signer {
        s.verify(payload, &buf[LEN_DIGITS..LEN_DIGITS + mac_len])?;
    }
    let value =
        serde_json::from_slice(payload).map_err(|e| ProtocolError::BadJson(e.to_string()))?;
    Ok(Some((value, total)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_frame_round_trips_with_and_without_hmac() {
        let payload = br#"{"type":"hello","version":1}"#;
        for signer in [None, Some(Signer::new(b"secret"))] {
            let frame = encode(payload, signer.as_ref()).expect("encode");
            let (v, used) = decode(&frame, signer.as_ref(), MAX_FRAME)
                .expect("decode")
                .expect("whole");
            assert_eq!(used, frame.len());
            assert_eq!(v["type"], "hello");
        }
        assert_eq!(&encode(b"{}", None).expect("encode")[..6], b"000002");
    }

    #[test]
    fn bad_frames_are_named() {
        assert!(matches!(
            decode(b"zzzzzz{}", None, MAX_FRAME),
            Err(ProtocolError::BadLength(_))
        ));
        assert!(
            matches!(
                decode(b"00000A{}", None, MAX_FRAME),
                Err(ProtocolError::BadLength(_))
            ),
            "uppercase is not the protocol"
        );
        assert!(matches!(
            decode(b"000100", None, 16),
            Err(ProtocolError::TooLarge {
                size: 256,
                limit: 16
            })
        ));
        assert!(
            matches!(decode(b"000004{x", None, MAX_FRAME), Ok(None)),
            "part of a frame: wait for more"
        );
        assert!(matches!(
            decode(b"000002}{", None, MAX_FRAME),
            Err(ProtocolError::BadJson(_))
        ));
        let signer = Signer::new(b"right");
        let frame = encode(b"{}", Some(&Signer::new(b"wrong"))).expect("encode");
        assert_eq!(
            decode(&frame, Some(&signer), MAX_FRAME),
            Err(ProtocolError::BadSignature)
        );
        let mut tampered = encode(b"[1]", Some(&signer)).expect("encode");
        let last = tampered.len() - 2;
        tampered[last] = b'2';
        assert_eq!(
            decode(&tampered, Some(&signer), MAX_FRAME),
            Err(ProtocolError::BadSignature)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// The fuzz target's property, on a bounded number of generated inputs: the parser
        /// never panics, never reads past its input, and only accepts what encodes back.
        #[test]
        fn the_frame_parser_survives_arbitrary_input(bytes in proptest::collection::vec(any::<u8>(), 0..512), hmac in any::<bool>()) {
            let signer = hmac.then(|| Signer::new(b"k"));
            if let Ok(Some((value, used))) = decode(&bytes, signer.as_ref(), MAX_FRAME) {
                prop_assert!(used <= bytes.len());
                let start = LEN_DIGITS + if hmac { MAC_DIGITS } else { 0 };
                let again = encode(&bytes[start..used], signer.as_ref()).expect("encode");
                let (v2, _) = decode(&again, signer.as_ref(), MAX_FRAME).expect("decode").expect("whole");
                prop_assert_eq!(value, v2);
            }
        }

        #[test]
        fn any_json_payload_round_trips(s in "\\PC{0,200}") {
            let payload = serde_json::to_vec(&serde_json::json!({ "text": s })).expect("json");
            let frame = encode(&payload, None).expect("encode");
            let (v, used) = decode(&frame, None, MAX_FRAME).expect("decode").expect("whole");
            prop_assert_eq!(used, frame.len());
            prop_assert_eq!(v["text"].as_str(), Some(s.as_str()));
        }
    }
}
