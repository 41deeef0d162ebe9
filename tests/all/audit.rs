//! `passepartout audit`: each crafted case produces exactly its finding (ignoring the
//! informational ones); the standard plugins have no high finding; the JSON keys are stable.

use std::collections::BTreeSet;

use passepartout::audit::{self, DaemonPorts, FindingKind, PluginAudit, Severity};
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
    audit::audit_one(
        &rt,
        source,
        &Policy::parse(policy).expect("policy"),
        &DaemonPorts::defaults(),
    )
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
    let report = audit::audit(
        &rt,
        &loader::builtin_sources(),
        &Policy::default(),
        &DaemonPorts::defaults(),
    );
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
        &audit::audit_one(&rt, &old, &policy, &DaemonPorts::defaults()),
        &audit::audit_one(&rt, &new, &policy, &DaemonPorts::defaults()),
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
    let report = audit::audit(
        &rt,
        &[builtin("files")],
        &Policy::default(),
        &DaemonPorts::defaults(),
    );
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

#[test]
fn a_network_grant_only_programs_use_is_used_and_said_to_reach_any_address() {
    // A shell whose programs (curl, say) use the network: the component never imports
    // wasi:http, its programs connect to the grant's ports, confined by port only.
    let ws = tempfile::tempdir().expect("temp dir");
    let mut shell = builtin("shell");
    shell.manifest = shell
        .manifest
        .replace(
            "[capabilities]\n",
            "[capabilities]\nnet = [\"api.example.org\"]\n",
        )
        .into();
    let mount = mount_policy("shell", ws.path());
    let a = audit_with(
        &shell,
        &format!("{mount}process = [\"ls\"]\nnet = [\"api.example.org\"]\n"),
    );
    assert!(
        !kinds(&a).contains(&FindingKind::OverGranted),
        "{:#?}",
        a.findings
    );
    let net = a
        .capabilities
        .iter()
        .find(|r| r.capability == "network")
        .expect("the network row");
    assert_eq!(net.effective, ["api.example.org"]);
    assert!(
        net.enforced.contains("port(s) 80, 443 at ANY address")
            && net.enforced.contains("169.254.169.254"),
        "{}",
        net.enforced
    );
    // Without programs the grant is used by nothing: over-granted, and nothing said of them.
    let unused = audit_with(&shell, &format!("{mount}net = [\"api.example.org\"]\n"));
    assert!(
        unused
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::OverGranted && f.message.contains("network")),
        "{:#?}",
        unused.findings
    );
    let net = unused
        .capabilities
        .iter()
        .find(|r| r.capability == "network")
        .expect("the network row");
    assert!(!net.enforced.contains("ANY address"), "{}", net.enforced);
}

#[test]
fn a_grant_that_reaches_a_configured_daemon_or_mcp_port_is_reported_high() {
    let settings = passepartout::settings::ConfigFile::parse(
        "[daemon]\nport = 9200\n[mcp]\nhttp = \"127.0.0.1:8808\"\n",
    )
    .expect("settings");
    let configured = DaemonPorts::of(&settings);
    let (rt, _cache) = fresh_runtime();
    let reaches = |source: &PluginSource, policy: &str, ports: &DaemonPorts| {
        let policy = Policy::parse(policy).expect("policy");
        audit::audit_one(&rt, source, &policy, ports)
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::ReachesDaemon && f.severity == Severity::High)
    };
    let fetch = builtin("http-fetch");
    for net in ["\"127.0.0.1:9200\"", "\"[::1]:8808\""] {
        let policy = format!("[plugins.http-fetch]\nnet = [{net}]\n");
        assert!(reaches(&fetch, &policy, &configured), "{net}");
        assert!(
            !reaches(&fetch, &policy, &DaemonPorts::defaults()),
            "{net}: reported only where the daemon listens"
        );
    }
    // A granted program is confined by port only: any host with that port reaches it.
    let ws = tempfile::tempdir().expect("temp dir");
    let mut shell = builtin("shell");
    shell.manifest = shell
        .manifest
        .replace(
            "[capabilities]\n",
            "[capabilities]\nnet = [\"api.example.org:8808\"]\n",
        )
        .into();
    let policy = format!(
        "{}process = [\"ls\"]\nnet = [\"api.example.org:8808\"]\n",
        mount_policy("shell", ws.path())
    );
    assert!(reaches(&shell, &policy, &configured));
    assert!(!reaches(&shell, &policy, &DaemonPorts::defaults()));
}

#[test]
fn a_mount_through_a_link_shows_where_it_leads() {
    // The runtime mounts where the host path leads when the grant is checked, not the path as
    // written: `innocent` could be a link to ~/.ssh.
    let dir = tempfile::tempdir().expect("temp dir");
    let target = dir.path().join("secret");
    std::fs::create_dir_all(&target).expect("mkdir");
    let link = dir.path().join("innocent");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let real = std::fs::canonicalize(&target).expect("canonical");
    let a = audit_with(&builtin("files"), &mount_policy("files", &link));
    let fs = &a.capabilities[0];
    let led = format!("innocent → {} (ReadOnly)", real.display());
    assert!(fs.effective.iter().any(|e| e.ends_with(&led)), "{fs:#?}");
    assert!(fs.granted.iter().any(|e| e.ends_with(&led)), "{fs:#?}");
    assert!(fs.enforced.contains(&led), "{}", fs.enforced);
    // A path that leads nowhere else is shown as written.
    let plain = audit_with(&builtin("files"), &mount_policy("files", &real));
    let fs = &plain.capabilities[0];
    assert!(
        fs.effective
            .iter()
            .chain(&fs.granted)
            .all(|e| !e.contains('→'))
            && !fs.enforced.contains('→'),
        "{fs:#?}"
    );
}

#[test]
fn a_tool_declaring_effects_of_another_kind_than_its_grants_is_opaque() {
    // One effect declared must not hide the others: a tool granted the network that declares
    // only a path it reads shows gates no URL.
    let tool = |parameters: &'static str| {
        source(HOSTILE_TOOL_WASM, HOSTILE_TOOL_MANIFEST, move |m| {
            format!(
                "{}\n[config]\nextra = [{{ name = \"lookup\", parameters = '{parameters}' }}]\n",
                m.replace(
                    "[capabilities]\n",
                    "[capabilities]\nnet = [\"example.org\"]\n"
                )
            )
        })
    };
    let grant = "[plugins.hostile-tool]\nnet = [\"example.org\"]\n";
    let lookup = |a: &PluginAudit| -> Vec<String> {
        a.findings
            .iter()
            .filter(|f| f.kind == FindingKind::OpaqueTool && f.message.contains("\"lookup\""))
            .map(|f| f.message.clone())
            .collect()
    };
    let reads =
        tool(r#"{"type":"object","properties":{"p":{"type":"string","x-effect":"path-read"}}}"#);
    let a = audit_with(&reads, grant);
    let said = lookup(&a);
    assert_eq!(said.len(), 1, "{:#?}", a.findings);
    assert!(
        said[0].contains("none of url (granted network: example.org)")
            && !said[0].contains("path-write"),
        "{}",
        said[0]
    );
    // Declaring the URL it fetches: not opaque.
    let fetches = tool(
        r#"{"type":"object","properties":{"p":{"type":"string","x-effect":"path-read"},"u":{"type":"string","x-effect":"url"}}}"#,
    );
    let a = audit_with(&fetches, grant);
    assert!(lookup(&a).is_empty(), "{:#?}", a.findings);
    // Without the grant, what it declares is all it can do.
    let a = audit_with(&reads, "");
    assert!(lookup(&a).is_empty(), "{:#?}", a.findings);
}
