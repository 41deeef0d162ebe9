//! The verify invariant through the real runtime: a gate below another cannot get a rewrite
//! past it, a gate that failed to load refuses everything, and tools are known by identity
//! (first-party names reserved, names and `describe()` output checked).

use passepartout::blocking::wait;
use std::sync::Arc;

use passepartout::pipeline::{Agent, StepOutcome};
use passepartout::runtime::loader::{self, MissingGate};
use passepartout::runtime::{LoadError, Policy};
use passepartout::signal::{Meta, Signal, TraceVerdict};
use passepartout_tests::{
    HOSTILE_GATE_MANIFEST, HOSTILE_GATE_WASM, HOSTILE_TOOL_MANIFEST, HOSTILE_TOOL_WASM, source,
};
use serde_json::json;

use crate::fresh_runtime;

fn request(action: serde_json::Value) -> Signal {
    Signal::request(
        serde_json::from_value(action).expect("an action"),
        Meta::from_source("cli"),
    )
}

/// The standard gates above a capability-less smuggler at priority -1000, with the files tool
/// mounted read-write on `dir`.
fn smuggled(dir: &std::path::Path) -> (Agent, tempfile::TempDir) {
    let (rt, cache) = fresh_runtime();
    let mut sources = crate::builtins(&["secrets", "explanation", "shell-guard", "files"]);
    sources.push(source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| {
        m.replace("priority = 10", "priority = -1000")
    }));
    let policy = format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = {:?}, access = \"read-write\" }}]\n",
        dir.display().to_string()
    );
    let report = rt.load_all(&sources, &Policy::parse(&policy).expect("policy"));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let pipeline = crate::pipeline_of(report);
    (pipeline, cache)
}

#[test]
fn a_low_priority_rewrite_is_judged_by_every_gate_above_it() {
    let dir = tempfile::tempdir().expect("dir");
    let (pipeline, _cache) = smuggled(dir.path());
    let report = wait(pipeline.run(request(json!({
        "tool": "list-directory",
        "args": { "path": "/workspace" },
        "explanation": "see what is in the workspace"
    }))));
    let step = &report.steps[0];
    let StepOutcome::Rejected { gate, reason, .. } = &step.outcome else {
        panic!("the smuggled write must be refused: {:?}", step.outcome)
    };
    assert!(
        ["secrets", "explanation"].contains(&gate.as_str()),
        "refused by a gate above the smuggler, not {gate}: {reason}"
    );
    assert!(
        !dir.path().join("creds.txt").exists(),
        "the smuggled write ran"
    );
    // The trace shows both rounds: the rewrite in round 1, the refusal in round 2.
    let smuggler = step
        .trace
        .iter()
        .find(|g| g.gate == "hostile-gate" && g.verdict == TraceVerdict::Modify)
        .expect("the rewrite is in the trace");
    assert_eq!(smuggler.round, 1);
    let refusal = step.trace.last().expect("trace");
    assert_eq!(refusal.round, 2, "{:?}", step.trace);
    assert_eq!(&refusal.gate, gate);
    // The journal has every round too.
    let verdicts = pipeline.journal().records(None).expect("journal");
    assert!(
        verdicts
            .iter()
            .any(|r| r.kind == "verdict" && r.body["round"] == 2),
        "rounds are journaled"
    );
}

#[test]
fn the_last_mile_walk_restarts_too() {
    // Approve a harmless listing (an approval gate asks), then the smuggler rewrites it at the
    // last mile: what a person approved is not what would run, and the gates above refuse it.
    let dir = tempfile::tempdir().expect("dir");
    let (pipeline, _cache) = smuggled(dir.path());
    let verification = wait(
        pipeline.verify(
            &passepartout::signal::Action {
                target: "tool".into(),
                tool: Some("list-directory".into()),
                args: json!({ "path": "/workspace" })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                explanation: Some("see what is in the workspace".into()),
                ..Default::default()
            },
            &request(json!({})),
        ),
    );
    assert!(
        matches!(
            verification.outcome,
            passepartout::gates::Outcome::Rejected { .. }
        ),
        "{:?}",
        verification.outcome
    );
    assert!(!dir.path().join("creds.txt").exists());
}

#[test]
fn a_gate_that_keeps_rewriting_is_a_rejection_naming_it() {
    let dir = tempfile::tempdir().expect("dir");
    let (pipeline, _cache) = smuggled(dir.path());
    let report = wait(pipeline.run(request(json!({
        "tool": "eval",
        "args": { "do": "bump", "n": 0 },
        "explanation": "try a gate that never settles down at all"
    }))));
    let StepOutcome::Rejected { gate, reason, .. } = &report.steps[0].outcome else {
        panic!("{:?}", report.steps[0].outcome)
    };
    assert_eq!(gate, "hostile-gate");
    assert!(
        reason.contains("kept rewriting") && reason.contains("hostile-gate"),
        "{reason}"
    );
    let rounds = report.steps[0].trace.iter().map(|g| g.round).max();
    assert_eq!(rounds, Some(passepartout::gates::MAX_ROUNDS));
}

fn garbage_gate_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("dir");
    let garbage = dir.path().join("garbage");
    std::fs::create_dir(&garbage).expect("mkdir");
    std::fs::write(
        garbage.join("plugin.toml"),
        "name = \"garbage\"\nversion = \"1.0.0\"\nkinds = [\"gate\"]\n",
    )
    .expect("write");
    std::fs::write(garbage.join("plugin.wasm"), b"\0asm but not really").expect("write");
    // Its kind cannot be read: it may be a gate.
    let unreadable = dir.path().join("unreadable");
    std::fs::create_dir(&unreadable).expect("mkdir");
    std::fs::write(unreadable.join("plugin.toml"), "kinds = [[[").expect("write");
    // A kind that does not read as one is a possible gate.
    let odd = dir.path().join("odd");
    std::fs::create_dir(&odd).expect("mkdir");
    std::fs::write(
        odd.join("plugin.toml"),
        "name = \"odd\"\nversion = \"1.0.0\"\nkinds = [\"Gate\"]\n",
    )
    .expect("write");
    // A tool that fails to load is not a gate: it only does not run.
    let tool = dir.path().join("broken-tool");
    std::fs::create_dir(&tool).expect("mkdir");
    std::fs::write(
        tool.join("plugin.toml"),
        "name = \"broken-tool\"\nversion = \"1.0.0\"\nkinds = [\"tool\"]\n",
    )
    .expect("write");
    dir
}

#[test]
fn a_gate_that_failed_to_load_refuses_every_action_until_disabled() {
    let dir = garbage_gate_dir();
    let (rt, _cache) = fresh_runtime();
    let mut sources = crate::builtins(&["eval"]);
    sources.extend(loader::dir_sources(dir.path(), &Default::default()));
    let report = rt.load_all(&sources, &Policy::default());
    let missing: Vec<&str> = report
        .missing_gates
        .iter()
        .map(|m: &MissingGate| m.name.as_str())
        .collect();
    assert_eq!(
        missing,
        ["garbage", "odd", "unreadable"],
        "{:?}",
        report.missing_gates
    );
    let pipeline = crate::pipeline_of(report);
    let report = wait(pipeline.run(request(
        json!({ "tool": "eval", "args": { "expression": "(+ 1 2)" } }),
    )));
    let StepOutcome::Rejected { gate, reason, .. } = &report.steps[0].outcome else {
        panic!("refused: {:?}", report.steps[0].outcome)
    };
    assert_eq!(gate, "garbage");
    assert!(
        reason.contains("did not load") && reason.contains("enabled = false"),
        "{reason}"
    );

    // Disabled explicitly, they are no longer missing and eval runs.
    let policy = Policy::parse(
        "[plugins.garbage]\nenabled = false\n[plugins.unreadable]\nenabled = false\n\
         [plugins.odd]\nenabled = false\n",
    )
    .expect("policy");
    let mut sources = crate::builtins(&["eval"]);
    sources.extend(loader::dir_sources(dir.path(), &Default::default()));
    let report = rt.load_all(&sources, &policy);
    assert!(
        report.missing_gates.is_empty(),
        "{:?}",
        report.missing_gates
    );
    assert!(
        report.disabled.iter().any(
            |d| matches!(d, LoadError::DisabledByPolicy { plugin } if plugin.name == "garbage")
        ),
        "{:?}",
        report.disabled
    );
    let pipeline = crate::pipeline_of(report);
    let report = wait(pipeline.run(request(
        json!({ "tool": "eval", "args": { "expression": "(+ 1 2)" } }),
    )));
    assert!(
        matches!(&report.steps[0].outcome, StepOutcome::Ran { result, .. } if result.contains('3')),
        "{:?}",
        report.steps[0].outcome
    );
}

#[test]
fn a_tampered_gate_is_missing_not_skipped() {
    let (rt, _cache) = fresh_runtime();
    let mut gate = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m);
    gate.pin = Some("0".repeat(64));
    let report = rt.load_all(&[gate], &Policy::default());
    assert_eq!(report.missing_gates.len(), 1);
    assert!(
        report.missing_gates[0]
            .why
            .contains("changed after install"),
        "{:?}",
        report.missing_gates
    );
}

#[test]
fn a_pinned_gate_whose_changed_manifest_says_it_is_something_else_is_still_missing() {
    let (rt, _cache) = fresh_runtime();
    let installed = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m);
    let pin = passepartout::runtime::pins::record(&installed.manifest, &installed.component);
    // Changed after install to say it is a tool, or to ask what a gate may not (which fails
    // before anything else is looked at), or unchanged in what it says while the operator
    // turned it off.
    type Edit = fn(String) -> String;
    let cases: [(&str, Edit, &str); 3] = [
        (
            "a tool",
            |m| m.replace(r#"kinds = ["gate"]"#, r#"kinds = ["tool"]"#),
            "",
        ),
        (
            "asking for HOME",
            |m| format!("{m}\n[capabilities]\nenv = [\"HOME\"]\n"),
            "",
        ),
        (
            "turned off",
            |m| format!("{m}\n# touched\n"),
            "[plugins.hostile-gate]\nenabled = false\n",
        ),
    ];
    for (edit, change, policy) in cases {
        let mut changed = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, change);
        assert_ne!(changed.manifest, installed.manifest, "{edit}");
        changed.pin = Some(pin.clone());
        let report = rt.load_all(&[changed], &Policy::parse(policy).expect("policy"));
        let missing: Vec<&str> = report
            .missing_gates
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        if policy.is_empty() {
            assert_eq!(missing, ["hostile-gate"], "{edit}: {:?}", report.errors);
            assert!(
                report.missing_gates[0]
                    .why
                    .contains("changed after install"),
                "{edit}: {:?}",
                report.missing_gates
            );
        } else {
            // Turned off by the operator: not missing, and nothing of it runs.
            assert!(missing.is_empty() && report.plugins.is_empty(), "{edit}");
        }
    }
}

#[test]
fn an_installed_gate_whose_folder_no_longer_names_it_is_missing() {
    let (rt, _cache) = fresh_runtime();
    let dir = tempfile::tempdir().expect("dir");
    let installed = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m);
    let mut pins = passepartout::runtime::pins::Pins::default();
    pins.plugins.insert(
        "hostile-gate".into(),
        passepartout::runtime::pins::record(&installed.manifest, &installed.component),
    );
    let folder = dir.path().join("hostile-gate");
    std::fs::create_dir_all(&folder).expect("mkdir");
    let component = installed
        .manifest
        .lines()
        .find_map(|l| l.strip_prefix("component = "))
        .map(|c| c.trim_matches('"').to_owned())
        .expect("component line");
    std::fs::write(folder.join(&component), &installed.component).expect("write");
    // Renamed to a plugin nobody pinned (and the operator never heard of), then removed.
    let renamed = installed
        .manifest
        .replace(r#"name = "hostile-gate""#, r#"name = "harmless""#);
    std::fs::write(folder.join("plugin.toml"), &renamed).expect("write");
    let missing = |step: &str| {
        let report = rt.load_all(&loader::dir_sources(dir.path(), &pins), &Policy::default());
        assert!(
            report
                .missing_gates
                .iter()
                .any(|m| m.name == "hostile-gate" && m.why.contains("no plugin folder holds it")),
            "{step}: {:?}",
            report.missing_gates
        );
    };
    missing("renamed");
    std::fs::remove_dir_all(&folder).expect("rm");
    missing("removed");
    // Removed with its pin (`plugin remove`): nothing is missing.
    pins.plugins.clear();
    let report = rt.load_all(&loader::dir_sources(dir.path(), &pins), &Policy::default());
    assert!(
        report.missing_gates.is_empty(),
        "{:?}",
        report.missing_gates
    );
}

/// The hostile tool offering `extra` tools besides its own (through its [config]).
fn hostile_tool_offering(extra: &str) -> passepartout::runtime::PluginSource {
    source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| {
        format!("{m}\n[config]\n{extra}\n")
    })
}

fn load_error(policy: &str, extra: &str) -> String {
    let (rt, _cache) = fresh_runtime();
    let policy = Policy::parse(policy).expect("policy");
    let report = rt.load_all(&[hostile_tool_offering(extra)], &policy);
    assert!(report.plugins.is_empty(), "loaded: {extra}");
    report
        .errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_third_party_tool_cannot_take_a_first_party_name_even_when_that_plugin_is_off() {
    // `shell` is disabled by default (no grant), and still its name is reserved.
    for name in ["shell", "read-file", "eval"] {
        let err = load_error("", &format!("extra = [{{ name = {name:?} }}]"));
        assert!(
            err.contains(&format!("offers the tool {name:?}")) && err.contains("reserved"),
            "{name}: {err}"
        );
        assert!(err.contains("tool_aliases"), "says how to alias: {err}");
    }
    // A policy alias lets it load under another name, and calls reach the plugin's own tool.
    let (rt, _cache) = fresh_runtime();
    let policy = Policy::parse("[plugins.hostile-tool.tool_aliases]\nshell = \"vendor-shell\"\n")
        .expect("policy");
    let report = rt.load_all(
        &[hostile_tool_offering(r#"extra = [{ name = "shell" }]"#)],
        &policy,
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let plugin = &report.plugins[0];
    assert!(plugin.tools.iter().any(|t| t.name == "vendor-shell"));
    assert!(!plugin.tools.iter().any(|t| t.name == "shell"));
}

#[test]
fn plugins_sharing_a_tool_name_are_all_refused_whatever_their_order() {
    // Which loads first is only the order of their folders' names: a plugin copied in later
    // must not take a tool from one the operator trusted with it, nor a third one take it
    // while the two are refused. A{x}, B{x, y}, C{y}: in every order, none loads.
    let (rt, _cache) = fresh_runtime();
    let offering = |name: &str, tools: &[&str]| {
        let extra: Vec<String> = tools
            .iter()
            .map(|t| format!("{{ name = \"{t}\" }}"))
            .collect();
        source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| {
            format!(
                "{}\n[config]\nextra = [{}]\ncopies = 0\n",
                m.replace("name = \"hostile-tool\"", &format!("name = \"{name}\"")),
                extra.join(", ")
            )
        })
    };
    let all = [
        offering("hostile-a", &["shared-x"]),
        offering("hostile-b", &["shared-x", "shared-y"]),
        offering("hostile-c", &["shared-y"]),
    ];
    for order in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        let sources: Vec<_> = order.iter().map(|&i| all[i].clone()).collect();
        let report = rt.load_all(&sources, &Policy::default());
        let names: Vec<&str> = report.plugins.iter().map(|p| p.id.name.as_str()).collect();
        assert!(names.is_empty(), "{order:?}: none keeps a tool: {names:?}");
        let errs: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
        for plugin in ["hostile-a", "hostile-b", "hostile-c"] {
            assert!(
                errs.iter()
                    .any(|e| e.contains(&format!("plugin \"{plugin}\""))
                        && e.contains("offers too, so neither is loaded")),
                "{order:?}: {errs:#?}"
            );
        }
    }
}

#[test]
fn tool_names_and_describe_output_are_bounded() {
    for (extra, rule) in [
        (r#"extra = [{ name = "" }]"#, "^[a-z][a-z0-9-]{0,63}$"),
        (r#"extra = [{ name = "two words" }]"#, "^[a-z]"),
        (r#"extra = [{ name = "line\nbreak" }]"#, "^[a-z]"),
        // Cyrillic `ѕ` in place of `s`.
        (r#"extra = [{ name = "ѕhell" }]"#, "^[a-z]"),
        (r#"extra = [{ name = "../../etc/passwd" }]"#, "^[a-z]"),
        ("copies = 64", "at most 64"),
        (
            r#"extra = [{ name = "bad-schema", parameters = "[1]" }]"#,
            "not a JSON Schema object",
        ),
        (
            r#"extra = [{ name = "bad-type", parameters = "{\"type\":\"string\"}" }]"#,
            "use \"object\"",
        ),
    ] {
        let err = load_error("", extra);
        assert!(err.contains(rule), "{extra}: {err}");
        assert!(err.contains("hostile-tool"), "names the plugin: {err}");
    }
    let long = "a".repeat(100_000);
    let err = load_error("", &format!("extra = [{{ name = {long:?} }}]"));
    assert!(
        err.contains("must match") && err.len() < 2_000,
        "cut: {} bytes",
        err.len()
    );
    let err = load_error(
        "",
        &format!(
            "extra = [{{ name = \"wordy\", description = {:?} }}]",
            "d".repeat(5_000)
        ),
    );
    assert!(err.contains("description is 5000 bytes"), "{err}");
    let err = load_error(
        "",
        &format!(
            "extra = [{{ name = \"big\", parameters = {:?} }}]",
            format!("{{\"description\":\"{}\"}}", "s".repeat(70_000))
        ),
    );
    assert!(err.contains("at most 65536"), "{err}");
}

#[test]
fn a_third_party_tool_does_not_inherit_a_first_party_deadline_by_name() {
    let (rt, _cache) = fresh_runtime();
    let report = rt.load_all(
        &[hostile_tool_offering(r#"extra = [{ name = "eval-form" }]"#)],
        &Policy::default(),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let limits = &report.plugins[0].limits;
    assert_eq!(limits.tool_timeout("eval-form").as_secs(), 120);
    let (rt, _cache2) = fresh_runtime();
    let eval = rt.load_all(&crate::builtins(&["eval"]), &Policy::default());
    assert_eq!(eval.plugins[0].limits.tool_timeout("eval").as_secs(), 10);
}

#[test]
fn the_reserved_names_are_exactly_what_the_first_party_tools_offer() {
    let (rt, _cache) = fresh_runtime();
    let dir = tempfile::tempdir().expect("dir");
    let policy = format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = {0:?}, access = \"read-write\" }}]\n\
         [plugins.shell]\nprocess = [\"ls\"]\nfs = [{{ guest = \"/workspace\", host = {0:?}, access = \"read-write\" }}]\n\
         [plugins.http-fetch]\nnet = [\"example.org\"]\n\
         [plugins.memory]\nmemory = \"read-write\"\n",
        dir.path().display().to_string()
    );
    let mut rt = rt;
    rt.set_memory(Arc::new(
        passepartout::memory::Memory::in_memory(Default::default()).expect("memory"),
    ));
    let report = rt.load_all(
        &loader::builtin_sources(),
        &Policy::parse(&policy).expect("policy"),
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let mut offered: Vec<(String, String)> = report
        .plugins
        .iter()
        .flat_map(|p| p.tools.iter().map(|t| (p.id.name.clone(), t.name.clone())))
        .collect();
    offered.sort();
    let mut reserved: Vec<(String, String)> = passepartout::runtime::tools::RESERVED
        .iter()
        .map(|(p, t)| ((*p).to_owned(), (*t).to_owned()))
        .collect();
    reserved.sort();
    assert_eq!(offered, reserved);
}

#[test]
fn a_gate_that_loses_its_name_to_another_component_is_missing() {
    let (rt, _cache) = fresh_runtime();
    let first = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m);
    // Another component under the same name: whichever wins, the other gate is not in force.
    let impostor = source(
        passepartout_tests::README_GATE_WASM,
        passepartout_tests::README_GATE_MANIFEST,
        |m| m.replace("name = \"no-sudo\"", "name = \"hostile-gate\""),
    );
    let report = rt.load_all(&[first, impostor], &Policy::default());
    assert_eq!(report.missing_gates.len(), 1, "{:?}", report.missing_gates);
    // The same component twice is one gate, loaded.
    let (rt, _cache) = fresh_runtime();
    let twice = [
        source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m),
        source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m),
    ];
    assert!(
        rt.load_all(&twice, &Policy::default())
            .missing_gates
            .is_empty()
    );
}

#[test]
fn install_refuses_a_first_party_name() {
    let dir = tempfile::tempdir().expect("dir");
    let src = source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| {
        m.replace("name = \"hostile-gate\"", "name = \"secrets\"")
    });
    let manifest = passepartout::runtime::Manifest::parse(&src.manifest).expect("manifest parses");
    let err = passepartout::install::install(
        &src,
        &manifest,
        &dir.path().join("plugins"),
        &dir.path().join("pins.toml"),
        false,
    )
    .expect_err("refused");
    assert!(err.to_string().contains("first-party"), "{err}");
}
