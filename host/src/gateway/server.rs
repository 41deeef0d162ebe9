//! One external MCP server: over stdio, started through the `__confine` trampoline like a
//! granted program; or remote, over streamable HTTP ([`super::remote`]). Spoken to with rmcp's
//! client, its tools listed (again on `notifications/tools/list_changed`), and started (or
//! connected to) again with backoff when it stops or cannot start.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, JsonObject};
use rmcp::service::{NotificationContext, Peer, RoleClient};
use rmcp::{ClientHandler, ServiceExt as _};
use serde::{Deserialize, Serialize};

use super::error::{CallError, CommandError, ServeError, StartError, last_words};
use super::pins::{SeenTool, save_seen};
use crate::runtime::capabilities::confine::{self, Confine, Confinement};
use crate::settings::McpServerConfig;

/// The first wait before a restart; doubled after each failure, up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait before a restart.
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// A server up this long is healthy again: its next failure waits [`MIN_BACKOFF`].
const HEALTHY: Duration = Duration::from_secs(30);
/// How long the handshake and each tool listing may take; and the longest a message to a
/// server may wait for it to read it ([`super::bounds::SendCap`]).
const HANDSHAKE: Duration = Duration::from_secs(30);
/// The least time from one listing of a server's tools to the next: a server that says its
/// tools changed again and again has them listed (and written down) no more often.
const RELIST: Duration = Duration::from_secs(5);
/// The most of a tool's result passed on, bytes: a plugin tool's default output cap
/// (`limits.max_output_kib`).
const MAX_RESULT: usize = (crate::runtime::limits::DEFAULT_MAX_OUTPUT_KIB as usize) << 10;
/// Processes a server's user may have.
const PROCESSES: u64 = 64;
/// Lines of a server's stderr kept to say why it stopped.
const STDERR_LINES: usize = 5;
/// Largest file a server may write.
const FILE_SIZE: u64 = 256 << 20;

/// Where a server is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Being started.
    #[default]
    Starting,
    /// Running; its tools are listed.
    Running,
    /// Stopped or failed to start; started again after the backoff.
    Restarting,
}

/// What `status`, `doctor` and `audit` show of a server.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerStatus {
    /// Its name (`[mcp.servers.NAME]`).
    pub name: String,
    /// Where it is.
    pub state: State,
    /// Times it was restarted.
    pub restarts: u64,
    /// Why it last stopped or failed to start.
    pub last_error: Option<String>,
    /// The tools it offers, as last listed: shared, so that a copy of the status (each
    /// `status` request, each look for a tool) does not copy every schema.
    pub tools: Arc<[SeenTool]>,
}

impl ServerStatus {
    /// As `status` tells it: each tool by its name and sha256 only (the descriptions and
    /// schemas of up to [`super::bounds::MAX_TOOLS`] tools would not fit one reply; `tools`
    /// and `passepartout mcp pin` show them).
    pub fn summary(mut self) -> ServerStatus {
        self.tools = self
            .tools
            .iter()
            .map(|t| SeenTool {
                name: t.name.clone(),
                description: String::new(),
                schema: serde_json::Value::Null,
                sha256: t.sha256.clone(),
            })
            .collect();
        self
    }
}

/// One server and its supervisor's view of it.
pub struct Server {
    /// Its name.
    pub name: String,
    config: McpServerConfig,
    status: Mutex<ServerStatus>,
    peer: Mutex<Option<Peer<RoleClient>>>,
}

impl Server {
    /// The file its bearer token is read from (a remote server's `bearer_file`).
    pub fn token_file(&self) -> Option<&std::path::Path> {
        self.config.bearer_file.as_deref()
    }
}

/// Hears a server's `notifications/tools/list_changed`.
#[derive(Clone)]
struct Listener(Arc<tokio::sync::Notify>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.0.notify_one();
    }
}

/// Kills a server's whole process group when dropped (the trampoline starts a session of its
/// own, so its pid is the group's).
struct Group(Option<u32>);

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(pid) = self.0.and_then(|p| i32::try_from(p).ok()) {
            // SAFETY: kill(2) with a negative pid signals that process group; no memory.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

impl Server {
    /// A server as `config` describes it, not started.
    pub fn new(name: String, config: McpServerConfig) -> Server {
        Server {
            status: Mutex::new(ServerStatus {
                name: name.clone(),
                state: State::Starting,
                restarts: 0,
                last_error: None,
                tools: Arc::default(),
            }),
            name,
            config,
            peer: Mutex::new(None),
        }
    }

    /// Its configuration.
    pub fn config(&self) -> &McpServerConfig {
        &self.config
    }

    /// What it is now (its tools shared, not copied).
    pub fn status(&self) -> ServerStatus {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn update(&self, f: impl FnOnce(&mut ServerStatus)) {
        f(&mut self.status.lock().unwrap_or_else(|p| p.into_inner()));
    }

    /// Call `tool` with `args`: its text output, or its error; at most `MAX_RESULT` (1 MiB)
    /// of either, saying how much more there was.
    ///
    /// # Errors
    /// [`CallError`]: the server is not running, the call failed or timed out, or the tool
    /// said it failed ([`CallError::Tool`], with its output).
    pub async fn call(&self, tool: &str, args: JsonObject) -> Result<String, CallError> {
        let peer = self
            .peer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| CallError::NotRunning {
                server: self.name.clone(),
            })?;
        let timeout = self.config.call_timeout();
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let result = tokio::time::timeout(timeout, peer.call_tool(params))
            .await
            .map_err(|_| CallError::Timeout {
                server: self.name.clone(),
                timeout,
            })?
            .map_err(|source| CallError::Service {
                server: self.name.clone(),
                source: Box::new(source),
            })?;
        let text = joined(
            result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str())),
            MAX_RESULT,
        );
        if result.is_error == Some(true) {
            Err(CallError::Tool {
                server: self.name.clone(),
                tool: tool.to_owned(),
                text,
            })
        } else {
            Ok(text)
        }
    }
}

/// `parts` joined by newlines, at most `cap` bytes of them (cut at a character), then, when
/// cut, how many bytes more there were: what goes on to the model, the journal and clients is
/// bounded as a plugin tool's output is.
fn joined<'a>(parts: impl IntoIterator<Item = &'a str>, cap: usize) -> String {
    let mut text = String::new();
    let mut more = 0usize;
    for (i, part) in parts.into_iter().enumerate() {
        for piece in [if i == 0 { "" } else { "\n" }, part] {
            if more > 0 {
                more += piece.len();
                continue;
            }
            let room = cap.saturating_sub(text.len());
            if piece.len() <= room {
                text.push_str(piece);
                continue;
            }
            let cut = piece.floor_char_boundary(room);
            text.push_str(&piece[..cut]);
            more = piece.len() - cut;
        }
    }
    if more > 0 {
        use std::fmt::Write as _;
        let _ = write!(text, "… [cut: {more} bytes more]");
    }
    text
}

/// What starting a server needs besides its configuration.
#[derive(Clone, Debug)]
pub struct Launch {
    /// The `passepartout` executable (the `__confine` trampoline).
    pub trampoline: PathBuf,
    /// Where what each server offers is written ([`super::pins`]).
    pub seen_dir: PathBuf,
    /// The daemon's own places, which no server's `read` or `write` may expose
    /// ([`crate::agent::Places::protected`]).
    pub protected: crate::runtime::capabilities::fs::Protected,
}

/// Keep `server` running: start it, list its tools, and after it stops, start it again after a
/// backoff (0.5 s doubling to 60 s; back to 0.5 s after 30 s up). Runs until the runtime stops.
pub async fn supervise(server: Arc<Server>, launch: Launch) {
    let mut backoff = MIN_BACKOFF;
    loop {
        let started = Instant::now();
        server.update(|s| s.state = State::Starting);
        let why = super::bounds::shortened(&match run_once(&server, &launch).await {
            Ok(why) => why,
            Err(e) => e.to_string(),
        });
        *server.peer.lock().unwrap_or_else(|p| p.into_inner()) = None;
        tracing::warn!(
            "MCP server {}: {why}; starting it again in {backoff:?}",
            server.name
        );
        if started.elapsed() > HEALTHY {
            backoff = MIN_BACKOFF;
        }
        server.update(|s| {
            s.state = State::Restarting;
            s.last_error = Some(why);
            s.restarts += 1;
        });
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// Start the server once (connect to it, when remote) and serve it until it stops: `Ok` says
/// how it stopped, `Err` why it could not start.
async fn run_once(server: &Server, launch: &Launch) -> Result<String, StartError> {
    if server.config.url.is_some() {
        let transport = super::remote::transport(&server.config).await?;
        return serve(server, launch, transport, std::future::pending())
            .await
            .map_err(|source| StartError::Serve {
                source,
                said: Vec::new(),
            });
    }
    let mut command = command(&server.name, &server.config, launch)?;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_clear()
        .env("PATH", crate::runtime::capabilities::process::search_path())
        .env("LANG", "C.UTF-8")
        .envs(&server.config.env)
        .kill_on_drop(true);
    command.current_dir(working_dir(&server.config));
    let mut child = command
        .spawn()
        .map_err(|source| StartError::Spawn { source })?;
    let _group = Group(child.id());
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        return Err(StartError::NoPipes);
    };
    let tail = stderr_tail(child.stderr.take());
    let ended = async move {
        match child.wait().await {
            Ok(s) => format!("it stopped ({s})"),
            Err(e) => format!("it stopped: {e}"),
        }
    };
    let stdout = super::bounds::LineCap::new(stdout, super::bounds::MAX_LINE);
    let cut = stdout.cut();
    let transport = super::bounds::SendCap::new(
        rmcp::transport::async_rw::AsyncRwTransport::new_client(stdout, stdin),
        super::bounds::MAX_PENDING,
        // A server that reads stdin only between calls reads nothing while it runs one.
        server.config.call_timeout().max(HANDSHAKE),
    );
    let deaf = transport.cut();
    let served = serve(server, launch, transport, ended).await;
    let served = match served {
        _ if cut.load(std::sync::atomic::Ordering::Relaxed) => Ok(format!(
            "it wrote a message longer than {} MiB, and was cut off",
            super::bounds::MAX_LINE >> 20
        )),
        _ if deaf.is_cancelled() => Ok(format!(
            "it did not read what was sent to it (more than {} messages waited, or one for \
             {HANDSHAKE:?}), and was cut off",
            super::bounds::MAX_PENDING
        )),
        other => other,
    };
    // Let the reader take what the server printed as it ended.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let said: Vec<String> = tail
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .cloned()
        .collect();
    match served {
        Ok(why) => Ok(format!("{why}{}", last_words(&said))),
        Err(source) => Err(StartError::Serve { source, said }),
    }
}

/// The last lines `stderr` prints (logged as they come).
fn stderr_tail(
    stderr: Option<tokio::process::ChildStderr>,
) -> Arc<Mutex<std::collections::VecDeque<String>>> {
    let tail = Arc::new(Mutex::new(std::collections::VecDeque::new()));
    if let Some(stderr) = stderr {
        let tail = tail.clone();
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt as _;
            // Bytes, not text, and whatever it writes: a server that writes invalid UTF-8 or
            // endless lines never fills its pipe (it would block) nor the daemon's memory (a
            // line keeps its first 300 bytes).
            let mut stderr = stderr;
            let mut chunk = [0u8; 4096];
            let mut line = Vec::new();
            loop {
                let n = match stderr.read(&mut chunk).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                for &b in &chunk[..n] {
                    if b != b'\n' {
                        if line.len() < 300 {
                            line.push(b);
                        }
                        continue;
                    }
                    let text = String::from_utf8_lossy(&line).trim_end().to_owned();
                    line.clear();
                    tracing::debug!("MCP server: {text}");
                    let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if tail.len() == STDERR_LINES {
                        tail.pop_front();
                    }
                    tail.push_back(text);
                }
            }
        });
    }
    tail
}

/// Serve a started server over `transport` until it stops: its connection closes, or `ended`
/// (its process's exit) says how.
async fn serve<T, E, A>(
    server: &Server,
    launch: &Launch,
    transport: T,
    ended: impl Future<Output = String>,
) -> Result<String, ServeError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let changed = Arc::new(tokio::sync::Notify::new());
    let mut ended = std::pin::pin!(ended);
    let client = tokio::time::timeout(HANDSHAKE, Listener(changed.clone()).serve(transport))
        .await
        .map_err(|_| ServeError::HandshakeTimeout { within: HANDSHAKE })?
        .map_err(|e| {
            let said = plain(&e.to_string());
            let hint = if said.contains("HTTP 401") || said.contains("HTTP 403") {
                "; the server refused the token: check `bearer_file`"
            } else {
                ""
            };
            ServeError::Handshake {
                said,
                hint,
                source: Box::new(e),
            }
        })?;
    // A version rmcp would cache every listed tool under, for as long as the connection
    // lives (before any of the listing's bounds), is refused.
    if let Some(info) = client.peer_info()
        && !super::PROTOCOL_VERSIONS.contains(&info.protocol_version)
    {
        let version = info.protocol_version.to_string();
        return Err(ServeError::Version {
            version: version.chars().take(64).collect(),
            served: super::PROTOCOL_VERSIONS
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    // What was last written to the seen file, by this connection.
    let mut saved: Option<Arc<[SeenTool]>> = None;
    loop {
        let listing = tokio::time::Instant::now();
        let listed = tokio::time::timeout(
            HANDSHAKE,
            super::bounds::list_tools(client.peer(), &server.name),
        )
        .await
        .map_err(|_| ServeError::ListTimeout { within: HANDSHAKE })?
        .map_err(|source| ServeError::List {
            source: Box::new(source),
        })?;
        let seen: Arc<[SeenTool]> = listed
            .into_iter()
            .map(|t| {
                SeenTool::new(
                    t.name.to_string(),
                    t.description.as_deref().unwrap_or_default().to_owned(),
                    serde_json::Value::Object(Arc::unwrap_or_clone(t.input_schema)),
                )
            })
            .collect();
        // Unchanged, it is not written again.
        if saved.as_deref() != Some(&*seen) {
            match save_seen(&launch.seen_dir, &server.name, &seen) {
                Ok(()) => saved = Some(seen.clone()),
                Err(e) => tracing::warn!("MCP server {}: {e}", server.name),
            }
        }
        *server.peer.lock().unwrap_or_else(|p| p.into_inner()) = Some(client.peer().clone());
        server.update(|s| {
            s.state = State::Running;
            s.tools = seen;
        });
        tokio::select! {
            why = &mut ended => return Ok(why),
            () = changed.notified() => {
                tracing::info!("MCP server {}: its tools changed; listing them again", server.name);
            }
            // It closed its side, or spoke something that is not MCP, while still running.
            () = closed(client.peer()) => {
                return Ok("its MCP connection closed".into());
            }
        }
        // At most one listing per RELIST: what it says meanwhile is one change more (the
        // notification keeps one permit), listed once the time is up.
        tokio::select! {
            why = &mut ended => return Ok(why),
            () = tokio::time::sleep_until(listing + RELIST) => {}
            () = closed(client.peer()) => {
                return Ok("its MCP connection closed".into());
            }
        }
    }
}

/// The directory a server runs in: the first it may write, else read, else `/`; never the
/// daemon's.
pub fn working_dir(config: &McpServerConfig) -> PathBuf {
    config
        .write
        .first()
        .or(config.read.first())
        .cloned()
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// rmcp's error text without the Rust type of its transport (`Transport [...] error: `).
fn plain(said: &str) -> String {
    match (said.find("Transport ["), said.find("] error: ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &said[..start], &said[end + "] error: ".len()..])
        }
        _ => said.to_owned(),
    }
}

/// Resolves when the connection to the server is closed.
async fn closed(peer: &Peer<RoleClient>) {
    while !peer.is_transport_closed() {
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The command that starts the server: through the trampoline, confined to what its
/// configuration lists, or (`confine = "none"`) as it is.
fn command(
    server: &str,
    config: &McpServerConfig,
    launch: &Launch,
) -> Result<tokio::process::Command, CommandError> {
    let trampoline = &launch.trampoline;
    let name = config.command.as_deref().ok_or(CommandError::NoCommand)?;
    let program = if name.starts_with('/') {
        PathBuf::from(name)
    } else if name.contains('/') || name.is_empty() {
        return Err(CommandError::NotAProgram {
            name: name.to_owned(),
        });
    } else {
        crate::runtime::capabilities::process::on_path(name).ok_or_else(|| {
            CommandError::NotOnPath {
                name: name.to_owned(),
            }
        })?
    };
    if config.confine == Confine::None {
        let mut c = tokio::process::Command::new(program);
        c.args(&config.args).process_group(0);
        return Ok(c);
    }
    if !confine::kernel_can_confine() {
        return Err(CommandError::NoLandlock);
    }
    let existing = |dirs: &[PathBuf]| -> Result<Vec<PathBuf>, CommandError> {
        dirs.iter()
            .map(|d| {
                std::fs::canonicalize(d).map_err(|source| CommandError::Dir {
                    dir: d.clone(),
                    source,
                })
            })
            .collect()
    };
    let read = existing(&config.read)?;
    let write = existing(&config.write)?;
    // Again at each start, on the very paths it is confined to: what its directories lead to
    // now, not what they led to at boot.
    super::check_resolved(server, &read, &write, &launch.protected)
        .map_err(|e| CommandError::Exposes(Box::new(e)))?;
    // As root, it runs as the owner of its own directory, never as root.
    let home = write.first().or(read.first());
    let run_as = match home {
        Some(dir) => confine::run_as(dir)?,
        None => {
            // SAFETY: geteuid(2) has no preconditions.
            if unsafe { libc::geteuid() } == 0 {
                return Err(CommandError::RunsAsRoot);
            }
            None
        }
    };
    let spec = Confinement {
        program,
        args: config.args.clone(),
        read,
        write,
        connect_ports: config.ports.clone(),
        cpu_secs: config.cpu_secs.unwrap_or(3600),
        file_size: FILE_SIZE,
        processes: PROCESSES,
        // A server the operator configured runs under the daemon's own memory limit.
        memory: None,
        run_as,
        cgroup: None,
    };
    let spec = serde_json::to_string(&spec).map_err(|source| CommandError::Describe { source })?;
    let mut c = tokio::process::Command::new(trampoline);
    c.arg(confine::ARG).arg(spec);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parts are joined by newlines up to the cap, cut at a character, saying how many bytes
    /// were left out (the rest of the cut part, and every part after it).
    #[test]
    fn a_result_past_the_cap_is_cut_at_a_character_saying_how_much_more() {
        assert_eq!(joined(["a", "b"], 16), "a\nb");
        assert_eq!(joined(["abcdef", "xyz"], 4), "abcd… [cut: 6 bytes more]");
        // "é" is two bytes: a cut inside it leaves it out whole.
        assert_eq!(joined(["aé", "b"], 2), "a… [cut: 4 bytes more]");
        let big = "x".repeat(8 << 20);
        let cut = joined([big.as_str()], MAX_RESULT);
        assert!(cut.starts_with(&"x".repeat(MAX_RESULT)));
        assert!(
            cut.ends_with("[cut: 7340032 bytes more]"),
            "{}",
            &cut[MAX_RESULT..]
        );
    }
}
