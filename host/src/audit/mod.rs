//! `passepartout audit`: what every plugin can do, read from the component itself without
//! running it, compared with what its manifest declares, what the policy grants and how the
//! runtime enforces it. It uses the runtime's own checks ([`Grants::resolve`],
//! [`Grants::intersect`], [`Limits::resolve`], the loader's export check), so the audit and the
//! runtime cannot disagree.

pub mod classify;
pub mod diff;
pub mod render;

use serde::Serialize;

use crate::runtime::capabilities::Grants;
use crate::runtime::manifest::{Kind, Manifest, MemoryAccess};
use crate::runtime::plugin::{Origin, PluginSource, WIT_VERSION};
use crate::runtime::policy::{PluginPolicy, Policy};
use crate::runtime::{Limits, PluginId, Runtime};
use classify::{Class, classify, provided_to_tools};

/// The version of the JSON schema below; bumped only on incompatible changes.
pub const SCHEMA_VERSION: u32 = 1;

/// How serious a finding is.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing to fix.
    Info,
    /// Untidy, harmless: the runtime denies or ignores it.
    Low,
    /// A grant wider than needed.
    Medium,
    /// The plugin will be refused, was tampered with, or reaches for what a gate must not.
    High,
}

/// The kinds of finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Imports a capability it was not granted (the runtime denies it; the message says how).
    ImportsUngranted,
    /// Granted a capability it never imports.
    OverGranted,
    /// The policy grants what the manifest does not declare (no effect).
    GrantedNotDeclared,
    /// A limit without a bound.
    UnboundedLimit,
    /// The component's sha256 differs from the pin recorded at install.
    HashMismatch,
    /// Built against a WIT version this host does not link.
    UnsupportedWit,
    /// A gate imports something beyond our host interface.
    GateImportsWasi,
    /// Imports an interface this host does not provide: it will not link.
    NotProvided,
    /// A grant this runtime cannot enforce: the plugin will be refused at load.
    Unenforceable,
    /// Installed in the plugin directory without a pin.
    Unpinned,
    /// The manifest or component cannot be read.
    Invalid,
    /// The operator's policy turns the plugin off (`enabled = false`).
    DisabledByPolicy,
    /// The manifest asks a limit above the default that the policy does not grant: it runs
    /// at the default.
    LimitNotGranted,
    /// A tool that changes things (not read-only) and declares no effects in its schema:
    /// gates cannot see what it would do.
    OpaqueTool,
    /// Granted programs that run without kernel confinement (`confine = "none"`).
    Unconfined,
    /// A network grant that reaches the daemon's own port on this machine.
    ReachesDaemon,
}

/// One finding.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Finding {
    /// What kind.
    pub kind: FindingKind,
    /// How serious.
    pub severity: Severity,
    /// What was found and what to do.
    pub message: String,
}

/// One capability of one plugin, four ways.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CapabilityRow {
    /// filesystem, environment, network, process, memory, clocks, random, runtime, host.
    pub capability: &'static str,
    /// What the manifest asks for.
    pub declared: Vec<String>,
    /// What the policy grants.
    pub granted: Vec<String>,
    /// What the plugin gets (declared AND granted).
    pub effective: Vec<String>,
    /// The component's imports in this class.
    pub imported: Vec<String>,
    /// How the runtime enforces it, for this plugin.
    pub enforced: String,
}

/// The audit of one plugin.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PluginAudit {
    /// From the manifest (or the folder, if the manifest is unreadable).
    pub name: String,
    /// From the manifest.
    pub version: String,
    /// Roles declared.
    pub kinds: Vec<Kind>,
    /// Where it came from.
    pub origin: Origin,
    /// sha256 of the component.
    pub sha256: Option<String>,
    /// The pin recorded at install.
    pub pinned: Option<String>,
    /// The passepartout:plugin version it targets.
    pub wit_version: Option<String>,
    /// Every import.
    pub imports: Vec<String>,
    /// Every export.
    pub exports: Vec<String>,
    /// The limits it would run under.
    pub limits: Option<Limits>,
    /// Each capability, declared / granted / effective / imported / enforced.
    pub capabilities: Vec<CapabilityRow>,
    /// What is worth attention.
    pub findings: Vec<Finding>,
}

/// The whole report (`passepartout audit --json`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AuditReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The WIT version this host links.
    pub host_wit_version: &'static str,
    /// Per plugin, in load order.
    pub plugins: Vec<PluginAudit>,
    /// Findings per severity.
    pub summary: Summary,
}

/// Counts of findings.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// High.
    pub high: usize,
    /// Medium.
    pub medium: usize,
    /// Low.
    pub low: usize,
    /// Info.
    pub info: usize,
}

impl AuditReport {
    /// The most serious finding, if any.
    pub fn worst(&self) -> Option<Severity> {
        self.plugins
            .iter()
            .flat_map(|p| p.findings.iter().map(|f| f.severity))
            .max()
    }
}

/// Audit every source against `policy`, reading each component without running it (only
/// `describe`, for the tools' effects, of plugins that load).
pub fn audit(runtime: &Runtime, sources: &[PluginSource], policy: &Policy) -> AuditReport {
    audit_loaded(runtime, sources, policy, &[])
}

/// As [`audit`], for sources already loaded into `loaded` (the daemon's set): their tools are
/// read from there instead of loading each plugin a second time.
pub fn audit_loaded(
    runtime: &Runtime,
    sources: &[PluginSource],
    policy: &Policy,
    loaded: &[crate::runtime::Plugin],
) -> AuditReport {
    let plugins: Vec<PluginAudit> = sources
        .iter()
        .map(|s| audit_source(runtime, s, policy, loaded))
        .collect();
    let mut summary = Summary::default();
    for f in plugins.iter().flat_map(|p| &p.findings) {
        match f.severity {
            Severity::High => summary.high += 1,
            Severity::Medium => summary.medium += 1,
            Severity::Low => summary.low += 1,
            Severity::Info => summary.info += 1,
        }
    }
    AuditReport {
        schema_version: SCHEMA_VERSION,
        host_wit_version: WIT_VERSION,
        plugins,
        summary,
    }
}

fn finding(kind: FindingKind, severity: Severity, message: String) -> Finding {
    Finding {
        kind,
        severity,
        message,
    }
}

/// Audit one plugin.
pub fn audit_one(runtime: &Runtime, source: &PluginSource, policy: &Policy) -> PluginAudit {
    audit_source(runtime, source, policy, &[])
}

fn audit_source(
    runtime: &Runtime,
    source: &PluginSource,
    policy: &Policy,
    loaded: &[crate::runtime::Plugin],
) -> PluginAudit {
    let fallback_name = match &source.origin {
        Origin::Dir(p) | Origin::Candidate(p) => p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        Origin::Builtin => String::new(),
    };
    let mut audit = PluginAudit {
        name: fallback_name,
        version: String::new(),
        kinds: Vec::new(),
        origin: source.origin.clone(),
        sha256: Some(crate::builtin::sha256(&source.component)),
        pinned: source.pin.clone(),
        wit_version: None,
        imports: Vec::new(),
        exports: Vec::new(),
        limits: None,
        capabilities: Vec::new(),
        findings: Vec::new(),
    };
    if let Some(problem) = &source.problem {
        audit.sha256 = None;
        audit.findings.push(finding(
            FindingKind::Invalid,
            Severity::High,
            format!("{}: {problem}", source.manifest_path.display()),
        ));
        return audit;
    }
    let manifest = match Manifest::parse(&source.manifest) {
        Ok(m) => m,
        Err(e) => {
            audit.findings.push(finding(
                FindingKind::Invalid,
                Severity::High,
                format!("{}: {e}", source.manifest_path.display()),
            ));
            return audit;
        }
    };
    audit.name = manifest.name.clone();
    audit.version = manifest.version.clone();
    audit.kinds = manifest.kinds.clone();
    if policy.disabled(&manifest.name) {
        audit.findings.push(finding(
            FindingKind::DisabledByPolicy,
            Severity::Info,
            format!(
                "turned off by policy.toml ([plugins.{}] enabled = false): not loaded; a gate \
                 turned off this way is not counted as missing",
                manifest.name
            ),
        ));
    }
    let id = PluginId {
        name: manifest.name.clone(),
        version: manifest.version.clone(),
    };

    if let Some(pin) = &audit.pinned
        && let Err((what, found)) =
            crate::runtime::pins::check(pin, &source.manifest, &source.component)
    {
        audit.findings.push(finding(
            FindingKind::HashMismatch,
            Severity::High,
            format!("{what} changed after install (the fingerprint is now {found}; pinned: {pin}): the runtime refuses to load it"),
        ));
    }
    if source.pin.is_none() && matches!(source.origin, Origin::Dir(_)) {
        audit.findings.push(finding(
            FindingKind::Unpinned,
            Severity::Low,
            "copied into the plugin directory by hand: no sha256 was pinned; `passepartout plugin install` pins it".into(),
        ));
    }

    let interfaces = match runtime.inspect(&source.component) {
        Ok((i, _)) => i,
        Err(e) => {
            audit.findings.push(finding(
                FindingKind::Invalid,
                Severity::High,
                format!("the component cannot be read: {e}"),
            ));
            return audit;
        }
    };
    audit.imports = interfaces.imports.clone();
    audit.exports = interfaces.exports.clone();
    audit.wit_version = interfaces
        .exports
        .iter()
        .chain(&interfaces.imports)
        .filter(|n| n.starts_with("passepartout:plugin/"))
        .find_map(|n| n.split_once('@').map(|(_, v)| v.to_owned()));
    if let Some(v) = audit
        .wit_version
        .as_deref()
        .filter(|v| !crate::runtime::plugin::wit_supported(v))
    {
        audit.findings.push(finding(
            FindingKind::UnsupportedWit,
            Severity::High,
            format!("built against passepartout:plugin@{v}; this host links @{WIT_VERSION}: it will be refused at load. Rebuild it with a matching SDK."),
        ));
    } else if let Err(e) =
        crate::runtime::plugin::check_export_names(&interfaces.exports, &manifest.kinds)
    {
        // The same check the loader makes: it will be refused at load.
        audit
            .findings
            .push(finding(FindingKind::Invalid, Severity::High, e));
    }

    let entry = policy.for_plugin(&manifest.name);
    let granted = crate::runtime::limits::granted(
        &manifest.name,
        source.origin == Origin::Builtin,
        &entry.limits,
    );
    match Limits::resolve(&manifest.kinds, &manifest.limits, &granted) {
        Ok(l) => {
            for asked in &l.capped {
                audit.findings.push(finding(
                    FindingKind::LimitNotGranted,
                    Severity::Medium,
                    format!(
                        "plugin.toml asks limits.{asked}: grant it under [plugins.{}.limits] if \
                         the plugin needs it",
                        manifest.name
                    ),
                ));
            }
            if l.tool_fuel.is_none() && manifest.kinds.iter().any(|k| *k != Kind::Gate) {
                audit.findings.push(finding(
                    FindingKind::UnboundedLimit,
                    Severity::Info,
                    "tool and skill calls have no fuel bound; the deadline still stops them. Set limits.fuel to bound their compute deterministically.".into(),
                ));
            }
            audit.limits = Some(l);
        }
        Err(e) => audit
            .findings
            .push(finding(FindingKind::Invalid, Severity::High, e)),
    }

    capabilities(&mut audit, &id, &manifest, entry, &interfaces.imports);
    if manifest.kinds.contains(&Kind::Tool) {
        // The same component already loaded, or loaded now to describe its tools.
        let same = loaded.iter().find(|p| {
            p.id.name == manifest.name && audit.sha256.as_deref() == Some(p.sha256.as_str())
        });
        match same {
            Some(plugin) => opaque_tools(&mut audit, plugin),
            None => {
                if let Ok(plugin) = runtime.load(source, policy) {
                    opaque_tools(&mut audit, &plugin);
                }
                // Not loadable here (not granted, invalid): the findings above say why.
            }
        }
    }
    audit
}

/// Tools that change things and declare no effects. Finding them means asking the plugin to
/// describe its tools, which only a plugin that loads under the policy can (within its limits).
fn opaque_tools(audit: &mut PluginAudit, plugin: &crate::runtime::Plugin) {
    for t in plugin.tools.iter().filter(|t| !t.read_only) {
        if !plugin
            .effect_specs
            .get(&t.name)
            .is_some_and(|s| s.declares())
        {
            audit.findings.push(finding(
                FindingKind::OpaqueTool,
                Severity::Medium,
                format!(
                    "tool {:?} changes things (not read-only) and declares no effects: gates \
                     cannot see which programs, paths or URLs it touches. Mark its arguments with \
                     \"x-effect\" in its schema (program, argv, command-line, path-read, \
                     path-write, url, memory-write).",
                    t.name
                ),
            ));
        }
    }
}

fn capabilities(
    audit: &mut PluginAudit,
    id: &PluginId,
    manifest: &Manifest,
    entry: &PluginPolicy,
    imports: &[String],
) {
    let gate_only = manifest.kinds.iter().all(|k| *k == Kind::Gate);
    let asked = &manifest.capabilities;
    let effective = match Grants::intersect(asked, entry) {
        Ok(g) => g,
        Err(e) => {
            audit
                .findings
                .push(finding(FindingKind::Invalid, Severity::High, e));
            Grants::default()
        }
    };
    if effective.confine == crate::runtime::capabilities::confine::Confine::None
        && !effective.process.is_empty()
    {
        audit.findings.push(finding(
            FindingKind::Unconfined,
            Severity::High,
            format!(
                "its programs ({}) run unconfined (`confine = \"none\"` in policy.toml): they \
                 read and write whatever the daemon's user can, and reach any network",
                effective.process.join(", ")
            ),
        ));
    }
    let ports = daemon_ports();
    let reaching: Vec<&str> = effective
        .net
        .iter()
        .filter(|g| {
            crate::runtime::capabilities::net::reaches_local_port(
                g,
                !effective.process.is_empty(),
                &ports,
            )
        })
        .map(String::as_str)
        .collect();
    if !reaching.is_empty() {
        audit.findings.push(finding(
            FindingKind::ReachesDaemon,
            Severity::High,
            format!(
                "its network grant {} reaches the daemon's own port on this machine (ports {};                  granted programs are confined by port only): it can talk to the daemon as a                  client would, and only the client key keeps it out. Grant the hosts and ports                  it needs, not these",
                reaching.join(", "),
                ports
                    .iter()
                    .map(u16::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    // The runtime's own decision (gate-only plugins may ask for nothing; grants it cannot
    // enforce are refused), as findings.
    if let Err(e) = Grants::resolve(id, &manifest.kinds, asked, entry) {
        let kind = match e {
            crate::runtime::LoadError::Unenforceable { .. } => FindingKind::Unenforceable,
            _ => FindingKind::Invalid,
        };
        // A missing mount directory was already reported by `intersect` above.
        if !audit
            .findings
            .iter()
            .any(|f| f.kind == FindingKind::Invalid && e.to_string().contains(&f.message))
        {
            audit
                .findings
                .push(finding(kind, Severity::High, e.to_string()));
        }
    }
    let imported = |class: Class| -> Vec<String> {
        imports
            .iter()
            .filter(|i| classify(i) == class)
            .cloned()
            .collect()
    };

    let mounts = |m: &[crate::runtime::capabilities::Mount]| -> Vec<String> {
        m.iter()
            .map(|m| format!("{} -> {} ({:?})", m.guest, m.host.display(), m.access))
            .collect()
    };
    let memory = |m: MemoryAccess| {
        if m == MemoryAccess::None {
            Vec::new()
        } else {
            vec![format!("{m:?}")]
        }
    };
    let sides = |declared, granted, effective, undeclared| Sides {
        declared,
        granted,
        effective,
        undeclared,
    };
    let not_asked = |granted: &[String], asked: &[String]| -> Vec<String> {
        granted
            .iter()
            .filter(|g| !asked.contains(g))
            .cloned()
            .collect()
    };
    let rows = vec![
        (
            Class::Filesystem,
            sides(
                asked
                    .fs
                    .iter()
                    .map(|f| format!("{} ({:?})", f.guest, f.access))
                    .collect(),
                entry
                    .fs
                    .iter()
                    .map(|f| format!("{} -> {} ({:?})", f.guest, f.host.display(), f.access))
                    .collect(),
                mounts(&effective.fs),
                entry
                    .fs
                    .iter()
                    .filter(|g| !asked.fs.iter().any(|r| r.guest == g.guest))
                    .map(|f| format!("{} -> {} ({:?})", f.guest, f.host.display(), f.access))
                    .collect(),
            ),
        ),
        (
            Class::Environment,
            sides(
                asked.env.clone(),
                entry.env.clone(),
                effective.env.iter().map(|e| e.name.clone()).collect(),
                not_asked(&entry.env, &asked.env),
            ),
        ),
        (
            Class::Network,
            sides(
                asked.net.clone(),
                entry.net.clone(),
                effective.net.clone(),
                not_asked(&entry.net, &asked.net),
            ),
        ),
        (
            Class::Process,
            sides(
                asked.process.clone(),
                entry.process.clone(),
                effective.process.clone(),
                not_asked(&entry.process, &asked.process),
            ),
        ),
        (
            Class::Memory,
            sides(
                memory(asked.memory),
                memory(entry.memory),
                memory(effective.memory),
                if asked.memory == MemoryAccess::None {
                    memory(entry.memory)
                } else {
                    Vec::new()
                },
            ),
        ),
        (Class::Clocks, Sides::default()),
        (Class::Random, Sides::default()),
        (Class::Runtime, Sides::default()),
        (Class::Host, Sides::default()),
        (Class::Unknown, Sides::default()),
    ];
    // Programs run with their working directory in the plugin's mounts: a tool importing the
    // process interface uses its filesystem grant through it, not through WASI.
    let runs_programs = !imported(Class::Process).is_empty();
    for (class, sides) in rows {
        let imp = imported(class);
        if class == Class::Unknown && imp.is_empty() {
            continue;
        }
        let enforced = enforcement(class, gate_only, &sides.effective, &imp);
        let used_by_programs = class == Class::Filesystem && runs_programs;
        findings_for(
            audit,
            class,
            gate_only,
            &sides,
            &imp,
            &enforced,
            used_by_programs,
        );
        let Sides {
            declared,
            granted,
            effective,
            ..
        } = sides;
        audit.capabilities.push(CapabilityRow {
            capability: class.name(),
            declared,
            granted,
            effective,
            imported: imp,
            enforced,
        });
    }
}

/// How the runtime enforces `class` for this plugin.
fn enforcement(class: Class, gate_only: bool, effective: &[String], imported: &[String]) -> String {
    if gate_only {
        return match class {
            Class::Host => "linked: log only".into(),
            _ if imported.is_empty() => "not imported; not linked for gates".into(),
            _ => {
                "not linked for gates: any call traps, and the gate's verdict counts as a rejection"
                    .into()
            }
        };
    }
    let not_linked = imported
        .iter()
        .filter(|i| !provided_to_tools(i))
        .cloned()
        .collect::<Vec<_>>();
    if !not_linked.is_empty() {
        return format!(
            "not provided by this host ({}): the plugin will not link, so it is refused at load",
            not_linked.join(", ")
        );
    }
    match class {
        Class::Filesystem if effective.is_empty() => {
            "no preopened directory: every path is NotFound".into()
        }
        Class::Filesystem => format!(
            "WASI preopens confined by cap-std: {}",
            effective.join("; ")
        ),
        Class::Environment if effective.is_empty() => {
            "empty environment: nothing of the daemon's is inherited".into()
        }
        Class::Environment => format!("only these variables are set: {}", effective.join(", ")),
        Class::Network | Class::Process | Class::Memory
            if effective.is_empty()
                && imported
                    .iter()
                    .any(|i| crate::runtime::capabilities::Linked::of(i).is_some()) =>
        {
            "not linked without a grant: the plugin is disabled until policy.toml grants it".into()
        }
        Class::Network if effective.is_empty() => {
            "sockets and name lookup are disabled in the WASI context; wasi:http is not linked"
                .into()
        }
        Class::Network => format!(
            "wasi:http linked; every request (each redirect hop too) must go to {}; loopback, \
             private, link-local and metadata addresses refused unless granted by address; \
             sockets and name lookup disabled",
            effective.join(", ")
        ),
        Class::Process if effective.is_empty() => "not linked".into(),
        Class::Process => format!(
            "host process interface: only {} (by name, on the daemon's PATH), arguments as a \
             list, working directory inside a mount, deadline, output capped; the program runs \
             natively with the daemon user's rights",
            effective.join(", ")
        ),
        Class::Memory if effective.is_empty() => "not linked".into(),
        Class::Memory => format!("host memory interface linked: {}", effective.join(", ")),
        Class::Clocks => "real clocks (not a grantable capability)".into(),
        Class::Random => "host randomness (not a grantable capability)".into(),
        Class::Runtime => {
            "stdin empty, stdout discarded, stderr kept (64 KiB) for error messages".into()
        }
        Class::Host => "linked: log only".into(),
        Class::Unknown => "not provided: refused at load".into(),
    }
}

/// One capability as declared, granted and effective.
#[derive(Default)]
struct Sides {
    declared: Vec<String>,
    granted: Vec<String>,
    effective: Vec<String>,
    /// Granted items the manifest does not ask for (no effect: the runtime intersects).
    undeclared: Vec<String>,
}

/// The findings for one capability. `used_otherwise`: the grant is used through another
/// interface (mounts as the working directories of programs), so not importing it is fine.
fn findings_for(
    audit: &mut PluginAudit,
    class: Class,
    gate_only: bool,
    sides: &Sides,
    imported: &[String],
    enforced: &str,
    used_otherwise: bool,
) {
    let Sides {
        effective,
        undeclared,
        ..
    } = sides;
    let cap = class.name();
    let grantable = matches!(
        class,
        Class::Filesystem | Class::Environment | Class::Network | Class::Process | Class::Memory
    );
    // The WASI runtime baseline Rust's std links into every component (stdio, exit, streams,
    // the environment) whatever the author writes: the table shows it and how it is enforced
    // (a gate's calls trap; a tool's environment is empty unless granted), but it is no
    // finding, so that a plugin that does nothing questionable shows none.
    let baseline = matches!(class, Class::Runtime | Class::Environment);
    if gate_only {
        if !imported.is_empty() && class != Class::Host && !baseline {
            audit.findings.push(finding(
                FindingKind::GateImportsWasi,
                Severity::High,
                format!(
                    "the gate imports {} (a capability gates must not have); {enforced}",
                    imported.join(", ")
                ),
            ));
        }
        return;
    }
    let not_linked: Vec<&String> = imported.iter().filter(|i| !provided_to_tools(i)).collect();
    if !not_linked.is_empty() {
        audit.findings.push(finding(
            FindingKind::NotProvided,
            Severity::High,
            format!(
                "imports {}: {enforced}",
                not_linked
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
        return;
    }
    if grantable {
        // Rust's std imports wasi:cli/environment whether or not it reads a variable.
        if !imported.is_empty() && effective.is_empty() && !baseline {
            audit.findings.push(finding(
                FindingKind::ImportsUngranted,
                Severity::Low,
                format!(
                    "imports {cap} ({}) but is granted none: it will be denied ({enforced})",
                    imported.join(", ")
                ),
            ));
        }
        if imported.is_empty() && !effective.is_empty() && !used_otherwise {
            audit.findings.push(finding(
                FindingKind::OverGranted,
                Severity::Medium,
                format!("granted {cap} ({}) but the component never imports it: remove the grant from policy.toml", effective.join("; ")),
            ));
        }
        if !undeclared.is_empty() {
            audit.findings.push(finding(
                FindingKind::GrantedNotDeclared,
                Severity::Low,
                format!("policy.toml grants {cap} ({}) that plugin.toml does not ask for, so it has no effect: remove it", undeclared.join("; ")),
            ));
        }
    }
}

/// The daemon's ports: the range it tries, and the one a running daemon wrote in its
/// rendezvous file.
fn daemon_ports() -> Vec<u16> {
    let mut ports: Vec<u16> = crate::daemon::DEFAULT_PORTS.collect();
    let running = crate::daemon::rendezvous_file()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str::<crate::daemon::Rendezvous>(&t).ok());
    if let Some(r) = running
        && !ports.contains(&r.port)
    {
        ports.push(r.port);
    }
    ports
}
