//! Why a call of an MCP server's tool, or the start of a server, failed: each error names the
//! server where it knows it, and keeps what rmcp, the kernel or serde said as its source.

use std::path::PathBuf;
use std::time::Duration;

/// Why a call of a server's tool gave no result. Each names the server.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// No server of that name is configured.
    #[error("no MCP server {server:?}")]
    NoServer {
        /// The name asked for.
        server: String,
    },
    /// The server is not running: it is being started again.
    #[error("the MCP server {server} is not running (it is being restarted); try again")]
    NotRunning {
        /// The server.
        server: String,
    },
    /// The server did not answer in time (`timeout_secs`).
    #[error("the MCP server {server} did not answer within {timeout:?}")]
    Timeout {
        /// The server.
        server: String,
        /// How long it had.
        timeout: Duration,
    },
    /// The call failed on the way: the connection, or the MCP exchange.
    #[error("the MCP server {server}: {source}")]
    Service {
        /// The server.
        server: String,
        /// rmcp's error.
        #[source]
        source: Box<rmcp::ServiceError>,
    },
    /// The tool ran and said it failed; the message is its own output.
    #[error("{text}")]
    Tool {
        /// The server.
        server: String,
        /// The tool, by its own name on the server.
        tool: String,
        /// What the tool answered.
        text: String,
    },
}

/// Why a server could not be started (or connected to, when remote), or stopped being served
/// before it ran.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A remote server could not be reached: its URL, where its name resolves, its token, or
    /// the HTTP client.
    #[error(transparent)]
    Remote(#[from] super::remote::TransportError),
    /// The command that starts it could not be made.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// Its process could not be started.
    #[error("cannot start it: {source}")]
    Spawn {
        /// Why the process did not start.
        #[source]
        source: std::io::Error,
    },
    /// Its process has no stdin or stdout to speak MCP over.
    #[error("no pipes to it")]
    NoPipes,
    /// It started, but could not be spoken to; with the last lines it printed, if any.
    #[error("{source}{}", last_words(.said))]
    Serve {
        /// What went wrong speaking to it.
        #[source]
        source: ServeError,
        /// The last lines of its stderr (none for a remote server).
        said: Vec<String>,
    },
}

/// Why a started server could not be spoken to: its MCP handshake or its tool listing.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// No handshake in time.
    #[error("no MCP handshake within {within:?}")]
    HandshakeTimeout {
        /// How long it had.
        within: Duration,
    },
    /// The server answered the handshake with a protocol version not spoken here
    /// ([`super::PROTOCOL_VERSIONS`]).
    #[error(
        "the server speaks MCP {version:?}, which is not served here (only {served}); \
         configure it for one of those"
    )]
    Version {
        /// The version it answered with (shortened).
        version: String,
        /// The versions spoken here.
        served: String,
    },
    /// The handshake failed.
    #[error("the MCP handshake failed: {said}{hint}")]
    Handshake {
        /// rmcp's error as said to the operator (without its transport's Rust type).
        said: String,
        /// What to do, when that is known (empty otherwise).
        hint: &'static str,
        /// rmcp's error.
        #[source]
        source: Box<rmcp::service::ClientInitializeError>,
    },
    /// The tools were not listed in time.
    #[error("it did not list its tools within {within:?}")]
    ListTimeout {
        /// How long it had.
        within: Duration,
    },
    /// Listing the tools failed.
    #[error("it did not list its tools: {source}")]
    List {
        /// rmcp's error.
        #[source]
        source: Box<rmcp::ServiceError>,
    },
}

/// Why the command that starts a server could not be made from its configuration.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// No `command` is configured.
    #[error("no `command` to start it with")]
    NoCommand,
    /// A directory it is given exposes one of the daemon's own places as it resolves now
    /// (checked at each start, on the paths it is then confined to: a directory, or a link
    /// on the way to it, may have changed since the daemon started).
    #[error("not started: {0}")]
    Exposes(#[source] Box<super::GatewayError>),
    /// `command` is neither a name to find on PATH nor an absolute path.
    #[error("command {name:?}: give a program's name on PATH, or an absolute path")]
    NotAProgram {
        /// The command as configured.
        name: String,
    },
    /// `command` is not on the PATH.
    #[error("command `{name}` is not on the PATH")]
    NotOnPath {
        /// The command as configured.
        name: String,
    },
    /// The kernel cannot confine it, and it is not to run unconfined.
    #[error(
        "this kernel has no Landlock, so the server cannot be confined and is not started; \
         to run it unconfined anyway, set `confine = \"none\"` for it (audit reports it)"
    )]
    NoLandlock,
    /// A `read` or `write` directory cannot be resolved (it does not exist, say).
    #[error("{dir}: {source}")]
    Dir {
        /// The directory as configured.
        dir: PathBuf,
        /// Why it cannot be resolved.
        #[source]
        source: std::io::Error,
    },
    /// The user to run it as cannot be told from its directory.
    #[error(transparent)]
    RunAs(#[from] crate::runtime::capabilities::confine::ConfineError),
    /// The daemon runs as root and the server has no directory whose owner it could run as.
    #[error(
        "the daemon runs as root, and a server runs as the owner of its \
                            first `write` (or `read`) directory: give it one owned by the user \
                            it should run as"
    )]
    RunsAsRoot,
    /// Its confinement cannot be written for the trampoline.
    #[error("cannot describe it: {source}")]
    Describe {
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
}

/// `; its last words: A | B` for the lines a server last printed, or nothing when it printed
/// none.
pub(super) fn last_words(said: &[String]) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!("; its last words: {}", said.join(" | "))
    }
}
