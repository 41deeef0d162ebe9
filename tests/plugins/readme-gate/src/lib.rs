//! The README's example gate, compiled from the README's own text (see build.rs).

include!(concat!(env!("OUT_DIR"), "/readme_gate.rs"));
