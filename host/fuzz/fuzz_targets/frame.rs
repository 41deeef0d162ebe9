#![no_main]
//! The frame parser must never panic or read past its input, signed or not, and what it
//! accepts must encode back to an equal value.

use libfuzzer_sys::fuzz_target;
use passepartout::daemon::protocol::{
    Direction, LEN_DIGITS, MAC_DIGITS, MAX_FRAME, Nonce, Secret, decode, encode,
};

fuzz_target!(|data: &[u8]| {
    let (signed, bytes) = match data.split_first() {
        Some((flag, rest)) => (flag & 1 == 1, rest),
        None => return,
    };
    let Ok(nonce) = Nonce::parse(&"ab".repeat(32)) else {
        return;
    };
    let mut opener = Secret::new(b"fuzz")
        .session(&nonce, &nonce)
        .opener(Direction::ToServer);
    if let Ok(Some((value, used))) = decode(bytes, signed.then_some(&mut opener), MAX_FRAME) {
        assert!(used <= bytes.len());
        let start = LEN_DIGITS + if signed { MAC_DIGITS } else { 0 };
        let again = encode(&bytes[start..used], None).expect("an accepted payload encodes");
        let (v2, _) = decode(&again, None, MAX_FRAME).expect("decodes").expect("whole");
        assert_eq!(value, v2);
    }
});
