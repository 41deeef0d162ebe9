#![no_main]
//! The frame parser must never panic or read past its input, with or without HMAC, and what it
//! accepts must encode back to an equal value.

use libfuzzer_sys::fuzz_target;
use passepartout::daemon::protocol::{LEN_DIGITS, MAC_DIGITS, MAX_FRAME, Signer, decode, encode};

fuzz_target!(|data: &[u8]| {
    let (hmac, bytes) = match data.split_first() {
        Some((flag, rest)) => (flag & 1 == 1, rest),
        None => return,
    };
    let signer = hmac.then(|| Signer::new(b"fuzz"));
    if let Ok(Some((value, used))) = decode(bytes, signer.as_ref(), MAX_FRAME) {
        assert!(used <= bytes.len());
        let start = LEN_DIGITS + if hmac { MAC_DIGITS } else { 0 };
        let again = encode(&bytes[start..used], signer.as_ref()).expect("an accepted payload encodes");
        let (v2, _) = decode(&again, signer.as_ref(), MAX_FRAME).expect("decodes").expect("whole");
        assert_eq!(value, v2);
    }
});
