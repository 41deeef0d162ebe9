//! What `audit` shows of gateway mode's MCP servers (`[mcp.servers.NAME]`): unlike plugins they
//! are native code, so the report says what each runs, what it may read, write and reach (for a
//! remote one, the restricted addresses its name may resolve to and the token file it sends),
//! how it is confined, what of that is worth attention, and which of its tools the operator
//! approved as they are now.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::render::one_line;
use super::{DaemonPorts, Finding, FindingKind, Severity, finding};
use crate::gateway::pins::{Pins, load_seen};
use crate::runtime::capabilities::confine::Confine;
use crate::runtime::effects::EffectSpec;
use crate::runtime::policy::McpServerPolicy;
use crate::settings::McpServerConfig;

/// One MCP server, as the audit shows it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct McpServerAudit {
    /// `[mcp.servers.NAME]`.
    pub name: String,
    /// The program and its arguments; a remote server's URL.
    pub runs: Vec<String>,
    /// True for a server the daemon runs: a native program, not a WebAssembly component.
    pub native: bool,
    /// True for a remote server (`url`): it runs elsewhere, and every call's arguments are
    /// sent to it.
    pub remote: bool,
    /// Directories it may read, beside the system's.
    pub read: Vec<String>,
    /// Directories it may read and write.
    pub write: Vec<String>,
    /// TCP ports it may connect to.
    pub ports: Vec<u16>,
    /// A remote server's restricted addresses (loopback, private, link-local, metadata...) its
    /// name may resolve to (`addresses`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub addresses: Vec<String>,
    /// The file a remote server's bearer token is read from (`bearer_file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bearer_file: Option<String>,
    /// The names of the environment variables it is given (not their values).
    pub env: Vec<String>,
    /// How it is confined, as enforced.
    pub confined: String,
    /// How serious: the worst of its findings; else high when it runs unconfined, medium when
    /// it is remote, low otherwise (native code, confined).
    pub severity: Severity,
    /// What is worth attention: a port the daemon listens on among `ports`, a program it may
    /// rewrite, restricted addresses a remote one may reach.
    pub findings: Vec<Finding>,
    /// Its tools as the daemon last listed them, with whether each is approved as it is.
    pub tools: Vec<McpToolAudit>,
}

/// One tool of an MCP server.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct McpToolAudit {
    /// Its name on the server.
    pub name: String,
    /// Its description (what goes into the model's prompt).
    pub description: String,
    /// Whether the operator approved it as it is (`passepartout mcp pin`); only then offered.
    pub approved: bool,
    /// What the operator says its arguments do (`[mcp.NAME.effects]` of `policy.toml`):
    /// argument -> effect; empty when unmapped (gates see it as opaque).
    pub effects: BTreeMap<String, String>,
    /// Why that mapping does not fit the tool (it is then not offered).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effects_error: Option<String>,
}

/// The servers of `servers`, with the operator's `pins`, the effect mappings of `policy`
/// (`[mcp.NAME]` of `policy.toml`) and what the daemon saw in `seen_dir`; a server that may
/// connect to one of `daemon`'s ports is a finding.
pub fn servers(
    servers: &BTreeMap<String, McpServerConfig>,
    pins: &Pins,
    policy: &BTreeMap<String, McpServerPolicy>,
    seen_dir: Option<&Path>,
    daemon: &DaemonPorts,
) -> Vec<McpServerAudit> {
    servers
        .iter()
        .map(|(name, c)| {
            let mut runs: Vec<String> = c.command.iter().chain(&c.url).cloned().collect();
            runs.extend(c.args.iter().cloned());
            let remote = c.url.is_some();
            let tools = seen_dir
                .and_then(|d| load_seen(d, name).ok())
                .unwrap_or_default()
                .into_iter()
                .map(|t| {
                    let map = policy.get(name).and_then(|p| p.effects.get(&t.name));
                    McpToolAudit {
                        approved: pins.approves(name, &t),
                        effects: map
                            .into_iter()
                            .flatten()
                            .map(|(arg, kind)| (arg.clone(), kind.name().to_owned()))
                            .collect(),
                        effects_error: map.and_then(|m| EffectSpec::mapped(&t.schema, m).err()),
                        name: t.name,
                        description: t.description,
                    }
                })
                .collect();
            let shown = |dirs: &[PathBuf]| dirs.iter().map(|d| d.display().to_string()).collect();
            let findings = concerns(name, c, daemon);
            // A remote server is not confined by us at all, and what the gates pass leaves
            // the machine.
            let standing = if remote {
                Severity::Medium
            } else if c.confine == Confine::None {
                Severity::High
            } else {
                Severity::Low
            };
            McpServerAudit {
                name: name.clone(),
                runs,
                native: !remote,
                remote,
                read: shown(&c.read),
                write: shown(&c.write),
                ports: c.ports.clone(),
                addresses: c.addresses.iter().map(ToString::to_string).collect(),
                bearer_file: c.bearer_file.as_ref().map(|f| f.display().to_string()),
                env: c.env.keys().cloned().collect(),
                confined: if remote {
                    format!(
                        "runs elsewhere: every call's arguments are sent to it, over a connection \
                         under http-fetch's address rules (no redirect, no proxy, public \
                         addresses only{})",
                        if c.addresses.is_empty() {
                            String::new()
                        } else {
                            format!(
                                ", and those listed in `addresses`: {}",
                                c.addresses
                                    .iter()
                                    .map(ToString::to_string)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            )
                        }
                    )
                } else {
                    c.confine.enforced()
                },
                severity: findings
                    .iter()
                    .map(|f| f.severity)
                    .fold(standing, Severity::max),
                findings,
                tools,
            }
        })
        .collect()
}

/// What of server `name`'s configuration `c` is worth attention: `ports` that reach where the
/// daemon listens, a program inside its own `write` directories, restricted `addresses` of a
/// remote one.
fn concerns(name: &str, c: &McpServerConfig, daemon: &DaemonPorts) -> Vec<Finding> {
    let mut found = Vec::new();
    let reaching: Vec<String> = c
        .ports
        .iter()
        .filter(|p| daemon.ports().contains(p))
        .map(u16::to_string)
        .collect();
    if !reaching.is_empty() {
        found.push(finding(
            FindingKind::ReachesDaemon,
            Severity::High,
            format!(
                "server {name:?} may connect to port(s) {} on this machine, where the daemon or \
                 its MCP endpoint listens (ports {}): it can talk to the daemon as a client \
                 would, and only the client key keeps it out. Remove them from its `ports`",
                reaching.join(", "),
                daemon.shown()
            ),
        ));
    }
    if let Some(dir) = rewritable(c) {
        found.push(finding(
            FindingKind::WritableProgram,
            Severity::High,
            format!(
                "server {name:?} runs {} from inside {}, a directory it may write: it can \
                 change what runs at its next start. Install the program outside its `write` \
                 directories",
                c.command.as_deref().unwrap_or_default(),
                dir.display()
            ),
        ));
    }
    let restricted: Vec<String> = c
        .addresses
        .iter()
        .filter(|ip| crate::runtime::capabilities::net::is_restricted(**ip))
        .map(ToString::to_string)
        .collect();
    if !restricted.is_empty() {
        found.push(finding(
            FindingKind::RestrictedAddress,
            Severity::High,
            format!(
                "remote server {name:?} may be reached at {} (`addresses`): loopback, private, \
                 link-local or metadata (169.254.169.254) addresses, on this machine or its \
                 network, get every call's arguments{}. List only the addresses its name \
                 should resolve to",
                restricted.join(", "),
                if c.bearer_file.is_some() {
                    " and its bearer token"
                } else {
                    ""
                }
            ),
        ));
    }
    found
}

/// The `write` directory of a server the daemon runs that holds its program (links resolved,
/// as the daemon finds the program: an absolute path, or a name on its PATH), if any.
fn rewritable(c: &McpServerConfig) -> Option<&Path> {
    let name = c.command.as_deref()?;
    let program = if name.starts_with('/') {
        PathBuf::from(name)
    } else {
        crate::runtime::capabilities::process::on_path(name)?
    };
    // ambient authority: resolving the operator's configured paths on this machine.
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    let program_real = real(program.as_path());
    c.write
        .iter()
        .find(|dir| program.starts_with(dir) || program_real.starts_with(real(dir.as_path())))
        .map(PathBuf::as_path)
}

/// The servers as text, for the terminal. Every field is shown on one line ([`one_line`]):
/// what a server wrote (its tools' names and descriptions, and what of its schemas a mapping
/// does not fit) cannot start a row of its own, such as a fake `effects:` or a fake approved
/// tool.
pub fn render(servers: &[McpServerAudit]) -> String {
    let mut out = String::new();
    if servers.is_empty() {
        return out;
    }
    out.push_str(
        "\nMCP servers (gateway mode): native programs or remote services, not WebAssembly\n",
    );
    for s in servers {
        out.push_str(&format!(
            "\n{} [{}]\n  runs:      {}\n  reads:     {}\n  writes:    {}\n  connects:  {}\n  env:       {}\n  confined:  {}\n",
            one_line(&s.name),
            format!("{:?}", s.severity).to_lowercase(),
            one_line(&s.runs.join(" ")),
            list(&s.read),
            list(&s.write),
            if s.ports.is_empty() {
                "nothing".into()
            } else {
                s.ports.iter().map(u16::to_string).collect::<Vec<_>>().join(", ")
            },
            list(&s.env),
            one_line(&s.confined),
        ));
        if s.remote {
            out.push_str(&format!(
                "  addresses: {}\n  token:     {}\n",
                if s.addresses.is_empty() {
                    "public only".into()
                } else {
                    format!("public, and {}", list(&s.addresses))
                },
                s.bearer_file
                    .as_deref()
                    .map_or_else(|| "none".to_owned(), |f| one_line(f).into_owned()),
            ));
        }
        for f in &s.findings {
            let kind = serde_json::to_string(&f.kind).unwrap_or_default();
            out.push_str(&format!(
                "  {} {}: {}\n",
                format!("{:?}", f.severity).to_uppercase(),
                kind.trim_matches('"'),
                one_line(&f.message)
            ));
        }
        if s.tools.is_empty() {
            out.push_str(
                "  tools:     none listed yet (the daemon lists them when it starts it)\n",
            );
        }
        for t in &s.tools {
            out.push_str(&format!(
                "  tool {} ({}): {}\n",
                one_line(&t.name),
                if t.approved {
                    "approved"
                } else {
                    "NOT approved: `passepartout mcp pin` to offer it"
                },
                one_line(&t.description)
            ));
            let effects = match (&t.effects_error, t.effects.is_empty()) {
                (Some(e), _) => format!("mapping does not fit, NOT offered: {}", one_line(e)),
                (None, true) => {
                    format!(
                        "opaque (none mapped in policy.toml [mcp.{}.effects])",
                        one_line(&s.name)
                    )
                }
                (None, false) => t
                    .effects
                    .iter()
                    .map(|(arg, kind)| format!("{} is a {kind}", one_line(arg)))
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            out.push_str(&format!("    effects: {effects}\n"));
        }
    }
    out
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        one_line(&items.join(", ")).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_server_writes_cannot_start_a_row() {
        let server = McpServerAudit {
            name: "files".into(),
            runs: vec!["mcp-files".into()],
            native: true,
            remote: false,
            read: vec![],
            write: vec![],
            ports: vec![],
            addresses: vec![],
            bearer_file: None,
            env: vec![],
            confined: "kernel".into(),
            severity: Severity::Low,
            findings: vec![],
            tools: vec![McpToolAudit {
                name: "rm\n  tool ls (approved): lists".into(),
                description: "x\n    effects: path is a read\n  tool rm (approved): removes".into(),
                approved: false,
                effects: BTreeMap::new(),
                effects_error: Some("no argument \"p\nq\"".into()),
            }],
        };
        let shown = render(&[server]);
        let rows: Vec<&str> = shown.lines().filter(|l| l.starts_with("  tool ")).collect();
        assert_eq!(rows.len(), 1, "{shown}");
        assert!(
            rows[0].contains("rm\\n  tool ls (approved)")
                && rows[0]
                    .ends_with("x\\n    effects: path is a read\\n  tool rm (approved): removes"),
            "{shown}"
        );
        assert_eq!(
            shown
                .lines()
                .filter(|l| l.starts_with("    effects:"))
                .count(),
            1
        );
        assert!(
            shown.contains("NOT offered: no argument \"p\\nq\""),
            "{shown}"
        );
    }

    fn audited(config: &str, daemon: &DaemonPorts) -> McpServerAudit {
        let settings = crate::settings::ConfigFile::parse(config).expect("config");
        servers(
            &settings.mcp.servers,
            &Pins::default(),
            &BTreeMap::new(),
            None,
            daemon,
        )
        .into_iter()
        .next()
        .expect("a server")
    }

    fn kinds(s: &McpServerAudit) -> Vec<FindingKind> {
        s.findings.iter().map(|f| f.kind).collect()
    }

    #[test]
    fn a_server_that_may_connect_where_the_daemon_listens_is_high() {
        let config = "[mcp.servers.notes]\ncommand = \"/usr/bin/python3\"\nports = [5432, 8808]\n";
        let s = audited(config, &DaemonPorts::defaults().with(8808));
        assert_eq!(kinds(&s), [FindingKind::ReachesDaemon], "{s:#?}");
        assert_eq!(s.severity, Severity::High);
        assert!(s.findings[0].message.contains("port(s) 8808"), "{s:#?}");
        // The daemon elsewhere: a confined server, low.
        let s = audited(config, &DaemonPorts::defaults());
        assert!(
            s.findings.is_empty() && s.severity == Severity::Low,
            "{s:#?}"
        );
        let s = audited(
            "[mcp.servers.notes]\ncommand = \"/usr/bin/python3\"\nports = [9105]\n",
            &DaemonPorts::defaults(),
        );
        assert_eq!(kinds(&s), [FindingKind::ReachesDaemon], "{s:#?}");
    }

    #[test]
    fn a_server_that_may_rewrite_its_own_program_is_high() {
        let dir = tempfile::tempdir().expect("temp dir");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).expect("mkdir");
        let config = |program: &Path| {
            format!(
                "[mcp.servers.notes]\ncommand = \"{}\"\nwrite = [\"{}\"]\n",
                program.display(),
                data.display()
            )
        };
        let inside = audited(&config(&data.join("server")), &DaemonPorts::defaults());
        assert_eq!(
            kinds(&inside),
            [FindingKind::WritableProgram],
            "{inside:#?}"
        );
        assert_eq!(inside.severity, Severity::High);
        let outside = audited(
            &config(&dir.path().join("server")),
            &DaemonPorts::defaults(),
        );
        assert!(outside.findings.is_empty(), "{outside:#?}");
    }

    #[test]
    fn a_remote_server_shows_its_addresses_and_token_and_restricted_ones_are_high() {
        let s = audited(
            "[mcp.servers.tickets]\nurl = \"https://tickets.example/mcp\"\n\
             bearer_file = \"/etc/passepartout/tickets.token\"\n\
             addresses = [\"169.254.169.254\", \"10.0.0.5\"]\n",
            &DaemonPorts::defaults(),
        );
        assert_eq!(s.addresses, ["169.254.169.254", "10.0.0.5"]);
        assert_eq!(
            s.bearer_file.as_deref(),
            Some("/etc/passepartout/tickets.token")
        );
        assert_eq!(kinds(&s), [FindingKind::RestrictedAddress], "{s:#?}");
        assert_eq!(s.severity, Severity::High);
        let shown = render(std::slice::from_ref(&s));
        assert!(
            shown.contains("addresses: public, and 169.254.169.254, 10.0.0.5")
                && shown.contains("token:     /etc/passepartout/tickets.token")
                && shown.contains("HIGH restricted-address"),
            "{shown}"
        );
        // Without addresses: public ones only, medium (what the gates pass leaves the machine).
        let public = audited(
            "[mcp.servers.tickets]\nurl = \"https://tickets.example/mcp\"\n",
            &DaemonPorts::defaults(),
        );
        assert!(public.findings.is_empty() && public.severity == Severity::Medium);
        assert!(render(&[public]).contains("addresses: public only"));
    }

    #[test]
    fn a_tab_in_a_field_is_shown_not_obeyed() {
        let s = audited(
            "[mcp.servers.notes]\ncommand = \"/usr/bin/python3\"\nargs = [\"a\\tb\"]\n",
            &DaemonPorts::defaults(),
        );
        let shown = render(&[s]);
        assert!(!shown.contains('\t') && shown.contains("a\\tb"), "{shown}");
    }
}
