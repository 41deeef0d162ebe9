//! End-to-end tests of the plugin runtime: real components built from source, real wasmtime,
//! real files. One binary, one module per feature (as wasmtime's tests/all).

mod audit;
mod cache;
mod confinement;
mod first_party;
mod gates;
mod limits;
mod loading;
mod pipeline;
mod providers;

use passepartout::runtime::types::{Action, SignalView};
use passepartout::runtime::{Plugin, Policy, Runtime};
use passepartout_tests::{
    HOSTILE_GATE_MANIFEST, HOSTILE_GATE_WASM, HOSTILE_TOOL_MANIFEST, HOSTILE_TOOL_WASM, source,
};

/// An action for `tool` with JSON `args`.
pub fn action(tool: &str, args: serde_json::Value) -> Action {
    Action {
        target: "tool".into(),
        tool: Some(tool.into()),
        args: args.to_string(),
        text: None,
        explanation: None,
    }
}

/// A user-input signal.
pub fn signal() -> SignalView {
    SignalView {
        kind: "event".into(),
        sensor: Some("user-input".into()),
        text: Some("please".into()),
        source: Some("test".into()),
        depth: 0,
        payload: "{}".into(),
    }
}

/// A fresh runtime with its own cache directory (kept alive by the returned TempDir).
pub fn fresh_runtime() -> (Runtime, tempfile::TempDir) {
    let cache = tempfile::tempdir().expect("temp dir");
    (passepartout_tests::runtime(cache.path()), cache)
}

/// Load the hostile tool under `policy` (TOML text).
pub fn hostile_tool(rt: &Runtime, policy: &str) -> Plugin {
    let policy = Policy::parse(policy).expect("test policy parses");
    rt.load(
        &source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| m),
        &policy,
    )
    .expect("hostile tool loads")
}

/// Load the hostile gate, its manifest edited by `edit`.
pub fn hostile_gate(rt: &Runtime, edit: impl FnOnce(String) -> String) -> Plugin {
    rt.load(
        &source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, edit),
        &Policy::default(),
    )
    .expect("hostile gate loads")
}

/// The plugin still works: its next call succeeds in a fresh instance.
pub fn still_serves(tool: &Plugin) {
    let out = tool
        .call_tool("echo", r#"{"text":"still here"}"#)
        .expect("the next call succeeds");
    assert_eq!(out, "still here");
}
