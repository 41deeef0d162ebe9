//! What a plugin tells the model and how it stands in the walk: its tools as `describe()` gave
//! them when it loaded under the policy (within the load-time budget every plugin gets, and with
//! no capability: see `Plugin::bare_tool_store`), with a hash of each description and schema
//! and the effects each declares; a gate's or skill's priority; the `[config]` it reads; and
//! what the runtime's load refused.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{FindingKind, Loads, Outcome, PluginAudit, Severity, finding};
use crate::runtime::effects::{EffectKind, EffectSpec};
use crate::runtime::manifest::{Access, Kind, Manifest};
use crate::runtime::policy::PluginPolicy;
use crate::runtime::{Grants, LoadError, Plugin};

/// Fill in what `manifest`'s plugin tells the model, its priority and its config, and what the
/// runtime's load of it said.
pub(crate) fn audit(
    audit: &mut PluginAudit,
    manifest: &Manifest,
    entry: &PluginPolicy,
    loads: &Loads<'_>,
) {
    if manifest.kinds.iter().any(|k| *k != Kind::Tool) {
        audit.priority = Some(entry.priority.unwrap_or(manifest.priority));
    }
    audit.sensors.clone_from(&manifest.sensors);
    audit.config = crate::runtime::plugin::config_json(&manifest.config, &entry.config)
        .ok()
        .and_then(|json| serde_json::from_str(&json).ok())
        .unwrap_or(serde_json::Value::Null);
    match loads.outcome(&manifest.name, audit.sha256.as_deref(), &audit.origin) {
        Outcome::Loaded(plugin) => {
            audit.tools = tools(plugin);
            opaque_tools(audit, plugin);
        }
        Outcome::Refused(e) => {
            if manifest.kinds.contains(&Kind::Tool) {
                audit.tools_unread = Some(format!("not loaded under this policy: {e}"));
            }
            refused(audit, e);
        }
        Outcome::Unknown => {
            if manifest.kinds.contains(&Kind::Tool) {
                audit.tools_unread = Some("not loaded".into());
            }
        }
    }
}

/// The runtime's refusal as a finding, unless a finding already says why (a grant not given,
/// a pin that does not match, a component that will not link...).
fn refused(audit: &mut PluginAudit, e: &LoadError) {
    // The finding that already gives this refusal's reason, if the audit made one.
    let has = |kind: FindingKind| audit.findings.iter().any(|f| f.kind == kind);
    let said = match e {
        LoadError::NotGranted { .. } => has(FindingKind::ImportsUngranted),
        LoadError::DisabledByPolicy { .. } => has(FindingKind::DisabledByPolicy),
        LoadError::Tampered { .. } => has(FindingKind::HashMismatch),
        LoadError::Unenforceable { .. } => has(FindingKind::Unenforceable),
        // A component that will not compile, link or match its manifest: said by these.
        LoadError::Component { .. } | LoadError::Invalid { .. } => {
            [
                FindingKind::Invalid,
                FindingKind::UnsupportedWit,
                FindingKind::NotProvided,
                FindingKind::HashMismatch,
                FindingKind::Unenforceable,
            ]
            .into_iter()
            .any(|k| {
                audit
                    .findings
                    .iter()
                    .any(|f| f.kind == k && f.severity == Severity::High)
            }) && !e.to_string().contains("describe")
                && !e.to_string().contains("offers the tool")
        }
        LoadError::Duplicate { .. } | LoadError::Config { .. } => false,
    };
    if !said {
        audit.findings.push(finding(
            FindingKind::RefusedAtLoad,
            Severity::High,
            format!(
                "the runtime refuses to load it: {}",
                crate::runtime::chain(e)
            ),
        ));
    }
}

/// Tools that change things and declare no effects, or declare some but none of a kind their
/// plugin's grants let them have: gates see no such effect of theirs.
fn opaque_tools(audit: &mut PluginAudit, plugin: &Plugin) {
    let imports = |prefix: &str| audit.imports.iter().any(|i| i.starts_with(prefix));
    let reaches = Reaches {
        http: imports("wasi:http/"),
        files: imports("wasi:filesystem/"),
    };
    for t in plugin.tools.iter().filter(|t| !t.read_only) {
        let Some(spec) = plugin.effect_specs.get(&t.name).filter(|s| s.declares()) else {
            audit.findings.push(finding(
                FindingKind::OpaqueTool,
                Severity::Medium,
                format!(
                    "tool {:?} changes things (not read-only) and declares no effects: gates \
                     cannot see which programs, paths or URLs it touches. Mark its arguments \
                     with \"x-effect\" in its schema (program, argv, command-line, path-read, \
                     path-write, url, memory-write).",
                    t.name
                ),
            ));
            continue;
        };
        let missing = undeclared(spec, &plugin.grants, reaches);
        if !missing.is_empty() {
            audit.findings.push(finding(
                FindingKind::OpaqueTool,
                Severity::Medium,
                format!(
                    "tool {:?} changes things (not read-only) and declares effects, but none \
                     of {}: gates see none of those for it. Mark the arguments that carry them \
                     with \"x-effect\" in its schema.",
                    t.name,
                    missing.join("; nor ")
                ),
            ));
        }
    }
}

/// What a component reaches through WASI itself rather than through its programs.
#[derive(Clone, Copy)]
struct Reaches {
    /// It imports `wasi:http`.
    http: bool,
    /// It imports `wasi:filesystem`.
    files: bool,
}

/// What `grants` let a tool do that `spec` declares no effect of, each as the effects that
/// would show it and the grant: programs without `program`, `argv` or `command-line`; a
/// network host without `url`; a read-write mount without `path-write`. A program effect
/// stands for what the plugin's programs reach (gates judge their command line), so it covers
/// the network and the mounts when the component does not reach them through WASI itself.
fn undeclared(spec: &EffectSpec, grants: &Grants, reaches: Reaches) -> Vec<String> {
    let has = |kinds: &[EffectKind]| spec.properties.values().any(|k| kinds.contains(k));
    let runs = !grants.process.is_empty()
        && has(&[
            EffectKind::Program,
            EffectKind::Argv,
            EffectKind::CommandLine,
        ]);
    let mut missing = Vec::new();
    if !grants.process.is_empty() && !runs {
        missing.push(format!(
            "program, argv or command-line (granted programs: {})",
            grants.process.join(", ")
        ));
    }
    if !grants.net.is_empty() && !has(&[EffectKind::Url]) && (reaches.http || !runs) {
        missing.push(format!("url (granted network: {})", grants.net.join(", ")));
    }
    let written: Vec<&str> = grants
        .fs
        .iter()
        .filter(|m| m.access == Access::ReadWrite)
        .map(|m| m.guest.as_str())
        .collect();
    if !written.is_empty() && !has(&[EffectKind::PathWrite]) && (reaches.files || !runs) {
        missing.push(format!(
            "path-write (read-write mounts: {})",
            written.join(", ")
        ));
    }
    missing
}

/// Number the gates that loaded in the order verify walks them ([`crate::gates::walk_order`]:
/// priority, highest first; equal priorities by name).
pub(crate) fn place_gates(plugins: &mut [PluginAudit], loads: &Loads<'_>) {
    let loaded = |p: &PluginAudit| {
        matches!(
            loads.outcome(&p.name, p.sha256.as_deref(), &p.origin),
            Outcome::Loaded(_)
        )
    };
    let mut walk: Vec<(i32, String, usize)> = plugins
        .iter()
        .enumerate()
        .filter(|(_, p)| p.kinds.contains(&Kind::Gate) && loaded(p))
        .filter_map(|(i, p)| Some((p.priority?, p.name.clone(), i)))
        .collect();
    walk.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (place, (_, _, i)) in walk.into_iter().enumerate() {
        if let Some(p) = plugins.get_mut(i) {
            p.walk_position = Some(place + 1);
        }
    }
}

/// One tool as the model is told of it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ToolAudit {
    /// The name offered (a policy alias replaces the plugin's own).
    pub name: String,
    /// What the plugin says of it: read-only. Its word; the grants are what is enforced.
    pub read_only: bool,
    /// The effects its schema declares (`x-effect`), by argument.
    pub effects: BTreeMap<String, String>,
    /// sha256 of the description.
    pub description_sha256: String,
    /// sha256 of the parameters schema.
    pub schema_sha256: String,
    /// The description itself (for a diff; the JSON carries its hash).
    #[serde(skip)]
    pub description: String,
    /// The schema itself (for a diff; the JSON carries its hash).
    #[serde(skip)]
    pub schema: String,
}

/// The tools `plugin` offers, in the order it describes them.
pub fn tools(plugin: &Plugin) -> Vec<ToolAudit> {
    plugin
        .tools
        .iter()
        .map(|t| ToolAudit {
            name: t.name.clone(),
            read_only: t.read_only,
            effects: plugin
                .effect_specs
                .get(&t.name)
                .map(|spec| {
                    spec.properties
                        .iter()
                        .map(|(arg, kind)| (arg.clone(), kind_name(kind)))
                        .collect()
                })
                .unwrap_or_default(),
            description_sha256: crate::builtin::sha256(t.description.as_bytes()),
            schema_sha256: crate::builtin::sha256(t.parameters.as_bytes()),
            description: t.description.clone(),
            schema: t.parameters.clone(),
        })
        .collect()
}

/// An effect kind as the schema writes it (`path-write`).
fn kind_name(kind: &crate::runtime::effects::EffectKind) -> String {
    match serde_json::to_value(kind) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{kind:?}"),
    }
}

/// Most line pairs [`line_diff`] compares; past it, both texts are shown whole.
const MAX_CELLS: usize = 4_000_000;

/// `old` against `new`, line by line in order (a longest common subsequence): lines only in
/// `old` as `- `, lines only in `new` as `+ `. Empty only when the texts are equal.
pub fn line_diff(old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let whole = || {
        a.iter()
            .map(|l| format!("- {l}"))
            .chain(b.iter().map(|l| format!("+ {l}")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    if a.len().saturating_mul(b.len()) > MAX_CELLS || a == b {
        // Too long to align, or equal but for line endings: show both.
        return whole();
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(format!("- {}", a[i]));
            i += 1;
        } else {
            out.push(format!("+ {}", b[j]));
            j += 1;
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_diff_shows_what_went_and_what_came() {
        let d = line_diff(
            "Reads a file.\nRead-only.",
            "Reads a file.\nAlso send it to x.",
        );
        assert_eq!(d, "- Read-only.\n+ Also send it to x.");
        assert_eq!(line_diff("same", "same"), "");
        // Order counts: lines swapped, or one repeated, are a change and show as one.
        assert_eq!(line_diff("a\nb", "b\na"), "- a\n+ a");
        assert_eq!(line_diff("x", "x\nx"), "+ x");
        assert!(!line_diff("a\r\n", "a\n").is_empty());
    }
}
