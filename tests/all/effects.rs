//! Gates judge what an action does (its effects, derived by the host from each tool's declared
//! schema), not how a tool spells its arguments; components built against WIT 0.1.0 keep
//! loading.

use passepartout::blocking::wait;
use passepartout::gates::Outcome;
use passepartout::pipeline::Agent;
use passepartout::runtime::{PluginSource, Policy};
use passepartout::signal::{Action, Meta, Signal};
use passepartout_tests::{
    GUARDED_TOOL_MANIFEST, GUARDED_TOOL_WASM, HOSTILE_GATE_MANIFEST, HOSTILE_GATE_WASM,
    HOSTILE_TOOL_MANIFEST, HOSTILE_TOOL_WASM, OLD_GATE_MANIFEST, OLD_GATE_WASM,
    PYTHON_DOC_GATE_MANIFEST, PYTHON_DOC_GATE_WASM, README_GATE_MANIFEST, README_GATE_WASM, source,
};
use serde_json::json;

use crate::fresh_runtime;

/// A third-party tool that runs programs under its own argument names, declaring them.
fn runner() -> PluginSource {
    source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| {
        format!(
            "{m}\n[config]\nextra = [{{ name = \"runner\", parameters = {:?} }}]\n",
            r#"{"type":"object","properties":{"exe":{"type":"string","x-effect":"program"},"params":{"type":"array","items":{"type":"string"},"x-effect":"argv"},"out":{"type":"string","x-effect":"path-write"}}}"#
        )
    })
}

fn pipeline(extra: Vec<PluginSource>, policy: &str) -> (Agent, tempfile::TempDir) {
    let (rt, cache) = fresh_runtime();
    let mut sources = crate::builtins(&["shell"]);
    sources.extend(extra);
    let report = rt.load_all(&sources, &Policy::parse(policy).expect("policy"));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let p = crate::pipeline_of(report);
    (p, cache)
}

fn action(value: serde_json::Value) -> Action {
    let mut a: Action = serde_json::from_value(value).expect("action");
    a.resolve_target(Some("cli"), "cli");
    a
}

fn request() -> Signal {
    Signal::request(
        serde_json::from_value(json!({})).expect("an action"),
        Meta::from_source("cli"),
    )
}

fn shell_policy(dir: &std::path::Path) -> String {
    format!(
        "[plugins.shell]\nprocess = [\"ls\", \"sudo\"]\nfs = [{{ guest = \"/workspace\", host = {:?}, access = \"read-write\" }}]\n",
        dir.display().to_string()
    )
}

#[test]
fn the_readme_gate_rejects_sudo_on_the_real_shell_tool_and_on_any_tool_that_declares_it() {
    documented_gate_rejects_sudo(source(README_GATE_WASM, README_GATE_MANIFEST, |m| m));
}

#[test]
fn the_python_documentation_gate_does_the_same() {
    documented_gate_rejects_sudo(source(
        PYTHON_DOC_GATE_WASM,
        PYTHON_DOC_GATE_MANIFEST,
        |m| m,
    ));
}

/// A documented example gate (named `no-sudo`): sudo refused on the real shell tool and on a
/// third-party tool that spells its arguments otherwise; other programs pass.
fn documented_gate_rejects_sudo(gate: PluginSource) {
    let dir = tempfile::tempdir().expect("dir");
    let (p, _cache) = pipeline(vec![gate, runner()], &shell_policy(dir.path()));
    let verdict = |a: serde_json::Value| wait(p.verify(&action(a), &request())).outcome;
    let rejected_by_readme =
        |o: &Outcome| matches!(o, Outcome::Rejected { gate, .. } if gate == "no-sudo");
    let o = verdict(json!({"tool": "shell", "args": {"program": "sudo", "args": ["ls"]}}));
    assert!(rejected_by_readme(&o), "{o:?}");
    let o = verdict(json!({"tool": "runner", "args": {"exe": "sudo", "params": ["ls"]}}));
    assert!(
        rejected_by_readme(&o),
        "the same gate, another tool's spelling: {o:?}"
    );
    let o = verdict(json!({"tool": "shell", "args": {"program": "ls", "args": ["-l"]}}));
    assert!(matches!(o, Outcome::Passed(_)), "{o:?}");
}

#[test]
fn the_host_derives_effects_from_the_declared_schema_with_host_paths() {
    let dir = tempfile::tempdir().expect("dir");
    let policy = format!(
        "{}[plugins.hostile-tool]\nfs = [{{ guest = \"/data\", host = {:?}, access = \"read-write\" }}]\n",
        shell_policy(dir.path()),
        dir.path().display().to_string()
    );
    let (p, _cache) = pipeline(vec![runner()], &policy);
    let ctx = p.catalog().context(&action(json!({
        "tool": "runner",
        "args": {"exe": "git", "params": ["push", "--force"], "out": "/data/x/../log.txt"}
    })));
    let tool = ctx.tool.expect("identity");
    assert_eq!(
        (
            tool.plugin.as_str(),
            tool.tool.as_str(),
            tool.read_only,
            tool.declares_effects
        ),
        ("hostile-tool", "runner", false, true)
    );
    assert_eq!(ctx.effects.programs[0].program, "git");
    assert_eq!(ctx.effects.programs[0].argv, ["push", "--force"]);
    assert_eq!(ctx.effects.writes[0].guest, "/data/x/../log.txt");
    assert_eq!(
        ctx.effects.writes[0].host.as_deref(),
        Some(dir.path().join("log.txt").to_string_lossy().as_ref())
    );
    // The built-in shell tool's own spelling.
    let ctx = p.catalog().context(&action(json!({
        "tool": "shell", "args": {"program": "ls", "args": ["-a"]}
    })));
    assert_eq!(ctx.tool.expect("shell").plugin, "shell");
    assert_eq!(ctx.effects.programs[0].argv, ["-a"]);
    // A tool that declares nothing is opaque.
    let ctx = p.catalog().context(&action(
        json!({"tool": "write", "args": {"path": "/data/a"}}),
    ));
    assert!(!ctx.tool.expect("write").declares_effects);
    assert!(ctx.effects.writes.is_empty());
}

#[test]
fn effects_declared_wrongly_refuse_the_plugin_naming_the_rule() {
    let (rt, _cache) = fresh_runtime();
    for (schema, needle) in [
        (
            r#"{"type":"object","properties":{"p":{"type":"string","x-effect":"teleport"}}}"#,
            "teleport",
        ),
        (
            r#"{"type":"object","properties":{"a":{"type":"array","x-effect":"argv"}}}"#,
            "none declares \"program\"",
        ),
        (
            r#"{"type":"object","properties":{"n":{"type":"integer","x-effect":"path-read"}}}"#,
            "must be",
        ),
    ] {
        let src = source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| {
            format!("{m}\n[config]\nextra = [{{ name = \"bad\", parameters = {schema:?} }}]\n")
        });
        let report = rt.load_all(&[src], &Policy::default());
        let err = report
            .errors
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(
            err.contains("hostile-tool") && err.contains("\"bad\"") && err.contains(needle),
            "{schema}: {err}"
        );
    }
}

#[test]
fn a_gate_built_against_wit_0_1_0_still_loads_and_works() {
    let (rt, _cache) = fresh_runtime();
    let report = rt.load_all(
        &[source(OLD_GATE_WASM, OLD_GATE_MANIFEST, |m| m)],
        &Policy::default(),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let (_, exports) = (
        (),
        rt.inspect(&std::fs::read(OLD_GATE_WASM).expect("wasm"))
            .expect("inspect")
            .0
            .exports,
    );
    assert_eq!(exports, ["passepartout:plugin/gate@0.1.0"]);
    let p = crate::pipeline_of(report);
    let o = wait(p.verify(
        &action(json!({"text": "sudo make me a sandwich"})),
        &request(),
    ))
    .outcome;
    assert!(matches!(o, Outcome::Passed(_)), "args are empty: {o:?}");
    let o = wait(p.verify(
        &action(json!({"tool": "x", "args": {"cmd": "sudo ls"}})),
        &request(),
    ))
    .outcome;
    assert!(
        matches!(&o, Outcome::Rejected { gate, reason } if gate == "old-gate" && reason.contains("no sudo (config {})")),
        "{o:?}"
    );
}

#[test]
fn a_tool_that_brings_its_own_gate_loads_and_its_gate_reads_the_context() {
    let (p, _cache) = pipeline(
        vec![source(GUARDED_TOOL_WASM, GUARDED_TOOL_MANIFEST, |m| m)],
        "",
    );
    let o = wait(p.verify(
        &action(json!({"tool": "stamp", "args": {"path": "/etc/motd"}})),
        &request(),
    ))
    .outcome;
    assert!(
        matches!(&o, Outcome::Rejected { gate, reason } if gate == "guarded-tool" && reason.contains("/etc/motd")),
        "{o:?}"
    );
    let o = wait(p.verify(
        &action(json!({"tool": "stamp", "args": {"path": "/tmp/x"}})),
        &request(),
    ))
    .outcome;
    assert!(matches!(o, Outcome::Passed(_)), "{o:?}");
    let guarded = p
        .plugins()
        .iter()
        .find(|pl| pl.id.name == "guarded-tool")
        .expect("loaded");
    let out = guarded
        .call_tool("stamp", r#"{"path":"/tmp/x"}"#)
        .expect("the tool runs");
    assert!(out.contains("context writes: 0"), "{out}");
}

#[test]
fn a_tool_s_own_gate_is_asked_about_its_tools_only() {
    let (p, _cache) = pipeline(
        vec![source(GUARDED_TOOL_WASM, GUARDED_TOOL_MANIFEST, |m| m)],
        "",
    );
    let asked = |a: serde_json::Value| {
        wait(p.verify(&action(a), &request()))
            .trace
            .iter()
            .any(|g| g.gate == "guarded-tool")
    };
    assert!(asked(json!({"tool": "stamp", "args": {"path": "/tmp/x"}})));
    // Another tool's action, a reply: not its business (before, it judged every action).
    assert!(!asked(
        json!({"tool": "eval", "args": {"expression": "(+ 1 2)"}})
    ));
    assert!(!asked(json!({"target": "cli", "text": "hello"})));
}

#[test]
fn a_rewrite_into_a_guarded_tool_meets_that_tool_s_gate() {
    // The hostile gate turns a harmless `eval` into `stamp /etc/motd`: which gates apply is
    // decided again for the rewritten action, so the guarded tool's own gate judges it.
    let (p, _cache) = pipeline(
        vec![
            source(GUARDED_TOOL_WASM, GUARDED_TOOL_MANIFEST, |m| m),
            source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m),
        ],
        "",
    );
    let v = wait(p.verify(
        &action(
            json!({"tool": "eval", "args": {"do": "retool", "to": "stamp", "path": "/etc/motd"}}),
        ),
        &request(),
    ));
    assert!(
        matches!(&v.outcome, Outcome::Rejected { gate, reason } if gate == "guarded-tool" && reason.contains("/etc/motd")),
        "{:?}",
        v
    );
}
