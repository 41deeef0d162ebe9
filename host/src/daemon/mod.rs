//! The daemon: the pipeline behind a framed TCP protocol on 127.0.0.1 (docs/protocol.md), many
//! clients at once, replies and events to the client that asked, a heartbeat, and a graceful
//! stop on SIGINT/SIGTERM.

pub mod answer;
pub mod client;
mod connection;
mod events;
mod focus;
mod handshake;
pub mod keys;
pub mod lobby;
pub mod ops;
pub mod outbox;
pub mod protocol;
pub mod reload;
pub mod request;
pub mod server;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use keys::Keys;
pub use protocol::{ProtocolError, Secret};

/// The default port, and the range tried when it is taken.
pub const DEFAULT_PORTS: std::ops::RangeInclusive<u16> = 9105..=9115;

/// What clients read to find the daemon.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Rendezvous {
    /// The daemon's process id.
    pub pid: u32,
    /// 127.0.0.1.
    pub host: String,
    /// The port it got.
    pub port: u16,
    /// `hmac`: clients prove the client key and sign every frame; `none`: the daemon runs
    /// with `--insecure-no-auth`.
    pub auth: String,
    /// Where the daemon serves MCP over streamable HTTP (`http://IP:PORT/mcp`), when
    /// `[mcp] http` asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_http: Option<String>,
}

/// Where the daemon writes its [`Rendezvous`]: `$XDG_RUNTIME_DIR/passepartout/daemon.json`,
/// else the data directory.
pub fn rendezvous_file() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "passepartout")?;
    Some(
        dirs.runtime_dir()
            .unwrap_or_else(|| dirs.data_dir())
            .join("daemon.json"),
    )
}

/// Raise this process's soft limit on open files to its hard limit (at most 2^20), as servers
/// do: each client, each file or stream a plugin call holds (up to
/// [`crate::runtime::state::MAX_RESOURCES`] a call) and each program's pipes is a descriptor,
/// and the soft limit is often 1,024. Granted programs get 1,024 again
/// ([`crate::runtime::capabilities::confine`]). Returns the soft limit now in force.
pub fn raise_open_files_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes into the rlimit we pass by reference.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 0;
    }
    let want = lim.rlim_max.min(1 << 20);
    if lim.rlim_cur < want {
        let raised = libc::rlimit {
            rlim_cur: want,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: setrlimit(2) reads the rlimit we pass by reference.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = want;
        }
    }
    lim.rlim_cur
}

/// How long a client may stay silent before it is closed (`PASSEPARTOUT_READ_TIMEOUT_SECS`,
/// default 300).
pub fn read_timeout_from_env() -> Duration {
    crate::settings::READ_TIMEOUT_SECS
        .parse()
        .map_or(Duration::from_secs(300), Duration::from_secs)
}

/// The heartbeat interval (`PASSEPARTOUT_HEARTBEAT_SECS`, default 60).
pub fn heartbeat_from_env() -> Duration {
    seconds_from_env(crate::settings::HEARTBEAT_SECS, 60)
}

/// `PASSEPARTOUT_MEMORY_AUTO_SAVE_SECS` (default 300, as the seed).
pub fn auto_save_from_env() -> Duration {
    seconds_from_env(crate::settings::MEMORY_AUTO_SAVE_SECS, 300)
}

/// How often the daemon looks for changes to its plugin directory, policy and pins
/// (`PASSEPARTOUT_RELOAD_POLL_MS`, default 2000; `0` never looks: reload on request or SIGHUP).
pub fn reload_poll_from_env() -> Duration {
    crate::settings::RELOAD_POLL_MS
        .parse()
        .map_or(Duration::from_millis(2000), Duration::from_millis)
}

fn seconds_from_env(var: crate::settings::Var, default: u64) -> Duration {
    var.parse()
        .filter(|s| *s > 0)
        .map_or(Duration::from_secs(default), Duration::from_secs)
}
