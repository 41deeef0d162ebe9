//! `policy.toml`: what the operator grants. A plugin gets what its manifest asks for AND its
//! policy entry grants; nothing is inherited from the daemon.
//!
//! ```toml
//! # Applies to every plugin without a [plugins.NAME] entry of its own.
//! [default]
//! limits = { timeout_ms = 60000 }
//!
//! [plugins.files]
//! fs = [{ guest = "/workspace", host = "~/projects/notes", access = "read-write" }]
//! env = ["LANG"]
//! limits = { memory_mib = 128 }
//!
//! # An MCP server's tool `write_file` writes the path in its `path` argument.
//! [mcp.files.effects]
//! write_file = { path = "path-write" }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use super::capabilities::fs::FsGrant;
use super::capabilities::memory::MemoryAccess;
use super::error::LoadError;
use super::manifest::LimitSpec;

/// The operator's policy.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The entry for plugins that have none of their own. Empty by default: nothing granted.
    #[serde(default)]
    pub default: PluginPolicy,
    /// Entries by plugin name. An entry replaces `default` entirely for that plugin.
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginPolicy>,
    /// Gateway mode's MCP servers by name (`[mcp.NAME]`, the name of `[mcp.servers.NAME]` in
    /// `passepartout.toml`): what the operator says their tools' arguments do.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mcp: BTreeMap<String, McpServerPolicy>,
}

/// What the operator says of one MCP server's tools (gateway mode). Its tools declare no
/// effects of their own (whatever their schemas carry is ignored), so gates see them as
/// opaque; a mapping here names which argument is a path, a URL, a program... exactly as a
/// plugin's `x-effect` would:
///
/// ```toml
/// [mcp.files.effects]
/// write_file = { path = "path-write" }
/// fetch = { url = "url" }
/// ```
///
/// A tool whose mapping does not fit its schema (an argument it lacks, or of another type
/// than the effect needs) is not offered; `doctor` says why.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerPolicy {
    /// Tool (its own name on the server) -> argument -> the effect it carries.
    #[serde(default)]
    pub effects: BTreeMap<String, BTreeMap<String, super::effects::EffectKind>>,
}

/// What the operator grants one plugin.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PluginPolicy {
    /// Directories mounted for the plugin.
    #[serde(default)]
    pub fs: Vec<FsGrant>,
    /// Environment variables passed through by name (the daemon's value at load).
    #[serde(default)]
    pub env: Vec<String>,
    /// Hosts for outbound HTTP.
    #[serde(default)]
    pub net: Vec<String>,
    /// Programs the plugin may run.
    #[serde(default)]
    pub process: Vec<String>,
    /// Access to the memory store.
    #[serde(default)]
    pub memory: MemoryAccess,
    /// `false` turns the plugin off: it is not loaded, and a gate turned off this way is not
    /// counted as missing. Only under `[plugins.NAME]`, never `[default]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Limit overrides: these win over the manifest's.
    #[serde(default)]
    pub limits: LimitSpec,
    /// Priority override for gates and skills.
    #[serde(default)]
    pub priority: Option<i32>,
    /// Tools offered under another name: `{ shell = "vendor-shell" }` offers the plugin's
    /// `shell` as `vendor-shell`, so that two plugins naming a tool alike can both load.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tool_aliases: BTreeMap<String, String>,
    /// How its granted programs are confined: `"kernel"` (the default) or `"none"`.
    #[serde(
        default,
        skip_serializing_if = "super::capabilities::confine::Confine::is_default"
    )]
    pub confine: super::capabilities::confine::Confine,
    /// Keys laid over the plugin's own `[config]` (what `host.config()` returns).
    #[serde(default)]
    pub config: toml::Table,
}

/// Why a `policy.toml` is not a policy.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// Not TOML, or a field of the wrong type or unknown (with line and column).
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A setting that is not allowed: which, and what to write instead.
    #[error("{0}")]
    Invalid(String),
}

impl Policy {
    /// Read a policy file. A missing file is an empty policy (nothing granted).
    ///
    /// # Errors
    /// [`LoadError::Config`] naming the file and the TOML error (line, column, field).
    pub fn load(path: &Path) -> Result<Policy, LoadError> {
        // ambient authority: the operator's own policy file.
        match std::fs::read_to_string(path) {
            Ok(text) => Policy::parse(&text).map_err(|e| LoadError::Config {
                path: path.to_owned(),
                source: Box::new(e.into()),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::default()),
            Err(e) => Err(LoadError::Config {
                path: path.to_owned(),
                source: Box::new(e.into()),
            }),
        }
    }

    /// Parse a policy from TOML text.
    ///
    /// # Errors
    /// A [`PolicyError`]: the TOML or schema error, with line and column.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let policy: Policy = toml::from_str(text)?;
        if policy.default.enabled.is_some() {
            return Err(PolicyError::Invalid(
                "[default] enabled: turn plugins off one at a time, under [plugins.NAME] \
                 enabled = false"
                    .into(),
            ));
        }
        Ok(policy)
    }

    /// Whether the operator turned plugin `name` off (`[plugins.NAME] enabled = false`).
    pub fn disabled(&self, name: &str) -> bool {
        self.plugins.get(name).and_then(|p| p.enabled) == Some(false)
    }

    /// The entry that applies to plugin `name`.
    pub fn for_plugin(&self, name: &str) -> &PluginPolicy {
        self.plugins.get(name).unwrap_or(&self.default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_effect_mappings_name_known_kinds_only() {
        let policy = Policy::parse(
            "[mcp.notes.effects]\nsave = { path = \"path-write\" }\nrun = { cmd = \"command-line\" }\n",
        )
        .expect("parses");
        let notes = &policy.mcp["notes"].effects;
        assert_eq!(
            notes["save"]["path"],
            super::super::effects::EffectKind::PathWrite
        );
        assert_eq!(
            notes["run"]["cmd"],
            super::super::effects::EffectKind::CommandLine
        );
        let bad = Policy::parse("[mcp.notes.effects]\nsave = { path = \"disk\" }\n")
            .map(|_| ())
            .expect_err("not a kind");
        let said = bad.to_string();
        assert!(
            said.contains("disk") && said.contains("path-write"),
            "{said}"
        );
        let unknown = Policy::parse("[mcp.notes]\neffect = {}\n").map(|_| ());
        assert!(unknown.is_err(), "a misspelt key is refused");
    }
}
