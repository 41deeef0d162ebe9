use super::*;
use proptest::prelude::*;

fn nonce(b: u8) -> Nonce {
    Nonce([b; NONCE_BYTES])
}

/// Both ends of one connection: what the client sends with, what the daemon checks with.
fn pair(secret: &[u8], cn: u8, sn: u8) -> (Sealer, Opener) {
    let k = Secret::new(secret).session(&nonce(cn), &nonce(sn));
    (k.sealer(Direction::ToServer), k.opener(Direction::ToServer))
}

#[test]
fn a_frame_round_trips_signed_and_unsigned() {
    let payload = br#"{"type":"request","id":1}"#;
    let frame = encode(payload, None).expect("encode");
    let (v, used) = decode(&frame, None, MAX_FRAME)
        .expect("decode")
        .expect("whole");
    assert_eq!((used, v["id"].clone()), (frame.len(), serde_json::json!(1)));
    let (mut s, mut o) = pair(b"secret", 1, 2);
    for n in 0..3 {
        let frame = encode(payload, Some(&mut s)).expect("encode");
        let (_, used) = decode(&frame, Some(&mut o), MAX_FRAME)
            .unwrap_or_else(|e| panic!("frame {n}: {e}"))
            .expect("whole");
        assert_eq!(used, frame.len());
    }
    assert_eq!(&encode(b"{}", None).expect("encode")[..6], b"000002");
}

#[test]
fn a_replayed_reordered_or_foreign_frame_is_refused() {
    let (mut s, mut o) = pair(b"secret", 1, 2);
    let first = encode(b"[1]", Some(&mut s)).expect("encode");
    let second = encode(b"[2]", Some(&mut s)).expect("encode");
    // Reordered: the second before the first.
    let (_, mut fresh) = pair(b"secret", 1, 2);
    assert_eq!(
        decode(&second, Some(&mut fresh), MAX_FRAME),
        Err(ProtocolError::BadSignature)
    );
    // In order it is fine; the same frame again is a replay.
    assert!(decode(&first, Some(&mut o), MAX_FRAME).is_ok());
    assert_eq!(
        decode(&first, Some(&mut o), MAX_FRAME),
        Err(ProtocolError::BadSignature)
    );
    // Another connection (another server nonce) or another secret.
    let (_, mut other) = pair(b"secret", 1, 3);
    assert_eq!(
        decode(&first, Some(&mut other), MAX_FRAME),
        Err(ProtocolError::BadSignature)
    );
    let (_, mut wrong) = pair(b"wrong", 1, 2);
    assert_eq!(
        decode(&first, Some(&mut wrong), MAX_FRAME),
        Err(ProtocolError::BadSignature)
    );
    // Reflected: a frame the daemon sent is not a frame the client sent.
    let k = Secret::new(b"secret").session(&nonce(1), &nonce(2));
    let from_daemon = encode(b"[1]", Some(&mut k.sealer(Direction::ToClient))).expect("encode");
    assert_eq!(
        decode(
            &from_daemon,
            Some(&mut k.opener(Direction::ToServer)),
            MAX_FRAME
        ),
        Err(ProtocolError::BadSignature)
    );
}

#[test]
fn signatures_are_lowercase_hex_only_and_unsigned_frames_are_named_at_once() {
    let (mut s, _) = pair(b"secret", 1, 2);
    let frame = encode(b"{}", Some(&mut s)).expect("encode");
    let upper: Vec<u8> = frame
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (LEN_DIGITS..LEN_DIGITS + MAC_DIGITS).contains(&i) {
                b.to_ascii_uppercase()
            } else {
                *b
            }
        })
        .collect();
    assert_ne!(upper, frame, "the signature has letters");
    let (_, mut o) = pair(b"secret", 1, 2);
    assert_eq!(
        decode(&upper, Some(&mut o), MAX_FRAME),
        Err(ProtocolError::BadSignature)
    );
    let (_, mut o) = pair(b"secret", 1, 2);
    assert_eq!(
        decode(&frame, Some(&mut o), MAX_FRAME).map(|f| f.is_some()),
        Ok(true)
    );
    // Only the length and the payload's first byte have arrived: refused already.
    let (_, mut o) = pair(b"secret", 1, 2);
    assert_eq!(
        decode(b"000002{", Some(&mut o), MAX_FRAME),
        Err(ProtocolError::Unsigned)
    );
}

#[test]
fn approver_proofs_bind_key_and_connection() {
    let key = Secret::new(b"approver");
    let proof = key.approver_proof(&nonce(1), &nonce(2));
    assert!(key.check_approver_proof(&nonce(1), &nonce(2), &proof));
    assert!(
        !key.check_approver_proof(&nonce(1), &nonce(3), &proof),
        "another connection"
    );
    assert!(!Secret::new(b"client").check_approver_proof(&nonce(1), &nonce(2), &proof));
    assert!(!key.check_approver_proof(&nonce(1), &nonce(2), &proof.to_uppercase()));
    assert!(Nonce::parse(&nonce(0xab).hex()).is_ok());
    assert!(Nonce::parse(&nonce(0xab).hex().to_uppercase()).is_err());
    assert!(Nonce::parse("00").is_err());
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
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The fuzz target's property, on a bounded number of generated inputs: the parser never
    /// panics, never reads past its input, and only accepts what encodes back.
    #[test]
    fn the_frame_parser_survives_arbitrary_input(bytes in proptest::collection::vec(any::<u8>(), 0..512), signed in any::<bool>()) {
        let (mut s, mut o) = pair(b"k", 1, 2);
        if let Ok(Some((value, used))) = decode(&bytes, signed.then_some(&mut o), MAX_FRAME) {
            prop_assert!(used <= bytes.len());
            let start = LEN_DIGITS + if signed { MAC_DIGITS } else { 0 };
            let again = encode(&bytes[start..used], None).expect("encode");
            let (v2, _) = decode(&again, None, MAX_FRAME).expect("decode").expect("whole");
            prop_assert_eq!(value, v2);
        }
        // What one side seals, the other opens, whatever the payload.
        let frame = encode(&bytes, Some(&mut s)).expect("encode");
        let (_, mut o) = pair(b"k", 1, 2);
        match decode(&frame, Some(&mut o), MAX_FRAME) {
            Ok(_) | Err(ProtocolError::BadJson(_)) => {}
            Err(e) => prop_assert!(false, "a sealed frame did not open: {}", e),
        }
    }

    /// Any frame with one byte of its signature or payload changed is refused.
    #[test]
    fn a_changed_byte_breaks_the_signature(payload in "\\PC{0,64}", at in any::<prop::sample::Index>(), to in any::<u8>()) {
        let json = serde_json::to_vec(&serde_json::json!({ "text": payload })).expect("json");
        let (mut s, _) = pair(b"k", 1, 2);
        let mut frame = encode(&json, Some(&mut s)).expect("encode");
        let i = LEN_DIGITS + at.index(frame.len() - LEN_DIGITS);
        prop_assume!(frame[i] != to);
        frame[i] = to;
        let (_, mut o) = pair(b"k", 1, 2);
        prop_assert!(!matches!(decode(&frame, Some(&mut o), MAX_FRAME), Ok(Some(_))));
    }
}

#[test]
fn an_approver_session_needs_the_approver_key_to_sign() {
    let client = Secret::new(b"client");
    let session = client.session(&nonce(1), &nonce(2));
    let upgraded = Secret::new(b"approver").approver_session(&session);
    // Someone with the client key alone signs with the plain session key: refused.
    let forged = encode(b"{}", Some(&mut session.sealer(Direction::ToServer))).expect("encode");
    let mut o = upgraded.opener(Direction::ToServer);
    assert_eq!(
        decode(&forged, Some(&mut o), MAX_FRAME),
        Err(ProtocolError::BadSignature)
    );
    let real = encode(b"{}", Some(&mut upgraded.sealer(Direction::ToServer))).expect("encode");
    let mut o = upgraded.opener(Direction::ToServer);
    assert!(decode(&real, Some(&mut o), MAX_FRAME).is_ok());
}

/// An object of one entry takes a whole B-tree node (room for 11 keys and values, ~630
/// bytes): a frame of many small objects is counted so, not as a slot and a key each.
#[test]
fn many_small_objects_are_counted_as_what_their_nodes_take() {
    let objects = serde_json::Value::Array(vec![serde_json::json!({ "": 0 }); 1000]);
    let node = 11 * (std::mem::size_of::<String>() + std::mem::size_of::<serde_json::Value>());
    let size = parsed_size(&objects);
    assert!(size >= 1000 * (32 + node), "{size} bytes");
    // Text takes about its bytes; zeros a slot each.
    let text = serde_json::json!({ "pad": "x".repeat(1 << 20) });
    let size = parsed_size(&text);
    assert!((1 << 20..(1 << 20) + 4096).contains(&size), "{size} bytes");
    let zeros = serde_json::Value::Array(vec![serde_json::json!(0); 30_000]);
    let size = parsed_size(&zeros);
    assert!(
        (30_000 * 32..=32_768 * 32 + 32).contains(&size),
        "{size} bytes"
    );
    // A large object: its nodes, about half full, and each key.
    let wide: serde_json::Map<String, serde_json::Value> = (0..1000)
        .map(|i| (format!("k{i:04}"), serde_json::json!(i)))
        .collect();
    let size = parsed_size(&serde_json::Value::Object(wide));
    assert!(size >= 200 * node + 1000 * 8, "{size} bytes");
}

proptest! {
    /// A bearer token is accepted only when it is the secret itself: no prefix, no extension
    /// (a zero byte appended keys an HMAC alike), no other bytes.
    #[test]
    fn a_bearer_token_is_only_the_secret(
        secret in proptest::collection::vec(any::<u8>(), 1..80),
        other in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let s = Secret::new(&secret);
        prop_assert!(s.is(&secret));
        prop_assert_eq!(s.is(&other), other == secret);
        let mut padded = secret.clone();
        padded.push(0);
        prop_assert!(!s.is(&padded));
        prop_assert!(!s.is(&secret[..secret.len() - 1]));
    }
}
