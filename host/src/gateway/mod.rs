//! Gateway mode: the tools of external MCP servers (`[mcp.servers.NAME]` in
//! `passepartout.toml`) offered behind the same gates, approvals and journal as any tool
//! (docs/mcp.md).
//!
//! The daemon starts each server confined ([`server`]) and keeps it running. A server's tools
//! are offered only as the operator approved them ([`pins`]), under names the model and MCP
//! clients accept: `SERVER-TOOL`, lowercased, anything but letters and digits made `-`, with a
//! short hash of the original name appended where two would be the same or one would take a
//! name already offered. Their identity is the server and the tool (`mcp:SERVER`); they declare
//! no effects, so gates treat them as opaque, unless the operator maps their arguments to
//! effects in `policy.toml` (`[mcp.NAME.effects]`, [`McpServerPolicy`]).

pub mod bounded_http;
pub mod bounds;
pub mod error;
pub mod pins;
pub mod remote;
pub mod server;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{JsonObject, ProtocolVersion};
use sha2::{Digest as _, Sha256};

use crate::runtime::capabilities::fs::{Access, Mount, Protected};
use crate::runtime::effects::{
    ActionContext, EffectKind, EffectSpec, ExternalTools, ToolIdentity, derive,
};
use crate::runtime::policy::McpServerPolicy;
use crate::settings::McpServerConfig;

/// The MCP protocol versions Passepartout speaks, as a server (its HTTP transport) and as a
/// client (of the servers it connects): those of the handshake (`initialize`) that the MCP
/// SDKs connect with. From 2026-07-28 on, rmcp keeps what it looked up for each tool name it
/// sees, on either side, and never lets it go: a peer speaking it could make the daemon hold
/// every name it sends or lists.
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

pub use error::CallError;
pub use server::{Launch, ServerStatus};

/// A server tool as offered: the name the model and clients see, where it comes from, and what
/// it says (as pinned).
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedTool {
    /// The name offered.
    pub name: String,
    /// The server (`[mcp.servers.NAME]`).
    pub server: String,
    /// The tool's own name on the server.
    pub tool: String,
    /// Its description.
    pub description: String,
    /// Its arguments' JSON Schema.
    pub schema: serde_json::Value,
    /// sha256 over its name, description and schema: what the operator pinned.
    pub sha256: String,
}

/// Why the gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// A server's configuration is not usable.
    #[error("[mcp.servers.{server}]: {why}")]
    Config {
        /// The server.
        server: String,
        /// What is wrong and what to do.
        why: String,
    },
    /// A directory a server the daemon runs may read or write holds, or is inside, one of the
    /// daemon's own places.
    #[error(
        "[mcp.servers.{server}]: `{key}` lists {}, which holds {}, one of the daemon's own \
         keys, database, configuration, plugins, compiled code or its program: no server it \
         runs may see them. List a directory that does not contain it",
        dir.display(),
        protected.display()
    )]
    Protected {
        /// The server.
        server: String,
        /// `read` or `write`.
        key: &'static str,
        /// The directory listed.
        dir: PathBuf,
        /// The place it would expose.
        protected: PathBuf,
    },
    /// A remote server's configuration (`url`) is not usable.
    #[error("[mcp.servers.{server}]: {source}")]
    Remote {
        /// The server.
        server: String,
        /// What is wrong and what to do.
        #[source]
        source: RemoteError,
    },
}

/// Why a remote server's configuration (`url` in `[mcp.servers.NAME]`) is not usable.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not usable.
    #[error(transparent)]
    Endpoint(#[from] remote::EndpointError),
    /// `bearer_file` with a URL that would carry the token in the clear.
    #[error(
        "`bearer_file` with {url}: the token would cross the network in the clear; use \
         https"
    )]
    ClearToken {
        /// The URL as written.
        url: String,
    },
    /// A relative `bearer_file`: it would name another file in each working directory, and
    /// the one the daemon reads would not be the one kept from plugins.
    #[error(
        "`bearer_file` {}: give the token file's absolute path (a relative one, or one \
         starting with `~`, names another file in each working directory)",
        path.display()
    )]
    RelativeToken {
        /// The path as written.
        path: std::path::PathBuf,
    },
    /// A setting for a server the daemon runs, which would not apply to a remote one.
    #[error(
        "`{key}` is for a server the daemon runs (`command`); a remote server (`url`) runs \
         elsewhere"
    )]
    LocalOnly {
        /// The setting.
        key: &'static str,
    },
}

/// Why a server tool's effect mapping (`[mcp.NAME.effects]` of `policy.toml`) does not fit
/// the tool.
#[derive(Debug, thiserror::Error)]
#[error("{why}")]
pub struct MappingError {
    /// The server.
    pub server: String,
    /// The tool, by its own name on the server.
    pub tool: String,
    /// What does not fit (an argument the tool does not have, say).
    pub why: String,
}

/// The servers, their supervisors and the operator's pins.
pub struct Gateway {
    servers: Vec<Arc<server::Server>>,
    pins: pins::PinsFile,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway")
            .field(
                "servers",
                &self.servers.iter().map(|s| &s.name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Whether `name` is a server name: `^[a-z][a-z0-9-]{0,31}$`.
pub fn valid_server_name(name: &str) -> bool {
    crate::runtime::tools::lowercase_name(name, 32)
}

/// Check every server's configuration.
///
/// # Errors
/// The first server whose name or configuration is not usable, saying what to do.
pub fn check(
    servers: &BTreeMap<String, McpServerConfig>,
    protected: &Protected,
) -> Result<(), GatewayError> {
    for (name, config) in servers {
        let bad = |why: &str| GatewayError::Config {
            server: name.clone(),
            why: why.into(),
        };
        if !valid_server_name(name) {
            return Err(bad(
                "a server's name is lowercase letters, digits and `-`, starting with a letter, at most 32",
            ));
        }
        match (&config.command, &config.url) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "give `command` (a server the daemon runs) or `url` (a remote one), not both",
                ));
            }
            (None, None) => {
                return Err(bad(
                    "`command` (the program that serves MCP over stdio) or `url` (a remote \
                     server's streamable HTTP endpoint) is missing",
                ));
            }
            (None, Some(url)) => {
                check_remote(config, url).map_err(|source| GatewayError::Remote {
                    server: name.clone(),
                    source,
                })?;
            }
            (Some(_), None) => {
                if config.bearer_file.is_some() || !config.addresses.is_empty() {
                    return Err(bad(
                        "`bearer_file` and `addresses` are for a remote server (`url`); a \
                         server the daemon runs gets what it needs in `env`",
                    ));
                }
                check_dirs(name, config, protected)?;
            }
        }
    }
    Ok(())
}

/// A server the daemon runs sees none of the daemon's own places (as a plugin's mounts), and
/// writes nowhere that holds the program it starts through.
fn check_dirs(
    server: &str,
    config: &McpServerConfig,
    protected: &Protected,
) -> Result<(), GatewayError> {
    check_lists(server, [&config.read, &config.write], |dir, writes| {
        protected.exposed(dir, writes)
    })
}

/// [`check_dirs`] on the directories as resolved for a start (`read`, `write`): what the
/// server is confined to is what was checked.
fn check_resolved(
    server: &str,
    read: &[PathBuf],
    write: &[PathBuf],
    protected: &Protected,
) -> Result<(), GatewayError> {
    check_lists(server, [read, write], |dir, writes| {
        protected.exposed_resolved(dir, writes)
    })
}

/// The first of `read` and `write` (`[read, write]`) that `exposed` says exposes a protected
/// place.
fn check_lists(
    server: &str,
    [read, write]: [&[PathBuf]; 2],
    exposed: impl Fn(&std::path::Path, bool) -> Option<crate::runtime::capabilities::fs::Exposed>,
) -> Result<(), GatewayError> {
    for (key, dirs, writes) in [("read", read, false), ("write", write, true)] {
        for dir in dirs {
            if let Some(exposed) = exposed(dir, writes) {
                return Err(GatewayError::Protected {
                    server: server.to_owned(),
                    key,
                    dir: dir.clone(),
                    protected: exposed.place,
                });
            }
        }
    }
    Ok(())
}

/// A remote server's configuration: a usable URL, a token only over a private channel, and
/// none of the settings that confine a program the daemon runs (they would not apply).
fn check_remote(config: &McpServerConfig, url: &str) -> Result<(), RemoteError> {
    let endpoint = remote::endpoint(url)?;
    if config.bearer_file.is_some() && !endpoint.private_channel() {
        return Err(RemoteError::ClearToken {
            url: url.to_owned(),
        });
    }
    if let Some(path) = config.bearer_file.as_ref().filter(|p| !p.is_absolute()) {
        return Err(RemoteError::RelativeToken { path: path.clone() });
    }
    let local_only = [
        ("args", !config.args.is_empty()),
        ("env", !config.env.is_empty()),
        ("read", !config.read.is_empty()),
        ("write", !config.write.is_empty()),
        ("ports", !config.ports.is_empty()),
        ("confine", config.confine != Default::default()),
        ("cpu_secs", config.cpu_secs.is_some()),
    ];
    if let Some((key, _)) = local_only.iter().find(|(_, set)| *set) {
        return Err(RemoteError::LocalOnly { key });
    }
    Ok(())
}

impl Gateway {
    /// The token files its remote servers read at each connection: as protected as the
    /// daemon's own places for as long as the servers run.
    pub fn token_files(&self) -> Vec<std::path::PathBuf> {
        self.servers
            .iter()
            .filter_map(|s| s.token_file().map(std::path::Path::to_path_buf))
            .collect()
    }

    /// Start every server in `servers` (on the current tokio runtime); `pins` is
    /// `mcp-pins.toml`.
    ///
    /// # Errors
    /// A server's configuration is not usable ([`check`]).
    pub fn start(
        servers: &BTreeMap<String, McpServerConfig>,
        pins: PathBuf,
        launch: &Launch,
    ) -> Result<Arc<Gateway>, GatewayError> {
        check(servers, &launch.protected)?;
        let servers: Vec<Arc<server::Server>> = servers
            .iter()
            .map(|(name, config)| Arc::new(server::Server::new(name.clone(), config.clone())))
            .collect();
        for s in &servers {
            tokio::spawn(server::supervise(s.clone(), launch.clone()));
        }
        Ok(Arc::new(Gateway {
            servers,
            pins: pins::PinsFile::new(pins),
        }))
    }

    /// Every server's status.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// The configuration of `server`.
    pub fn config(&self, server: &str) -> Option<McpServerConfig> {
        self.servers
            .iter()
            .find(|s| s.name == server)
            .map(|s| s.config().clone())
    }

    /// The configuration of each server, by name.
    pub fn configs(&self) -> Vec<(String, McpServerConfig)> {
        self.servers
            .iter()
            .map(|s| (s.name.clone(), s.config().clone()))
            .collect()
    }

    /// The tools offered now: those of running servers that the operator approved as they
    /// are. Names come from the configuration and the pins alone (every pinned tool of every
    /// server, in order), never from which server happens to run: a name means the same tool
    /// across restarts. None takes a name in `taken` (the plugins' tools) or another's.
    pub fn tools(&self, taken: &BTreeSet<String>) -> Vec<OfferedTool> {
        let pins = self.pins.current();
        let mut used = taken.clone();
        let mut offered = Vec::new();
        for s in &self.servers {
            let Some(pinned) = pins.servers.get(&s.name) else {
                continue;
            };
            let status = s.status();
            let running = status.state == server::State::Running;
            for tool in pinned.keys() {
                // A server that lists one tool twice gets it offered once.
                let Some(name) = offered_name(&s.name, tool, &used) else {
                    continue;
                };
                used.insert(name.clone());
                let now = status
                    .tools
                    .iter()
                    .find(|t| t.name == *tool && pins.approves(&s.name, t));
                if let (true, Some(t)) = (running, now) {
                    offered.push(OfferedTool {
                        name,
                        server: s.name.clone(),
                        tool: t.name.clone(),
                        description: t.description.clone(),
                        schema: t.schema.clone(),
                        sha256: t.sha256.clone(),
                    });
                }
            }
        }
        offered
    }

    /// Call `tool` of `server` with `args`.
    ///
    /// # Errors
    /// No such server ([`CallError::NoServer`]), it is not running, or the call failed (the
    /// tool's own error included): as [`server::Server::call`].
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: JsonObject,
    ) -> Result<String, CallError> {
        let s = self
            .servers
            .iter()
            .find(|s| s.name == server)
            .ok_or_else(|| CallError::NoServer {
                server: server.to_owned(),
            })?;
        s.call(tool, args).await
    }
}

/// The gateway's tools as one agent offers them: named beside its plugins' tools, with the
/// effects the operator's `policy.toml` maps their arguments to.
#[derive(Clone, Debug)]
pub struct Offer {
    gateway: Arc<Gateway>,
    /// The plugins' tool names, which no server tool may take.
    taken: BTreeSet<String>,
    /// `[mcp.NAME]` of `policy.toml`, by server.
    policy: Arc<BTreeMap<String, McpServerPolicy>>,
}

impl Offer {
    /// `gateway`'s tools beside plugin tools named `taken`, their effects mapped by `policy`.
    pub fn new(
        gateway: Arc<Gateway>,
        taken: BTreeSet<String>,
        policy: BTreeMap<String, McpServerPolicy>,
    ) -> Offer {
        Offer {
            gateway,
            taken,
            policy: Arc::new(policy),
        }
    }

    /// Every server's status.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.gateway.status()
    }

    /// The effects the operator mapped `tool`'s arguments to; none when unmapped.
    fn spec(&self, tool: &OfferedTool) -> Result<EffectSpec, MappingError> {
        match self
            .policy
            .get(&tool.server)
            .and_then(|p| p.effects.get(&tool.tool))
        {
            Some(map) => EffectSpec::mapped(&tool.schema, map).map_err(|why| MappingError {
                server: tool.server.clone(),
                tool: tool.tool.clone(),
                why,
            }),
            None => Ok(EffectSpec::default()),
        }
    }

    /// The tools offered now: a tool whose effect mapping does not fit it is not.
    pub fn tools(&self) -> Vec<OfferedTool> {
        let mut tools = self.gateway.tools(&self.taken);
        tools.retain(|t| self.spec(t).is_ok());
        tools
    }

    /// What is wrong with the effect mappings of `policy.toml`: a server that is not
    /// configured, a tool its server does not list, a mapping that does not fit its tool
    /// (which is then not offered).
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let status = self.gateway.status();
        for (server, policy) in self.policy.iter() {
            let Some(s) = status.iter().find(|s| s.name == *server) else {
                problems.push(format!(
                    "policy.toml [mcp.{server}]: there is no [mcp.servers.{server}] in \
                     passepartout.toml"
                ));
                continue;
            };
            for tool in policy.effects.keys() {
                if s.state == server::State::Running && !s.tools.iter().any(|t| t.name == *tool) {
                    problems.push(format!(
                        "policy.toml [mcp.{server}.effects]: the server has no tool {tool:?}"
                    ));
                }
            }
        }
        for t in self.gateway.tools(&self.taken) {
            if let Err(e) = self.spec(&t) {
                problems.push(format!(
                    "policy.toml [mcp.{}.effects] {}: {e}; the tool is not offered until the \
                     mapping fits it",
                    t.server, t.tool
                ));
            }
        }
        problems
    }

    /// The tool offered as `name`, if it is one of these.
    pub fn find(&self, name: &str) -> Option<OfferedTool> {
        self.tools().into_iter().find(|t| t.name == name)
    }

    /// Why a call of `tool` with `args` cannot be judged: a mapped argument it leaves out
    /// whose schema gives no default of the effect's type. The server would act where a default
    /// of its own says, which no gate saw; the call must name it.
    pub fn unplaced(&self, tool: &OfferedTool, args: &JsonObject) -> Option<String> {
        let spec = self.spec(tool).ok()?;
        let (arg, kind) = spec.properties.iter().find(|(arg, kind)| {
            !args.contains_key(arg.as_str()) && schema_default(&tool.schema, arg, **kind).is_none()
        })?;
        Some(format!(
            "tool {:?}: argument `{arg}` ({}) is left out and its schema gives no default the \
             gates could judge; the server would use one of its own: name `{arg}`",
            tool.name,
            kind.name()
        ))
    }

    /// Call `tool` with `args`, as the gates judged them: each mapped argument the call leaves
    /// out given its schema's default (`with_defaults`; the pipeline already filled them in,
    /// [`ExternalTools::complete`]), so that the server writes where the gates saw it would,
    /// not where a default of its own says.
    ///
    /// # Errors
    /// As [`Gateway::call`].
    pub async fn call(&self, tool: &OfferedTool, args: JsonObject) -> Result<String, CallError> {
        let args = match self.spec(tool) {
            Ok(spec) => with_defaults(&tool.schema, &spec, args),
            // Never for a tool `find` gave: a tool whose mapping does not fit is not offered.
            Err(_) => args,
        };
        self.gateway.call(&tool.server, &tool.tool, args).await
    }
}

/// `args` with each argument `spec` maps that they leave out set to its schema's default, when
/// the schema has one of the effect's type: what the gates judge, and what the server is sent.
/// A mapped argument without such a default stays out (the server's own default applies, which
/// gates judge as unknown).
fn with_defaults(
    schema: &serde_json::Value,
    spec: &EffectSpec,
    mut args: JsonObject,
) -> JsonObject {
    for (arg, kind) in &spec.properties {
        if !args.contains_key(arg)
            && let Some(default) = schema_default(schema, arg, *kind)
        {
            args.insert(arg.clone(), default);
        }
    }
    args
}

/// A path a server takes from the directory it runs in: relative, and nothing a server or its
/// libraries might expand (`~`, `$VAR`, `%VAR%`, a URL's `scheme:`).
fn plain_relative(path: &str) -> bool {
    !path.is_empty() && !path.starts_with(['/', '~']) && !path.contains(['$', '%', ':', '`'])
}

/// What a mapped argument a call leaves out stands for: the schema's default when it is of
/// the effect's type, else an empty value.
fn default_of(schema: &serde_json::Value, arg: &str, kind: EffectKind) -> serde_json::Value {
    schema_default(schema, arg, kind).unwrap_or_else(|| match kind {
        EffectKind::Argv => serde_json::Value::Array(Vec::new()),
        _ => serde_json::Value::String(String::new()),
    })
}

/// The schema's default for `arg`, when it is of the effect's type (an array for argv, a
/// string for the others).
fn schema_default(
    schema: &serde_json::Value,
    arg: &str,
    kind: EffectKind,
) -> Option<serde_json::Value> {
    let default = &schema["properties"][arg]["default"];
    let fits = match kind {
        EffectKind::Argv => default.is_array(),
        _ => default.is_string(),
    };
    fits.then(|| default.clone())
}

/// A server tool's identity: the server, and as its version the sha256 the operator pinned
/// (a tool that changes is another version).
fn identity(tool: &OfferedTool, declares_effects: bool) -> ToolIdentity {
    ToolIdentity {
        plugin: format!("mcp:{}", tool.server),
        version: format!("sha256:{}", tool.sha256),
        tool: tool.tool.clone(),
        read_only: false,
        declares_effects,
        component: tool.sha256.clone(),
    }
}

impl ExternalTools for Offer {
    fn complete(&self, name: &str, args: &mut JsonObject) {
        if let Some(tool) = self.find(name)
            && let Ok(spec) = self.spec(&tool)
        {
            *args = with_defaults(&tool.schema, &spec, std::mem::take(args));
        }
    }

    fn identity(&self, name: &str) -> Option<ToolIdentity> {
        let tool = self.find(name)?;
        let spec = self.spec(&tool).ok()?;
        Some(identity(&tool, spec.declares()))
    }

    fn context(&self, name: &str, args: &JsonObject) -> Option<ActionContext> {
        let tool = self.find(name)?;
        let spec = self.spec(&tool).ok()?;
        let config = self.gateway.config(&tool.server)?;
        // A server the daemon runs is native code here: its paths are this machine's, a plain
        // relative one taken from the directory it runs in. A remote server's are not.
        let remote = config.url.is_some();
        let cwd = server::working_dir(&config);
        // As the server will be sent them (`Offer::call`).
        let mut args = with_defaults(&tool.schema, &spec, args.clone());
        for (arg, kind) in &spec.properties {
            // A mapped argument the call leaves out still has its effect (the server's
            // default): its schema's default, else an empty value gates judge as unknown.
            let value = args
                .entry(arg.clone())
                .or_insert_with(|| default_of(&tool.schema, arg, *kind));
            if remote || !matches!(kind, EffectKind::PathRead | EffectKind::PathWrite) {
                continue;
            }
            if let serde_json::Value::String(p) = value
                && plain_relative(p)
            {
                *p = cwd.join(&*p).to_string_lossy().into_owned();
            }
        }
        let root = Mount {
            guest: "/".into(),
            host: "/".into(),
            access: Access::ReadWrite,
            resolved: "/".into(),
        };
        let mounts = if remote { Vec::new() } else { vec![root] };
        let mut effects = derive(&spec, &args, &mounts);
        // `~/x`, `$HOME/x`, `file:///x`: what the server makes of it is not known here.
        for p in effects.reads.iter_mut().chain(effects.writes.iter_mut()) {
            if !p.guest.starts_with('/') {
                p.host = None;
            }
        }
        Some(ActionContext {
            tool: Some(identity(&tool, spec.declares())),
            effects,
        })
    }
}

/// The name `tool` of `server` is offered under, given the names already `used`; `None` when
/// even its hashed name is used (the server lists the tool twice).
fn offered_name(server: &str, tool: &str, used: &BTreeSet<String>) -> Option<String> {
    let mut name = String::with_capacity(server.len() + tool.len() + 1);
    for c in format!("{server}-{tool}").chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && name.ends_with('-')) {
            name.push(c);
        }
    }
    let mut name: String = name.trim_end_matches('-').chars().take(64).collect();
    let reserved = |n: &str| crate::runtime::tools::RESERVED.iter().any(|(_, r)| *r == n);
    if used.contains(&name) || reserved(&name) {
        let hash = hex::encode(Sha256::digest(format!("{server}\0{tool}")));
        name = format!(
            "{}-{}",
            name.chars().take(57).collect::<String>(),
            &hash[..6]
        );
    }
    (!used.contains(&name)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever a server names its tools, every offered name is one the model and MCP
        /// clients accept, and no two are the same, nor any taken one.
        #[test]
        fn offered_names_are_valid_and_distinct(
            tools in proptest::collection::vec("[A-Za-z0-9_.\\- ]{0,80}", 1..20),
        ) {
            let taken: BTreeSet<String> = ["notes-x".to_owned(), "eval".to_owned()].into();
            let mut used = taken.clone();
            for t in &tools {
                let Some(name) = offered_name("notes", t, &used) else {
                    // Only a tool listed twice is left out.
                    prop_assert!(tools.iter().filter(|o| *o == t).count() > 1, "{t:?} left out");
                    continue;
                };
                prop_assert!(crate::runtime::tools::valid_name(&name), "{name:?}");
                prop_assert!(used.insert(name.clone()), "{name:?} offered twice");
            }
        }
    }

    #[test]
    fn only_plain_relative_paths_are_taken_from_the_server_s_folder() {
        for plain in ["notes.txt", "a/b", "../up", "with space"] {
            assert!(plain_relative(plain), "{plain}");
        }
        for not in [
            "",
            "/etc/passwd",
            "~/.ssh/authorized_keys",
            "~root/x",
            "$HOME/x",
            "a/${HOME}",
            "%APPDATA%/x",
            "file:///etc/passwd",
            "`id`",
        ] {
            assert!(!plain_relative(not), "{not}");
        }
        let schema = serde_json::json!({ "properties": {
            "path": { "type": "string", "default": "/tmp/d.txt" },
            "argv": { "type": "array", "default": ["-l"] },
            "url": { "type": "string", "default": 3 },
        }});
        assert_eq!(
            default_of(&schema, "path", EffectKind::PathWrite),
            "/tmp/d.txt"
        );
        assert_eq!(
            default_of(&schema, "argv", EffectKind::Argv),
            serde_json::json!(["-l"])
        );
        assert_eq!(
            default_of(&schema, "url", EffectKind::Url),
            "",
            "a default of another type"
        );
        assert_eq!(default_of(&schema, "none", EffectKind::PathRead), "");
    }

    /// What the gates judge of a mapped argument the call leaves out is what the server is
    /// sent: its schema's default; without one, nothing (the server's own default applies,
    /// judged as unknown). Arguments the call gives, and unmapped ones, are left as they are.
    #[test]
    fn a_mapped_argument_left_out_is_sent_as_its_schema_default() {
        let schema = serde_json::json!({ "properties": {
            "path": { "type": "string", "default": "/srv/judged.txt" },
            "to": { "type": "string" },
            "mode": { "type": "string", "default": "w" },
        }});
        let spec = EffectSpec {
            properties: [
                ("path".to_owned(), EffectKind::PathWrite),
                ("to".to_owned(), EffectKind::Url),
            ]
            .into(),
        };
        let args = JsonObject::from_iter([("text".to_owned(), serde_json::json!("x"))]);
        assert_eq!(
            serde_json::Value::Object(with_defaults(&schema, &spec, args)),
            serde_json::json!({ "text": "x", "path": "/srv/judged.txt" })
        );
        let given = JsonObject::from_iter([("path".to_owned(), serde_json::json!("mine.txt"))]);
        assert_eq!(with_defaults(&schema, &spec, given.clone()), given);
    }

    #[test]
    fn a_server_is_refused_for_a_bad_name_or_settings_that_would_not_apply() {
        let ok = McpServerConfig {
            command: Some("python3".into()),
            args: Vec::new(),
            env: BTreeMap::new(),
            read: Vec::new(),
            write: Vec::new(),
            ports: Vec::new(),
            confine: Default::default(),
            cpu_secs: None,
            timeout_secs: None,
            url: None,
            bearer_file: None,
            addresses: Vec::new(),
        };
        let one = |name: &str, c: McpServerConfig| {
            check(&[(name.to_owned(), c)].into(), &Protected::default())
        };
        let refused = |c: McpServerConfig, why: &str| {
            let said = one("notes", c)
                .map(|()| String::new())
                .unwrap_or_else(|e| e.to_string());
            assert!(said.contains(why), "{said:?} should say {why:?}");
        };
        assert!(one("notes", ok.clone()).is_ok());
        assert!(one("Notes", ok.clone()).is_err());
        let remote = McpServerConfig {
            command: None,
            url: Some("https://tools.example.com/mcp".into()),
            bearer_file: Some("/etc/token".into()),
            ..ok.clone()
        };
        assert!(one("notes", remote.clone()).is_ok());
        refused(
            McpServerConfig {
                url: Some("http://tools.example.com/mcp".into()),
                ..remote.clone()
            },
            "in the clear",
        );
        refused(
            McpServerConfig {
                write: vec!["/srv".into()],
                ..remote.clone()
            },
            "`write` is for a server the daemon runs",
        );
        refused(
            McpServerConfig {
                command: Some("python3".into()),
                ..remote.clone()
            },
            "not both",
        );
        for relative in ["token", "~/.tickets.token", "./secrets/token"] {
            refused(
                McpServerConfig {
                    bearer_file: Some(relative.into()),
                    ..remote.clone()
                },
                "give the token file's absolute path",
            );
        }
        refused(
            McpServerConfig {
                url: Some("file:///etc/passwd".into()),
                ..remote
            },
            "use http or https",
        );
        refused(
            McpServerConfig {
                addresses: vec!["10.0.0.5".parse().expect("ip")],
                ..ok.clone()
            },
            "for a remote server",
        );
        refused(
            McpServerConfig {
                command: None,
                ..ok
            },
            "is missing",
        );
    }
}
