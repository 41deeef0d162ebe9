//! What a load-time call (`describe`) sees of time and chance: a clock stopped at the Unix
//! epoch and a fixed cycle of bytes. The pins hold a plugin's manifest and component; what
//! `describe` returns (tool names, descriptions, effects: what the model is told and gates
//! judge by) follows from them only if it cannot look at the time or draw a random number.
//! Else a plugin reviewed and pinned could offer other tools later (a time bomb), or take
//! another plugin's tool name once installed.

use std::time::Duration;

use wasmtime_wasi::{Deterministic, HostMonotonicClock, HostWallClock, WasiCtxBuilder};

/// A clock that does not move.
struct Stopped;

impl HostWallClock for Stopped {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

impl HostMonotonicClock for Stopped {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// Every byte value in turn: the same "random" bytes at every call, none of them stuck at zero
/// (code that draws until it gets a non-zero value still ends).
fn fixed_bytes() -> Deterministic {
    Deterministic::new((0..=u8::MAX).collect())
}

/// Stop the clocks and fix the randomness of the context `builder` makes.
pub(crate) fn freeze(builder: &mut WasiCtxBuilder) {
    builder
        .wall_clock(Stopped)
        .monotonic_clock(Stopped)
        .secure_random(fixed_bytes())
        .insecure_random(fixed_bytes())
        .insecure_random_seed(0);
}
