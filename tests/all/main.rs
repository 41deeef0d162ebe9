//! End-to-end tests of the plugin runtime: real components built from source, real wasmtime,
//! real files. One binary, one module per feature (as wasmtime's tests/all).

mod audit;
mod audit_diff;
mod cache;
mod confinement;
mod deadlines;
mod effects;
mod first_party;
mod gates;
mod javascript;
mod limits;
mod loading;
mod memory;
mod org_corpus;
mod pipeline;
mod programs;
mod providers;
mod standard;
mod streaming;
mod trust;

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

/// A fresh runtime whose compiled-component cache is shared by every test (entries are keyed
/// by the component's sha256, so sharing is safe; the Python gate alone takes ~15 s to
/// compile). The TempDir is a scratch directory for the test.
pub fn fresh_runtime() -> (Runtime, tempfile::TempDir) {
    let scratch = tempfile::tempdir().expect("temp dir");
    let shared = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-cache");
    (passepartout_tests::runtime(&shared), scratch)
}

/// A fresh runtime with a cache of its own (for the cache's own tests).
pub fn private_runtime() -> (Runtime, tempfile::TempDir) {
    let cache = tempfile::tempdir().expect("temp dir");
    (passepartout_tests::runtime(cache.path()), cache)
}

/// The first-party plugins named, for tests about one part of the pipeline (the standard
/// gates and skills have tests of their own).
pub fn builtins(names: &[&str]) -> Vec<passepartout::runtime::PluginSource> {
    passepartout::runtime::loader::builtin_sources()
        .into_iter()
        .filter(|s| {
            let path = s.manifest_path.to_string_lossy();
            names.iter().any(|n| path.contains(&format!("/{n}/")))
        })
        .collect()
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

/// The pipeline the CLI and daemon build over `report` (gates that did not load stand in as
/// refusing gates), with an in-memory journal and replies to `cli` collected.
pub fn pipeline_of(report: passepartout::runtime::LoadReport) -> passepartout::pipeline::Agent {
    passepartout::pipeline::Agent::from_report(
        report,
        passepartout::journal::Journal::in_memory().expect("journal"),
        passepartout::pipeline::PipelineConfig::default(),
    )
    .expect("pipeline")
    .with_actuator(
        "cli",
        passepartout::pipeline::actuators::Outbox::new().actuator("cli"),
    )
}

/// No process on this machine runs `sleep SECONDS` (a marker only the test uses).
pub fn no_process_runs(seconds: &str) {
    let marker = format!("sleep\0{seconds}");
    let found: Vec<String> = std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).into_owned())
        .filter(|c| c.contains(&marker))
        .collect();
    assert!(found.is_empty(), "left behind: {found:?}");
}
