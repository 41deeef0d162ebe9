//! `passepartout audit`: each crafted case produces exactly its finding (ignoring the
//! informational ones); the standard plugins have no high finding; the JSON keys are stable.

use std::collections::BTreeSet;

use passepartout::audit::{self, FindingKind, PluginAudit, Severity};
use passepartout::runtime::{LoadError, PluginSource, Policy, loader};
use passepartout_tests::{
    FUTURE_GATE_MANIFEST, FUTURE_GATE_WASM, HOSTILE_GATE_MANIFEST, HOSTILE_GATE_WASM,
    HOSTILE_TOOL_MANIFEST, HOSTILE_TOOL_WASM, source,
};

use crate::fresh_runtime;

fn builtin(name: &str) -> PluginSource {
    loader::builtin_sources()
        .into_iter()
        .find(|s| s.manifest.contains(&format!("name = \"{name}\"")))
        .expect("builtin")
}

fn audit_with(source: &PluginSource, policy: &str) -> PluginAudit {
    let (rt, _cache) = fresh_runtime();
    audit::audit_one(&rt, source, &Policy::parse(policy).expect("policy"))
}

/// The findings that matter (severity low and above), by kind.
fn kinds(a: &PluginAudit) -> BTreeSet<FindingKind> {
    a.findings
        .iter()
        .filter(|f| f.severity > Severity::Info)
        .map(|f| f.kind)
        .collect()
}

fn mount_policy(plugin: &str, dir: &std::path::Path) -> String {
    format!(
        "[plugins.{plugin}]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-only\" }}]\n",
        dir.display()
    )
}

/// As if installed: pinned to its own hash.
fn installed(mut s: PluginSource) -> PluginSource {
    s.pin = Some(passepartout::runtime::pins::fingerprint(
        &s.manifest,
        &s.component,
    ));
    s
}

#[test]
fn a_plugin_copied_in_by_hand_is_unpinned() {
    let a = audit_with(&source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m), "");
    assert!(kinds(&a).contains(&FindingKind::Unpinned));
}

/// Append a custom section: still a valid component, with another sha256.
pub fn tamper(bytes: &mut Vec<u8>) {
    bytes.extend_from_slice(&[0x00, 0x08, 0x01, b'x']);
    bytes.extend_from_slice(b"tamper");
}

#[test]
fn the_standard_plugins_have_no_high_finding_and_every_capability_four_ways() {
    let (rt, _cache) = fresh_runtime();
    let report = audit::audit(&rt, &loader::builtin_sources(), &Policy::default());
    assert_eq!(
        report.worst().map(|w| w < Severity::High),
        Some(true),
        "{report:#?}"
    );
    assert_eq!(report.summary.high, 0);
    for p in &report.plugins {
        let caps: Vec<&str> = p.capabilities.iter().map(|c| c.capability).collect();
        assert_eq!(
            caps,
            [
                "filesystem",
                "environment",
                "network",
                "process",
                "memory",
                "clocks",
                "random",
                "runtime",
                "host"
            ],
            "{}",
            p.name
        );
        assert!(p.capabilities.iter().all(|c| !c.enforced.is_empty()));
        assert_eq!(p.wit_version.as_deref(), Some("0.1.1"));
    }
    let files = &report.plugins[1];
    let fs = &files.capabilities[0];
    assert_eq!(fs.declared, ["/workspace (ReadWrite)"]);
    assert!(fs.granted.is_empty() && fs.effective.is_empty());
    assert!(
        fs.imported
            .iter()
            .any(|i| i.starts_with("wasi:filesystem/"))
    );
    assert_eq!(
        fs.enforced,
        "no preopened directory: every path is NotFound"
    );
}

#[test]
fn importing_an_ungranted_capability() {
    let a = audit_with(&builtin("files"), "");
    assert_eq!(kinds(&a), BTreeSet::from([FindingKind::ImportsUngranted]));
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::ImportsUngranted && f.severity == Severity::Low)
        .expect("finding");
    assert!(
        f.message.contains(
            "its calls are denied; the rest of the plugin works (no preopened directory: every \
             path is NotFound). To allow it, grant a directory under [plugins.files]: fs = "
        ),
        "{}",
        f.message
    );
}

#[test]
fn a_plugin_the_runtime_will_disable_is_medium_and_names_the_policy_line_the_runtime_names() {
    let (rt, _cache) = fresh_runtime();
    for (plugin, line) in [
        ("shell", "[plugins.shell]: process = [\"ls\"]"),
        ("memory", "[plugins.memory]: memory = \"read\""),
        (
            "http-fetch",
            "[plugins.http-fetch]: net = [\"example.org\"]",
        ),
    ] {
        let source = builtin(plugin);
        let a = audit_with(&source, "");
        let f = a
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::ImportsUngranted && f.severity == Severity::Medium)
            .unwrap_or_else(|| panic!("{plugin}: {:#?}", a.findings));
        assert!(f.message.contains(line), "{plugin}: {}", f.message);
        // The runtime refuses it, naming the same line.
        let refused = rt
            .load(&source, &Policy::default())
            .err()
            .expect("disabled");
        assert!(matches!(refused, LoadError::NotGranted { .. }), "{refused}");
        assert!(refused.to_string().contains(line), "{refused}");
        // Turned off by the operator, it is only worth knowing.
        let off = audit_with(&source, &format!("[plugins.{plugin}]\nenabled = false\n"));
        assert!(
            off.findings
                .iter()
                .all(|f| f.kind != FindingKind::ImportsUngranted || f.severity == Severity::Info),
            "{plugin}: {:#?}",
            off.findings
        );
    }
}

#[test]
fn over_granted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut eval = builtin("eval");
    eval.manifest = (eval.manifest.into_owned()
        + "\n[[capabilities.fs]]\nguest = \"/workspace\"\naccess = \"read-only\"\n")
        .into();
    let a = audit_with(&eval, &mount_policy("eval", dir.path()));
    assert_eq!(kinds(&a), BTreeSet::from([FindingKind::OverGranted]));
    assert!(a.findings.iter().any(|f| f.severity == Severity::Medium));
}

#[test]
fn granted_but_not_declared() {
    let dir = tempfile::tempdir().expect("temp dir");
    let a = audit_with(&builtin("eval"), &mount_policy("eval", dir.path()));
    assert_eq!(kinds(&a), BTreeSet::from([FindingKind::GrantedNotDeclared]));
    assert!(
        a.capabilities[0].effective.is_empty(),
        "the runtime gives nothing undeclared"
    );
}

#[test]
fn tampered_after_install_is_found_and_refused() {
    let mut eval = builtin("eval");
    eval.pin = Some(passepartout::runtime::pins::record(
        &eval.manifest,
        &eval.component,
    ));
    eval.origin = passepartout::runtime::Origin::Dir("/plugins/eval".into());
    let pristine = eval.clone();
    let mut bytes = eval.component.into_owned();
    tamper(&mut bytes);
    eval.component = bytes.into();
    let a = audit_with(&eval, "");
    assert_eq!(kinds(&a), BTreeSet::from([FindingKind::HashMismatch]));
    let (rt, _cache) = fresh_runtime();
    match rt.load(&eval, &Policy::default()) {
        Err(e @ LoadError::Tampered { .. }) => {
            assert!(e.to_string().contains("its component changed"), "{e}")
        }
        Err(other) => panic!("expected Tampered, got {other}"),
        Ok(_) => panic!("a tampered component must not load"),
    }
    // A widened manifest alone is named as such.
    let mut widened = pristine;
    widened.manifest = format!("{}\n# widened\n", widened.manifest).into();
    match rt.load(&widened, &Policy::default()) {
        Err(e @ LoadError::Tampered { .. }) => {
            assert!(e.to_string().contains(": plugin.toml changed"), "{e}")
        }
        Err(other) => panic!("expected Tampered, got {other}"),
        Ok(_) => panic!("a changed manifest must not load"),
    }
}

#[test]
fn a_gate_importing_wasi() {
    let a = audit_with(
        &installed(source(HOSTILE_GATE_WASM, HOSTILE_GATE_MANIFEST, |m| m)),
        "",
    );
    // It also asks a 2 s deadline, above the gates' default, which nobody granted.
    assert_eq!(
        kinds(&a),
        BTreeSet::from([FindingKind::GateImportsWasi, FindingKind::LimitNotGranted])
    );
    let high: Vec<&str> = a
        .findings
        .iter()
        .filter(|f| f.severity == Severity::High)
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        high.iter().any(|m| m.contains("wasi:filesystem/")),
        "{high:?}"
    );
    assert!(high.iter().any(|m| m.contains("wasi:clocks/")), "{high:?}");
}

#[test]
fn an_unknown_wit_version() {
    let future = installed(source(FUTURE_GATE_WASM, FUTURE_GATE_MANIFEST, |m| m));
    let a = audit_with(&future, "");
    assert_eq!(kinds(&a), BTreeSet::from([FindingKind::UnsupportedWit]));
    assert_eq!(a.wit_version.as_deref(), Some("0.2.0"));
    let (rt, _cache) = fresh_runtime();
    let err = rt
        .load(&future, &Policy::default())
        .err()
        .expect("refused at load");
    assert!(
        err.to_string().contains("passepartout:plugin@0.2.0"),
        "{err}"
    );
}

#[test]
fn an_unenforceable_grant() {
    let tool = source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, |m| {
        m.replace(
            "[capabilities]\n",
            "[capabilities]\nnet = [\"https://example.com/\"]\n",
        )
    });
    let a = audit_with(
        &tool,
        "[plugins.hostile-tool]\nnet = [\"https://example.com/\"]\n",
    );
    assert!(
        kinds(&a).contains(&FindingKind::Unenforceable),
        "{:?}",
        a.findings
    );
}

#[test]
fn a_diff_shows_an_added_capability() {
    let old = builtin("eval");
    let mut new = builtin("eval");
    new.component = builtin("files").component; // a new build that now reads files
    let (rt, _cache) = fresh_runtime();
    let policy = Policy::default();
    let d = audit::diff::diff(
        &audit::audit_one(&rt, &old, &policy),
        &audit::audit_one(&rt, &new, &policy),
    );
    assert!(
        d.changes.iter().any(|c| c.what == "capability"
            && c.item == "adds imports filesystem"
            && c.direction == audit::diff::Direction::Widening),
        "{d:#?}"
    );
    assert!(
        d.changes.iter().any(|c| c.what == "import"
            && c.item.starts_with("adds wasi:filesystem/types")
            && c.direction == audit::diff::Direction::Neutral),
        "{d:#?}"
    );
    assert!(d.widens());
}

#[test]
fn the_json_schema_is_stable() {
    let (rt, _cache) = fresh_runtime();
    let report = audit::audit(&rt, &[builtin("files")], &Policy::default());
    let v = serde_json::to_value(&report).expect("json");
    let keys = |v: &serde_json::Value| -> Vec<String> {
        v.as_object().expect("object").keys().cloned().collect()
    };
    assert_eq!(
        keys(&v),
        ["host_wit_version", "plugins", "schema_version", "summary"]
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(keys(&v["summary"]), ["high", "info", "low", "medium"]);
    let p = &v["plugins"][0];
    assert_eq!(
        keys(p),
        [
            "capabilities",
            "config",
            "exports",
            "findings",
            "imports",
            "kinds",
            "limits",
            "limits_asked",
            "limits_granted",
            "name",
            "origin",
            "pinned",
            "priority",
            "sha256",
            "tools",
            "tools_unread",
            "version",
            "walk_position",
            "wit_version"
        ]
    );
    assert_eq!(
        keys(&p["capabilities"][0]),
        [
            "capability",
            "declared",
            "effective",
            "enforced",
            "granted",
            "imported"
        ]
    );
    assert_eq!(keys(&p["findings"][0]), ["kind", "message", "severity"]);
    assert_eq!(p["findings"][0]["kind"], "unbounded-limit");
    assert_eq!(p["findings"][0]["severity"], "info");
}

#[test]
fn a_grant_beyond_what_is_declared_is_found_even_beside_a_declared_one() {
    let (a, b) = (
        tempfile::tempdir().expect("temp dir"),
        tempfile::tempdir().expect("temp dir"),
    );
    let policy = format!(
        "[plugins.files]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}, {{ guest = \"/extra\", host = \"{}\", access = \"read-only\" }}]\n",
        a.path().display(),
        b.path().display()
    );
    let audit = audit_with(&builtin("files"), &policy);
    assert_eq!(
        kinds(&audit),
        BTreeSet::from([FindingKind::GrantedNotDeclared])
    );
    let f = audit
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::GrantedNotDeclared)
        .expect("finding");
    assert!(
        f.message.contains("/extra") && !f.message.contains("/workspace ->"),
        "{}",
        f.message
    );
    assert_eq!(
        audit.capabilities[0].effective.len(),
        1,
        "only the declared mount is effective"
    );
}

#[test]
fn unconfined_programs_are_reported_high() {
    let ws = tempfile::tempdir().expect("temp dir");
    let shell = builtin("shell");
    let mount = mount_policy("shell", ws.path());
    let confined = audit_with(&shell, &format!("{mount}process = [\"ls\"]\n"));
    assert!(!kinds(&confined).contains(&FindingKind::Unconfined));
    let a = audit_with(
        &shell,
        &format!("{mount}process = [\"ls\"]\nconfine = \"none\"\n"),
    );
    let f = a
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Unconfined)
        .expect("reported");
    assert_eq!(f.severity, Severity::High);
    assert!(
        f.message.contains("ls") && f.message.contains("unconfined"),
        "{}",
        f.message
    );
}

#[test]
fn a_network_grant_that_reaches_the_daemon_s_port_is_reported_high() {
    let fetch = builtin("http-fetch");
    let reaches = |net: &str| {
        let a = audit_with(&fetch, &format!("[plugins.http-fetch]\nnet = [{net}]\n"));
        a.findings
            .iter()
            .find(|f| f.kind == FindingKind::ReachesDaemon)
            .map(|f| (f.severity, f.message.clone()))
    };
    for net in [
        "\"127.0.0.1:9105\"",
        "\"localhost\"",
        "\"[::1]:9110\"",
        "\"127.0.0.1\"",
    ] {
        let (severity, message) = reaches(net).unwrap_or_else(|| panic!("{net} not reported"));
        assert_eq!(severity, Severity::High);
        assert!(message.contains("daemon's own port"), "{message}");
    }
    for net in [
        "\"127.0.0.1:8080\"",
        "\"example.org\"",
        "\"example.org:9105\"",
    ] {
        assert!(reaches(net).is_none(), "{net} reported");
    }
}

#[test]
fn a_rust_plugin_that_does_nothing_questionable_has_no_finding() {
    // Rust's std links the WASI runtime baseline (stdio, exit, streams, the environment) into
    // every component: shown in the table, never a finding.
    for name in ["shell-guard", "secrets", "explanation"] {
        let a = audit_with(&builtin(name), "");
        // A first-party plugin's raised limits are shown (info), nothing else.
        assert!(
            a.findings
                .iter()
                .all(|f| f.kind == FindingKind::LimitGranted && f.severity == Severity::Info),
            "{name}: {:?}",
            a.findings
        );
        let runtime = a
            .capabilities
            .iter()
            .find(|r| r.capability == "runtime")
            .expect("the runtime row");
        assert!(
            !runtime.imported.is_empty(),
            "{name}: the table still shows it"
        );
    }
}
