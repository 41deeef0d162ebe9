//! `passepartout audit`: what every plugin can do, read from the component itself without
//! running it, compared with what its manifest declares, what the policy grants and how the
//! runtime enforces it. It uses the runtime's own checks ([`Grants::resolve`],
//! [`Grants::intersect`], [`Limits::resolve`], the loader's export check), so the audit and the
//! runtime cannot disagree.

pub mod classify;
pub mod diff;
mod limits;
pub mod mcp;
pub mod render;
pub mod told;

use serde::Serialize;

use crate::runtime::capabilities::confine::Confine;
use crate::runtime::capabilities::fs::{Filesystem, Mount, Protected};
use crate::runtime::capabilities::net::Network;
use crate::runtime::capabilities::process::Process;
use crate::runtime::capabilities::{FACTORS, Factor, Grants, Sides};
use crate::runtime::loader::LoadReport;
use crate::runtime::manifest::{Kind, LimitSpec, Manifest};
use crate::runtime::plugin::{Origin, PluginSource, WIT_VERSION};
use crate::runtime::policy::{PluginPolicy, Policy};
use crate::runtime::{Limits, PluginId, Runtime};
use crate::settings::ConfigFile;
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
    /// A grant wider than needed, a limit raised above the default, or a plugin the runtime
    /// will not load until the policy grants what it imports.
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
    /// at the default (low: nothing to fix unless the plugin needs it).
    LimitNotGranted,
    /// A tool that changes things (not read-only) and declares no effects in its schema:
    /// gates cannot see what it would do.
    OpaqueTool,
    /// Granted programs that run without kernel confinement (`confine = "none"`).
    Unconfined,
    /// A network grant, or an MCP server's `ports`, that reaches a port the daemon (or its
    /// MCP endpoint) listens on, on this machine.
    ReachesDaemon,
    /// An MCP server whose program lies inside a directory it may write: it can change what
    /// runs at its next start.
    WritableProgram,
    /// A remote MCP server whose name may resolve to loopback, private, link-local or
    /// metadata addresses (`addresses`): calls can reach this machine or its network.
    RestrictedAddress,
    /// Runs with limits above the defaults (granted by the policy, or by the runtime to a
    /// first-party plugin).
    LimitGranted,
    /// The runtime refuses to load it for a reason no other finding gives (a tool that takes
    /// another plugin's name, a `describe()` beyond its bounds, a duplicate name...).
    RefusedAtLoad,
}

impl FindingKind {
    /// Every kind (docs/audit.md must name each: a test checks).
    pub const ALL: [FindingKind; 20] = [
        FindingKind::ImportsUngranted,
        FindingKind::OverGranted,
        FindingKind::GrantedNotDeclared,
        FindingKind::UnboundedLimit,
        FindingKind::HashMismatch,
        FindingKind::UnsupportedWit,
        FindingKind::GateImportsWasi,
        FindingKind::NotProvided,
        FindingKind::Unenforceable,
        FindingKind::Unpinned,
        FindingKind::Invalid,
        FindingKind::DisabledByPolicy,
        FindingKind::LimitNotGranted,
        FindingKind::OpaqueTool,
        FindingKind::Unconfined,
        FindingKind::ReachesDaemon,
        FindingKind::WritableProgram,
        FindingKind::RestrictedAddress,
        FindingKind::LimitGranted,
        FindingKind::RefusedAtLoad,
    ];
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
    /// The limits its manifest asks for.
    pub limits_asked: LimitSpec,
    /// The limits the policy grants it (for a first-party plugin, with what is granted to it
    /// as if by the policy).
    pub limits_granted: LimitSpec,
    /// A gate's or skill's priority in force (the policy's, else the manifest's).
    pub priority: Option<i32>,
    /// A gate's place in the walk (1 runs first) among the gates that load, when known.
    pub walk_position: Option<usize>,
    /// A skill's sensors, when its manifest lists them (a skill sees the text of every signal
    /// it is asked about; without a list, that is every signal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensors: Option<Vec<String>>,
    /// The `[config]` it reads (`host.config()`): the manifest's with the policy's keys laid
    /// over it.
    pub config: serde_json::Value,
    /// The tools it offers, as `describe()` gave them under the policy.
    pub tools: Vec<told::ToolAudit>,
    /// Why its tools could not be read (it does not load under this policy), if so.
    pub tools_unread: Option<String>,
    /// The manifest, for a diff (not in the JSON: its parts are above).
    #[serde(skip)]
    pub manifest: Option<Manifest>,
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
    /// The MCP servers of gateway mode (native programs), when there are any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<mcp::McpServerAudit>,
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
            .chain(self.mcp_servers.iter().map(|s| s.severity))
            .max()
    }

    /// Add gateway mode's MCP `servers`, counted in the summary.
    pub fn with_mcp_servers(mut self, servers: Vec<mcp::McpServerAudit>) -> AuditReport {
        for s in &servers {
            self.summary.count(s.severity);
        }
        self.mcp_servers = servers;
        self
    }
}

impl Summary {
    fn count(&mut self, severity: Severity) {
        match severity {
            Severity::High => self.high += 1,
            Severity::Medium => self.medium += 1,
            Severity::Low => self.low += 1,
            Severity::Info => self.info += 1,
        }
    }
}

/// The ports a daemon listens on, or may, on this machine: what no plugin's network grant and
/// no MCP server's `ports` may reach (only the client key would keep it out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonPorts {
    ports: Vec<u16>,
}

impl DaemonPorts {
    /// The range a daemon tries when no port is configured ([`crate::daemon::DEFAULT_PORTS`]).
    pub fn defaults() -> DaemonPorts {
        DaemonPorts {
            ports: crate::daemon::DEFAULT_PORTS.collect(),
        }
    }

    /// Where a daemon started with `settings` listens: the [`DaemonPorts::defaults`],
    /// `[daemon] port`, `PASSEPARTOUT_PORT` (which overrides it), the port of `[mcp] http`,
    /// and what a running daemon wrote in its rendezvous file (its port and its MCP
    /// endpoint's). The daemon writes its rendezvous before it loads plugins, so its own audit
    /// ([`audit_loaded`]) finds where it listens there.
    pub fn of(settings: &ConfigFile) -> DaemonPorts {
        let mut ports = DaemonPorts::defaults();
        ports.add(settings.daemon.port);
        ports.add(crate::settings::PORT.parse::<u16>());
        ports.add(settings.mcp.http.as_deref().and_then(port_of));
        // ambient authority: the running daemon's rendezvous, to learn where it listens.
        let running = crate::daemon::rendezvous_file()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|t| serde_json::from_str::<crate::daemon::Rendezvous>(&t).ok());
        if let Some(r) = running {
            ports.add(Some(r.port));
            ports.add(r.mcp_http.as_deref().and_then(port_of));
        }
        ports
    }

    /// These and `port` (port 0, "any free port", is none).
    pub fn with(mut self, port: u16) -> DaemonPorts {
        self.add(Some(port));
        self
    }

    /// The ports, in the order found.
    pub fn ports(&self) -> &[u16] {
        &self.ports
    }

    fn add(&mut self, port: Option<u16>) {
        if let Some(p) = port.filter(|p| *p != 0 && !self.ports.contains(p)) {
            self.ports.push(p);
        }
    }

    /// The ports as a list for a message (`9105, 9106`).
    fn shown(&self) -> String {
        self.ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The port of an address `IP:PORT` (`[mcp] http`) or of a URL `http://IP:PORT/mcp` (the
/// rendezvous' `mcp_http`).
fn port_of(text: &str) -> Option<u16> {
    let authority = text.split_once("://").map_or(text, |(_, rest)| rest);
    let authority = authority.split('/').next().unwrap_or(authority);
    authority
        .parse::<std::net::SocketAddr>()
        .map(|a| a.port())
        .ok()
        .or_else(|| {
            authority
                .rsplit_once(':')
                .and_then(|(_, port)| port.parse().ok())
        })
}

/// Audit every source against `policy`, reading each component and loading the set as the
/// runtime would (calling only `describe`, within the load-time budget), so that what the
/// runtime refuses and what each plugin tells the model are in the report. A grant that
/// reaches one of `daemon`'s ports is a finding.
pub fn audit(
    runtime: &Runtime,
    sources: &[PluginSource],
    policy: &Policy,
    daemon: &DaemonPorts,
) -> AuditReport {
    let report = runtime.load_all(sources, policy);
    report_of(runtime, sources, policy, daemon, &Loads::Report(&report))
}

/// As [`audit`], for sources already loaded into `loaded` (the daemon's set): their tools are
/// read from there instead of loading each plugin a second time. The daemon's ports are
/// [`DaemonPorts::of`] `settings` (its `passepartout.toml`), the environment and the
/// rendezvous the daemon wrote.
pub fn audit_loaded(
    runtime: &Runtime,
    sources: &[PluginSource],
    policy: &Policy,
    settings: &ConfigFile,
    loaded: &[crate::runtime::Plugin],
) -> AuditReport {
    let daemon = DaemonPorts::of(settings);
    report_of(runtime, sources, policy, &daemon, &Loads::Daemon(loaded))
}

fn report_of(
    runtime: &Runtime,
    sources: &[PluginSource],
    policy: &Policy,
    daemon: &DaemonPorts,
    loads: &Loads<'_>,
) -> AuditReport {
    let mut plugins: Vec<PluginAudit> = sources
        .iter()
        .map(|s| audit_source(runtime, s, policy, daemon, loads))
        .collect();
    told::place_gates(&mut plugins, loads);
    let mut summary = Summary::default();
    for f in plugins.iter().flat_map(|p| &p.findings) {
        summary.count(f.severity);
    }
    AuditReport {
        schema_version: SCHEMA_VERSION,
        host_wit_version: WIT_VERSION,
        plugins,
        mcp_servers: Vec::new(),
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

/// Audit one plugin (alone: a tool name another installed plugin offers is not seen), as
/// [`audit`] does.
pub fn audit_one(
    runtime: &Runtime,
    source: &PluginSource,
    policy: &Policy,
    daemon: &DaemonPorts,
) -> PluginAudit {
    let report = runtime.load_all(std::slice::from_ref(source), policy);
    audit_source(runtime, source, policy, daemon, &Loads::Report(&report))
}

/// Where the audit learns what the runtime makes of a plugin.
pub(crate) enum Loads<'a> {
    /// The daemon's loaded set: a plugin not in it is not described.
    Daemon(&'a [crate::runtime::Plugin]),
    /// The runtime's own load of the sources ([`Runtime::load_all`]).
    Report(&'a LoadReport),
}

/// What the runtime made of one plugin.
pub(crate) enum Outcome<'a> {
    /// Loaded.
    Loaded(&'a crate::runtime::Plugin),
    /// Refused, and why.
    Refused(&'a crate::runtime::LoadError),
    /// Not known (the daemon did not load it; the daemon's errors say why).
    Unknown,
}

impl Loads<'_> {
    /// What the runtime made of plugin `name` with component `sha256` from `origin`: a
    /// plugin loaded from another place (a copy of a built-in, a second folder of the same
    /// name) is not this one.
    pub(crate) fn outcome(&self, name: &str, sha256: Option<&str>, origin: &Origin) -> Outcome<'_> {
        let plugins = match self {
            Loads::Daemon(p) => *p,
            Loads::Report(r) => &r.plugins,
        };
        if let Some(p) = plugins
            .iter()
            .find(|p| p.id.name == name && sha256 == Some(p.sha256.as_str()) && p.origin == *origin)
        {
            return Outcome::Loaded(p);
        }
        let Loads::Report(r) = self else {
            return Outcome::Unknown;
        };
        let errors = || r.errors.iter().chain(&r.disabled);
        // A duplicate names the place it came from; prefer it, then any error of the name.
        errors()
            .find(|e| {
                matches!(e, crate::runtime::LoadError::Duplicate { name: n, second, .. }
                    if n == name && *second == origin.to_string())
            })
            .or_else(|| {
                errors().find(|e| {
                    e.plugin_name() == Some(name)
                        && !matches!(e, crate::runtime::LoadError::Duplicate { .. })
                })
            })
            .map_or(Outcome::Unknown, Outcome::Refused)
    }
}

fn audit_source(
    runtime: &Runtime,
    source: &PluginSource,
    policy: &Policy,
    daemon: &DaemonPorts,
    loads: &Loads<'_>,
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
        limits_asked: LimitSpec::default(),
        limits_granted: LimitSpec::default(),
        priority: None,
        walk_position: None,
        sensors: None,
        config: serde_json::Value::Null,
        tools: Vec::new(),
        tools_unread: None,
        manifest: None,
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
    limits::audit(
        &mut audit,
        &manifest,
        entry,
        source.origin == Origin::Builtin,
        runtime.deadlines(),
    );
    let disabled = policy.disabled(&manifest.name);
    capabilities(
        &mut audit,
        &id,
        &manifest,
        entry,
        &interfaces.imports,
        disabled,
        &Machine {
            protected: runtime.protected(),
            daemon,
        },
    );
    told::audit(&mut audit, &manifest, entry, loads);
    audit.manifest = Some(manifest);
    audit
}

/// What of this machine a plugin's grants are checked against.
struct Machine<'a> {
    /// The daemon's own places no mount may expose.
    protected: &'a Protected,
    /// The ports the daemon listens on.
    daemon: &'a DaemonPorts,
}

fn capabilities(
    audit: &mut PluginAudit,
    id: &PluginId,
    manifest: &Manifest,
    entry: &PluginPolicy,
    imports: &[String],
    disabled: bool,
    machine: &Machine<'_>,
) {
    let protected = machine.protected;
    let gate_only = manifest.kinds.iter().all(|k| *k == Kind::Gate);
    let asked = &manifest.capabilities;
    let effective = match Grants::intersect(asked, entry, protected) {
        Ok(g) => g,
        Err(e) => {
            audit
                .findings
                .push(finding(FindingKind::Invalid, Severity::High, e.to_string()));
            Grants::default()
        }
    };
    if effective.confine == Confine::None && !effective.process.is_empty() {
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
    let ports = machine.daemon;
    let programs = !effective.process.is_empty();
    let reaching: Vec<&str> = effective
        .net
        .iter()
        .filter(|g| {
            // Programs reach 80 and 443 under a grant without a port: a daemon configured
            // there is reached too.
            crate::runtime::capabilities::net::reaches_local_port(g, programs, ports.ports())
                || (programs
                    && crate::runtime::capabilities::process::ports(std::slice::from_ref(*g))
                        .iter()
                        .any(|p| ports.ports().contains(p)))
        })
        .map(String::as_str)
        .collect();
    if !reaching.is_empty() {
        audit.findings.push(finding(
            FindingKind::ReachesDaemon,
            Severity::High,
            format!(
                "its network grant {} reaches the daemon's own port on this machine, or its MCP \
                 endpoint's (ports {}: the default range, [daemon] port, PASSEPARTOUT_PORT, \
                 [mcp] http and a running daemon's; granted programs are confined by port \
                 only): it can talk to the daemon as a client would, and only the client key \
                 keeps it out. Grant the hosts and ports it needs, not these",
                reaching.join(", "),
                ports.shown()
            ),
        ));
    }
    // The runtime's own decision (gate-only plugins may ask for nothing; grants it cannot
    // enforce are refused), as findings.
    if let Err(e) = Grants::resolve(id, &manifest.kinds, asked, entry, protected) {
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
    // Programs run with their working directory in the plugin's mounts, and connect to the
    // ports of its network grant: a tool importing the process interface uses those grants
    // through its programs, not through WASI.
    let runs_programs = !imported(Class::Capability(Process.name())).is_empty();
    let subject = Subject {
        gate_only,
        plugin: &manifest.name,
        disabled,
    };
    let rows = FACTORS
        .into_iter()
        .map(|f| (Class::Capability(f.name()), Some(f)))
        .chain(Class::OTHERS.into_iter().map(|c| (c, None)));
    for (class, factor) in rows {
        let imp = imported(class);
        if class == Class::Unknown && imp.is_empty() {
            continue;
        }
        let mut sides = factor
            .map(|f| f.sides(asked, entry, &effective))
            .unwrap_or_default();
        let mut enforced = enforcement(class, factor, gate_only, &effective, &imp);
        let used_by_programs = if class == Class::Capability(Filesystem.name()) {
            show_where_mounts_lead(&mut sides, &mut enforced, entry, &effective.fs);
            runs_programs
        } else if class == Class::Capability(Network.name()) {
            if !gate_only {
                enforced.push_str(&programs_network(&effective));
            }
            runs_programs && programs
        } else {
            false
        };
        let row = Row {
            class,
            factor,
            sides,
            imported: imp,
            enforced,
        };
        findings_for(audit, &row, &subject, used_by_programs);
        let Sides {
            declared,
            granted,
            effective,
            ..
        } = row.sides;
        audit.capabilities.push(CapabilityRow {
            capability: class.name(),
            declared,
            granted,
            effective,
            imported: row.imported,
            enforced: row.enforced,
        });
    }
}

/// How the runtime enforces `class` for this plugin: for a grantable capability, the sentence
/// its own module gives ([`Factor::enforced`]).
fn enforcement(
    class: Class,
    factor: Option<&dyn Factor>,
    gate_only: bool,
    grants: &Grants,
    imported: &[String],
) -> String {
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
    if let Some(f) = factor {
        if !f.granted(grants) && imported.iter().any(|i| linked_only_when_granted(f, i)) {
            return "not linked without a grant: the plugin is disabled until policy.toml grants it"
                .into();
        }
        return f.enforced(grants);
    }
    match class {
        Class::Clocks => "real clocks (not a grantable capability)".into(),
        Class::Random => "host randomness (not a grantable capability)".into(),
        Class::Runtime => {
            format!(
                "stdin empty, stdout discarded, stderr kept ({} KiB) for error messages",
                crate::runtime::state::STDERR_CAPACITY / 1024
            )
        }
        Class::Host => "linked: log only".into(),
        Class::Unknown | Class::Capability(_) => "not provided: refused at load".into(),
    }
}

fn linked_only_when_granted(f: &dyn Factor, import: &str) -> bool {
    f.linked_only_when_granted(import.split('@').next().unwrap_or(import))
}

/// The plugin a capability row belongs to, as far as its findings care.
struct Subject<'a> {
    gate_only: bool,
    plugin: &'a str,
    /// Turned off by the policy: what would keep it from loading matters no more.
    disabled: bool,
}

/// One capability row of a plugin, before it is reported.
struct Row {
    class: Class,
    factor: Option<&'static dyn Factor>,
    sides: Sides,
    imported: Vec<String>,
    enforced: String,
}

/// The findings for one capability. `used_otherwise`: the grant is used through another
/// interface (mounts as the working directories of programs, network hosts as the ports its
/// programs connect to), so not importing it is fine.
fn findings_for(audit: &mut PluginAudit, row: &Row, on: &Subject<'_>, used_otherwise: bool) {
    let Subject {
        gate_only,
        plugin,
        disabled,
    } = *on;
    let Row {
        class,
        factor,
        sides,
        imported,
        enforced,
    } = row;
    let cap = class.name();
    // The WASI runtime baseline Rust's std links into every component (stdio, exit, streams,
    // the environment) whatever the author writes: the table shows it and how it is enforced
    // (a gate's calls trap; a tool's environment is empty unless granted), but it is no
    // finding, so that a plugin that does nothing questionable shows none.
    let baseline = *class == Class::Runtime || factor.is_some_and(|f| f.baseline());
    if gate_only {
        if !imported.is_empty() && *class != Class::Host && !baseline {
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
    let not_linked: Vec<&str> = imported
        .iter()
        .filter(|i| !provided_to_tools(i))
        .map(String::as_str)
        .collect();
    if !not_linked.is_empty() {
        audit.findings.push(finding(
            FindingKind::NotProvided,
            Severity::High,
            format!("imports {}: {enforced}", not_linked.join(", ")),
        ));
        return;
    }
    let Some(factor) = factor else { return };
    let Sides {
        effective,
        undeclared,
        ..
    } = sides;
    if !imported.is_empty() && effective.is_empty() && !baseline {
        // The same refusal, and the same policy line, as the loader's.
        let disables = imported
            .iter()
            .any(|i| linked_only_when_granted(*factor, i));
        let (severity, outcome) = if disables {
            (
                if disabled {
                    Severity::Info
                } else {
                    Severity::Medium
                },
                "the runtime does not load the plugin at all until it is granted",
            )
        } else {
            (
                Severity::Low,
                "its calls are denied; the rest of the plugin works",
            )
        };
        audit.findings.push(finding(
            FindingKind::ImportsUngranted,
            severity,
            format!(
                "imports {cap} ({}) but is granted none: {outcome} ({enforced}). To allow it, {}",
                imported.join(", "),
                factor.grant_hint(plugin)
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

/// The mounts whose host path leads elsewhere (a link on the way): the runtime mounts where
/// it leads ([`Mount::resolved`]), so the granted and effective columns and the enforced text
/// say so (`/workspace -> /tmp/innocent → /root/.ssh (ReadOnly)`).
fn show_where_mounts_lead(
    sides: &mut Sides,
    enforced: &mut String,
    policy: &PluginPolicy,
    mounts: &[Mount],
) {
    for m in mounts.iter().filter(|m| m.resolved != m.host) {
        let written = format!("{} -> {}", m.guest, m.host.display());
        let led = format!("{written} → {}", m.resolved.display());
        for item in &mut sides.effective {
            if let Some(access) = item.strip_prefix(&written).filter(|a| a.starts_with(" (")) {
                *item = format!("{led}{access}");
            }
        }
        *enforced = enforced.replace(&format!("{written} ("), &format!("{led} ("));
        // The policy's grant that the runtime mounts for this guest path: its first.
        if let Some(i) = policy.fs.iter().position(|g| g.guest == m.guest)
            && let Some(item) = sides.granted.get_mut(i)
            && !item.contains(" → ")
            && let Some((head, access)) = item.rsplit_once(" (")
        {
            *item = format!("{head} → {} ({access}", m.resolved.display());
        }
    }
}

/// What a plugin's granted programs may reach with its network grant, for the network row's
/// enforced text: the kernel confines them by TCP port (Landlock), not by host, so the hosts
/// the grant names do not bind them. Empty without programs or a network grant.
fn programs_network(grants: &Grants) -> String {
    if grants.process.is_empty() || grants.net.is_empty() {
        return String::new();
    }
    if grants.confine == Confine::None {
        return format!(
            "; its programs ({}) run unconfined: they connect to any address and port",
            grants.process.join(", ")
        );
    }
    format!(
        "; its programs ({}) may connect over TCP to port(s) {} at ANY address, loopback, LAN \
         and metadata (169.254.169.254) included: the kernel confines them by port, not by host",
        grants.process.join(", "),
        crate::runtime::capabilities::process::ports(&grants.net)
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_docs_list_every_finding_with_its_level() {
        let docs = include_str!("../../../docs/audit.md");
        let all: std::collections::BTreeSet<_> = FindingKind::ALL.into_iter().collect();
        assert_eq!(all.len(), FindingKind::ALL.len(), "ALL lists a kind twice");
        for kind in FindingKind::ALL {
            // A new kind that is not in ALL fails to compile here.
            match kind {
                FindingKind::ImportsUngranted
                | FindingKind::OverGranted
                | FindingKind::GrantedNotDeclared
                | FindingKind::UnboundedLimit
                | FindingKind::HashMismatch
                | FindingKind::UnsupportedWit
                | FindingKind::GateImportsWasi
                | FindingKind::NotProvided
                | FindingKind::Unenforceable
                | FindingKind::Unpinned
                | FindingKind::Invalid
                | FindingKind::DisabledByPolicy
                | FindingKind::LimitNotGranted
                | FindingKind::OpaqueTool
                | FindingKind::Unconfined
                | FindingKind::ReachesDaemon
                | FindingKind::WritableProgram
                | FindingKind::RestrictedAddress
                | FindingKind::LimitGranted
                | FindingKind::RefusedAtLoad => {}
            }
            let name = serde_json::to_string(&kind).expect("a name");
            let row = format!("| `{}` | ", name.trim_matches('"'));
            assert!(docs.contains(&row), "docs/audit.md has no row for {name}");
        }
    }
    #[test]
    fn the_configured_daemon_and_mcp_ports_are_the_daemon_s() {
        let settings =
            ConfigFile::parse("[daemon]\nport = 9200\n[mcp]\nhttp = \"127.0.0.1:8808\"\n")
                .expect("settings");
        let ports = DaemonPorts::of(&settings);
        for port in [9105, 9115, 9200, 8808] {
            assert!(ports.ports().contains(&port), "{port}: {ports:?}");
        }
        // Port 0 ("any free port") is none; a port is listed once.
        let any = DaemonPorts::defaults().with(0).with(9105);
        assert_eq!(any, DaemonPorts::defaults());
        assert_eq!(port_of("http://127.0.0.1:8808/mcp"), Some(8808));
        assert_eq!(port_of("[::1]:9000"), Some(9000));
        assert_eq!(port_of("localhost:7000"), Some(7000));
        assert_eq!(port_of("[::1]"), None);
    }

    #[test]
    fn programs_connect_by_port_to_any_address() {
        let grants = Grants {
            net: vec!["api.example.org".into(), "example.net:8443".into()],
            process: vec!["curl".into()],
            ..Grants::default()
        };
        assert_eq!(
            crate::runtime::capabilities::process::ports(&grants.net),
            [80, 443, 8443],
            "as the process capability confines them"
        );
        let said = programs_network(&grants);
        assert!(
            said.contains("curl") && said.contains("80, 443, 8443") && said.contains("ANY address"),
            "{said}"
        );
        let unconfined = Grants {
            confine: Confine::None,
            ..grants.clone()
        };
        assert!(programs_network(&unconfined).contains("unconfined"));
        let no_programs = Grants {
            process: Vec::new(),
            ..grants
        };
        assert_eq!(programs_network(&no_programs), "");
    }
}
