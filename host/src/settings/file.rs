//! `passepartout.toml`: the operator's configuration file, read here and nowhere else.
//!
//! Every section is optional, and so is the file: a missing file is the defaults (with the
//! environment's overrides, [`super`]). An unknown key is an error naming it, so a typo never
//! passes silently for a default.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::pipeline::Recovery;
use crate::providers::config::{
    BudgetConfig, Price, ProviderConfig, ProvidersConfig, SelectorRule,
};

/// The whole of `passepartout.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[[providers]]`: the cascade, in order.
    #[serde(default)]
    pub providers: Vec<ProviderConfig>,
    /// `[budget]`: the session budget.
    #[serde(default)]
    pub budget: BudgetConfig,
    /// `[prices.MODEL]`: dollars per million tokens.
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
    /// `[[selector]]`: rules that pick a model or skip a provider.
    #[serde(default)]
    pub selector: Vec<SelectorRule>,
    /// `[daemon]`: where it listens.
    #[serde(default)]
    pub daemon: DaemonSection,
    /// `[memory]`: the Org store (snapshots kept, paths, embeddings).
    #[serde(default)]
    pub memory: crate::memory::MemoryConfig,
    /// `[pipeline]`: the assistant's name, mandates, where replies go, limits, recovery.
    #[serde(default)]
    pub pipeline: PipelineSection,
    /// `[journal]`: how much of a long text a record keeps.
    #[serde(default)]
    pub journal: crate::journal::JournalSection,
    /// `[mcp]`: the daemon's MCP transport over HTTP (docs/mcp.md).
    #[serde(default)]
    pub mcp: McpSection,
}

/// Why `passepartout.toml` could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists and cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file does not parse, or has a key or value that is not allowed.
    #[error("{path}: {source}")]
    Parse {
        /// The file.
        path: String,
        /// The TOML error, naming the line and the field.
        #[source]
        source: toml::de::Error,
    },
}

impl ConfigFile {
    /// Read `path`; a missing file is the defaults.
    ///
    /// # Errors
    /// The file exists but cannot be read or parsed ([`ConfigError`] names the file).
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        // ambient authority: the operator's configuration file.
        match std::fs::read_to_string(path) {
            Ok(text) => toml::from_str(&text).map_err(|source| ConfigError::Parse {
                path: path.display().to_string(),
                source,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(ConfigFile::default()),
            Err(source) => Err(ConfigError::Read {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    /// Parse the text of a `passepartout.toml`.
    ///
    /// # Errors
    /// The TOML error, naming the line and the field.
    pub fn parse(text: &str) -> Result<ConfigFile, toml::de::Error> {
        toml::from_str(text)
    }

    /// What the provider cascade is built from (`[[providers]]`, `[budget]`, `[prices]`,
    /// `[[selector]]`).
    pub fn providers(&self) -> ProvidersConfig {
        ProvidersConfig {
            providers: self.providers.clone(),
            budget: self.budget.clone(),
            prices: self.prices.clone(),
            selector: self.selector.clone(),
        }
    }
}

/// `[daemon]` of `passepartout.toml`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaemonSection {
    /// The port (`PASSEPARTOUT_PORT` and `--port` override). Default: 9105, or 9105-9115 when taken.
    pub port: Option<u16>,
    /// The address (`PASSEPARTOUT_HOST` overrides): loopback only, 127.0.0.1 by default.
    pub host: Option<String>,
    /// The largest frame, in bytes, the daemon reads from an authenticated client or sends
    /// (a larger reply becomes an error reply for its request). Default and most: 16777215.
    pub max_frame: Option<usize>,
}

impl DaemonSection {
    /// The largest frame the daemon reads and sends: `max_frame`, kept within what the
    /// protocol allows (the handshake's frame at least, 16 MiB - 1 at most).
    pub fn frame(&self) -> usize {
        use crate::daemon::protocol::{HANDSHAKE_FRAME, MAX_FRAME};
        self.max_frame
            .map_or(MAX_FRAME, |m| m.clamp(HANDSHAKE_FRAME, MAX_FRAME))
    }
}

/// `[mcp]` of `passepartout.toml`: MCP's streamable HTTP transport, served by the daemon
/// (docs/mcp.md). Off unless `http` names an address.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSection {
    /// Where to serve it, `IP:PORT` (port 0: any free port, written to the daemon's
    /// rendezvous). A loopback address unless `any_interface` says otherwise.
    pub http: Option<String>,
    /// Allow `http` on an address other than loopback (every client still needs the bearer
    /// token; the traffic is plain HTTP). Default: false.
    #[serde(default)]
    pub any_interface: bool,
    /// More names a request's `Host` may carry (`name` or `name:port`), beside the loopback
    /// names and the address served.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Browser origins allowed to call it (`scheme://host[:port]`), beside the loopback ones.
    /// A request without `Origin` (not from a browser) is not checked for it.
    #[serde(default)]
    pub origins: Vec<String>,
    /// How long a call a gate flags waits for a person's decision before it returns, naming
    /// the token (as `passepartout mcp --approval-wait`). Default: 50.
    pub approval_wait_secs: Option<u64>,
    /// `[mcp.servers.NAME]`: external MCP servers whose tools the daemon offers behind the gates
    /// (gateway mode).
    #[serde(default)]
    pub servers: BTreeMap<String, McpServerConfig>,
}

/// `[mcp.servers.NAME]`: an external MCP server the daemon starts and offers the tools of,
/// behind the gates (docs/mcp.md, gateway mode). It is native code: it runs confined like a
/// granted program, with only what is listed here.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program: a name on the daemon's PATH, or an absolute path.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables it gets; of the daemon's own, only PATH and LANG.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Directories it may read, beside the system's (`/usr`, `/lib*`, ...).
    #[serde(default)]
    pub read: Vec<std::path::PathBuf>,
    /// Directories it may read and write.
    #[serde(default)]
    pub write: Vec<std::path::PathBuf>,
    /// TCP ports it may connect to; none by default.
    #[serde(default)]
    pub ports: Vec<u16>,
    /// `"kernel"` (the default: Landlock, seccomp, rlimits, an unprivileged user when the
    /// daemon is root) or `"none"` (it runs with the daemon user's rights; `audit` says so).
    #[serde(default)]
    pub confine: crate::runtime::capabilities::confine::Confine,
    /// CPU seconds it may use before it is stopped (and restarted). Default: 3600.
    pub cpu_secs: Option<u64>,
    /// Longest a tool call may take, seconds. Default: 60.
    pub timeout_secs: Option<u64>,
    /// A remote server's URL (streamable HTTP), instead of `command`: an outbound connection
    /// from the daemon under http-fetch's rules (no redirect followed, no proxy, and a name
    /// that resolves to a loopback, private, link-local or metadata address is refused unless
    /// that address is listed in `addresses`; an address written in the URL itself is
    /// granted by being written there).
    pub url: Option<String>,
    /// A file holding the bearer token sent to a remote server (read at each connection;
    /// only over `https`, or `http` to a loopback address).
    pub bearer_file: Option<std::path::PathBuf>,
    /// Restricted addresses a remote server's name may resolve to (e.g. `["10.0.0.5"]`).
    #[serde(default)]
    pub addresses: Vec<std::net::IpAddr>,
}

impl McpServerConfig {
    /// The longest a tool call may take: `timeout_secs`, 60 s by default.
    pub fn call_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.timeout_secs.unwrap_or(60))
    }
}

/// `[pipeline]` of `passepartout.toml`. Each key is optional; the environment variable named
/// beside it overrides it ([`crate::pipeline::PipelineConfig::from_settings`]).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PipelineSection {
    /// The assistant's name in the prompt (`PASSEPARTOUT_ASSISTANT`; default `Agent`).
    pub assistant: Option<String>,
    /// Standing mandates, written into the prompt's IDENTITY before anything else.
    #[serde(default)]
    pub mandates: Vec<String>,
    /// Where an action with no target and no source goes (`PASSEPARTOUT_DEFAULT_ACTUATOR`;
    /// default `cli`).
    pub default_actuator: Option<String>,
    /// Actuators whose result is not fed back (`PASSEPARTOUT_SILENT_ACTUATORS`).
    pub silent_actuators: Option<Vec<String>>,
    /// Signals deeper than this are dropped (default 10; at most 100).
    pub max_depth: Option<u32>,
    /// Proposals the model gets when gates reject one (default 3; 1 to 10).
    pub attempts: Option<u32>,
    /// Seconds a suspended action waits for a person (`PASSEPARTOUT_APPROVAL_EXPIRY_SECS`).
    pub approval_expiry_secs: Option<u64>,
    /// What the loop does with a failed cycle: `"reinject"` (the default: a loop-error event
    /// one level deeper), `"skip"`, `"abort"`, or `{ fallback = "text" }` (inject this text as
    /// the loop-error event instead).
    pub recovery: Option<Recovery>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_parses_and_an_unknown_key_is_named() {
        let file = ConfigFile::parse(
            "[pipeline]\nassistant = \"Ada\"\nrecovery = { fallback = \"try again\" }\n\
             [daemon]\nport = 9200\n[memory]\nkeep_snapshots = 5\n",
        )
        .expect("parses");
        assert_eq!(file.pipeline.assistant.as_deref(), Some("Ada"));
        assert_eq!(
            file.pipeline.recovery,
            Some(Recovery::Fallback("try again".into()))
        );
        assert_eq!(file.daemon.port, Some(9200));
        assert_eq!(file.memory.keep_snapshots, 5);
        let skip = ConfigFile::parse("[pipeline]\nrecovery = \"skip\"\n").expect("parses");
        assert_eq!(skip.pipeline.recovery, Some(Recovery::Skip));
        let typo = ConfigFile::parse("[pipeline]\nassistent = \"Ada\"\n")
            .expect_err("an unknown key is refused")
            .to_string();
        assert!(typo.contains("assistent"), "{typo}");
    }

    #[test]
    fn a_missing_file_is_the_defaults_and_an_unreadable_one_is_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = ConfigFile::load(&dir.path().join("none.toml")).expect("defaults");
        assert!(missing.providers.is_empty());
        let bad = dir.path().join("bad.toml");
        std::fs::write(&bad, "[budget]\nsession_tokens = \"many\"\n").expect("write");
        let e = ConfigFile::load(&bad).expect_err("refused").to_string();
        assert!(
            e.contains("bad.toml") && e.contains("session_tokens"),
            "{e}"
        );
    }
}
