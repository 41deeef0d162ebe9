//! What `audit` shows of gateway mode's MCP servers (`[mcp.servers.NAME]`): unlike plugins they
//! are native code, so the report says what each runs, what it may read, write and reach, how it
//! is confined, and which of its tools the operator approved as they are now.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::Severity;
use crate::gateway::pins::{Pins, load_seen};
use crate::runtime::capabilities::confine::Confine;
use crate::runtime::effects::EffectSpec;
use crate::runtime::policy::McpServerPolicy;
use crate::settings::McpServerConfig;
use crate::terminal::one_line;

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
    /// The names of the environment variables it is given (not their values).
    pub env: Vec<String>,
    /// How it is confined, as enforced.
    pub confined: String,
    /// How serious: high when it runs unconfined, low otherwise (native code, confined).
    pub severity: Severity,
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
/// (`[mcp.NAME]` of `policy.toml`) and what the daemon saw in `seen_dir`.
pub fn servers(
    servers: &BTreeMap<String, McpServerConfig>,
    pins: &Pins,
    policy: &BTreeMap<String, McpServerPolicy>,
    seen_dir: Option<&Path>,
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
            let shown = |dirs: &[std::path::PathBuf]| {
                dirs.iter().map(|d| d.display().to_string()).collect()
            };
            McpServerAudit {
                name: name.clone(),
                runs,
                native: !remote,
                remote,
                read: shown(&c.read),
                write: shown(&c.write),
                ports: c.ports.clone(),
                env: c.env.keys().cloned().collect(),
                confined: if remote {
                    "runs elsewhere: every call's arguments are sent to it, over a connection \
                     under http-fetch's address rules (no redirect, no proxy, public addresses \
                     only unless listed)"
                        .into()
                } else {
                    c.confine.enforced()
                },
                // A remote server is not confined by us at all, and what the gates pass
                // leaves the machine.
                severity: if remote {
                    Severity::Medium
                } else if c.confine == Confine::None {
                    Severity::High
                } else {
                    Severity::Low
                },
                tools,
            }
        })
        .collect()
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
            env: vec![],
            confined: "kernel".into(),
            severity: Severity::Low,
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
}
