//! `passepartout daemon`, and the clients `send` and `chat`.

use std::net::SocketAddr;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use passepartout::daemon::answer::{self, AnswerError, Ran};
use passepartout::daemon::client::Client;
use passepartout::daemon::request::{Event, Request};
use passepartout::daemon::server::{Router, RouterActuator, Server, ServerConfig};
use passepartout::daemon::{DEFAULT_PORTS, Keys, Rendezvous};
use passepartout::pipeline::{Agent, PipelineConfig, StepOutcome};
use passepartout::signal::Action;
use serde_json::{Value, json};

use super::Common;
use super::exit::Whose;

/// Where to listen: `--port`, else `PASSEPARTOUT_PORT`, else `[daemon] port`;
/// `PASSEPARTOUT_HOST`, else `[daemon] host`, else 127.0.0.1 (see [`passepartout::settings`]). Only loopback addresses: the protocol is for this machine.
fn listen_address(
    common: &Common,
    section: &passepartout::settings::DaemonSection,
) -> anyhow::Result<(std::net::IpAddr, Option<u16>)> {
    use passepartout::settings;
    let port = match (common.port, settings::PORT.lookup()) {
        (Some(p), _) => Some(p),
        (None, Some((name, v))) => Some(
            v.trim()
                .parse()
                .with_context(|| format!("{name}={v:?} is not a port number"))?,
        ),
        (None, None) => section.port,
    };
    let host = settings::HOST
        .get()
        .or_else(|| section.host.clone())
        .unwrap_or_else(|| "127.0.0.1".into());
    let ip: std::net::IpAddr = if host == "localhost" {
        [127, 0, 0, 1].into()
    } else {
        host.parse()
            .with_context(|| format!("daemon host {host:?} is not an IP address"))?
    };
    anyhow::ensure!(
        ip.is_loopback(),
        "daemon host {ip} is not a loopback address: the daemon only listens on this machine (127.0.0.1 or ::1)"
    );
    Ok((ip, port))
}

/// Connections the kernel holds for the daemon to accept. std's 128 let a burst of connections
/// fill it before the daemon accepts them: the kernel then drops new connections' first packet,
/// and every client (honest ones too) waits a second for it to be sent again.
const BACKLOG: i32 = 4096;

/// A listener on `ip`:`port`, with [`BACKLOG`] (the kernel caps it at `net.core.somaxconn`).
fn listen(ip: std::net::IpAddr, port: u16) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let addr = std::net::SocketAddr::new(ip, port);
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    // As std's bind: a port whose last connections linger in TIME_WAIT is free.
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

fn bind(ip: std::net::IpAddr, port: Option<u16>) -> anyhow::Result<std::net::TcpListener> {
    if let Some(p) = port {
        return listen(ip, p).with_context(|| format!("port {p} on {ip} is not free"));
    }
    for p in DEFAULT_PORTS {
        match listen(ip, p) {
            Ok(l) => return Ok(l),
            Err(e) => tracing::warn!("port {p} is taken ({e}); trying the next"),
        }
    }
    anyhow::bail!(
        "ports {}-{} on {ip} are all taken; pass --port",
        DEFAULT_PORTS.start(),
        DEFAULT_PORTS.end()
    )
}

/// Run the daemon until SIGINT or SIGTERM.
pub fn run(common: &Common, insecure_no_auth: bool) -> anyhow::Result<ExitCode> {
    // Boot: what would stop the start is checked first (another daemon, the keys, the
    // journal, the policy and the providers' configuration), then the daemon listens; the
    // plugins load in the background, and requests wait for them, so that no plugin can keep
    // it from listening.
    let rendezvous = passepartout::daemon::rendezvous_file();
    if let Some(other) = rendezvous.as_deref().and_then(running_daemon) {
        anyhow::bail!(
            "a daemon (pid {}) already serves this installation at {}:{}: use it (`passepartout chat`, `passepartout send`), or stop it first",
            other.pid,
            other.host,
            other.port
        );
    }
    passepartout::daemon::keys::check_enforce(insecure_no_auth)?;
    let open_files = passepartout::daemon::raise_open_files_limit();
    if open_files < 4096 {
        tracing::warn!(
            "this daemon may open only {open_files} files (its hard RLIMIT_NOFILE): clients and \
             plugin calls may be refused under load; raise it (systemd: LimitNOFILE=65536)"
        );
    }
    let keys = if insecure_no_auth {
        errln!(
            "passepartout: WARNING: --insecure-no-auth: any local process, the agent's own tools \
             included, can connect to this daemon and approve what the gates held. Use it for \
             tests and benchmarks only."
        );
        None
    } else {
        let dir = passepartout::daemon::keys::keys_dir()
            .context("no data directory for the keys (set XDG_DATA_HOME or HOME)")?;
        Some(Keys::load_or_create(&dir)?)
    };
    let places = common.places();
    let journal = places.journal()?;
    if let Some(path) = places.policy_file() {
        passepartout::runtime::Policy::load(&path)?;
    }
    let settings = places.settings()?;
    places.cascade(&settings)?;
    passepartout::gateway::check(&settings.mcp.servers, &places.protected(&settings))?;
    let router = Arc::new(Router::default());
    let placeholder = Agent::new(
        Vec::new(),
        journal,
        PipelineConfig::from_settings(&settings),
    )?
    .with_gate(Arc::new(passepartout::daemon::reload::Loading))
    .with_actuator("client", Box::new(RouterActuator(router.clone())))
    .with_actuator("cli", Box::new(RouterActuator(router.clone())));
    let placeholder = Arc::new(placeholder);
    let section = &settings.daemon;
    let (ip, port) = listen_address(common, section)?;
    let listener = bind(ip, port)?;
    let addr: SocketAddr = listener.local_addr()?;
    let mcp = mcp_http(&settings.mcp, addr, keys.as_ref())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Requests are async from the socket to the tool; a journal commit (SQLite, fsync)
        // or a granted program runs in place while its worker's other tasks move to one of
        // these threads (`passepartout::blocking::in_place`); reloads and memory saves run on
        // them too. Room for every tool call the instance pool allows at once (48), each
        // running a program, with as many again for commits and the rest.
        .max_blocking_threads(128)
        .build()?;
    // The stop signals are caught from before the rendezvous says where the daemon is: a
    // SIGTERM sent as soon as it appears stops the daemon cleanly, never by the signal's
    // default action (a killed process, its rendezvous left behind).
    let stop = {
        let _entered = runtime.enter();
        StopSignals::register()
    };
    if let Some(path) = &rendezvous {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let r = Rendezvous {
            pid: std::process::id(),
            host: addr.ip().to_string(),
            port: addr.port(),
            auth: if keys.is_some() { "hmac" } else { "none" }.into(),
            mcp_http: mcp.as_ref().map(|m| m.url.clone()),
        };
        std::fs::write(path, serde_json::to_vec(&r)?)?;
    }
    errln!(
        "passepartout: listening on {addr}{}",
        if keys.is_some() {
            " (clients authenticate with the keys in the keys directory)"
        } else {
            " (NO AUTHENTICATION)"
        }
    );
    if let Some(m) = &mcp {
        errln!(
            "passepartout: serving MCP at {} (bearer: the client key)",
            m.url
        );
    }
    let config = ServerConfig {
        keys,
        handshake_deadline: Duration::from_secs(5),
        read_timeout: passepartout::daemon::read_timeout_from_env(),
        heartbeat: passepartout::daemon::heartbeat_from_env(),
        auto_save: passepartout::daemon::auto_save_from_env(),
        max_frame: section.frame(),
        reload_poll: passepartout::daemon::reload_poll_from_env(),
    };
    let problems = Arc::new(std::sync::Mutex::new(Vec::new()));
    let gateway = gateway(&places, &settings, &runtime)?;
    let reload = super::reload::DaemonReload {
        common: common.clone(),
        router: router.clone(),
        problems: problems.clone(),
        carried: Default::default(),
        gateway,
    };
    let server = Server::loading(placeholder.clone(), Box::new(reload), router, config);
    let interrupt = placeholder.interrupt_flag();
    runtime.block_on(async move {
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        if let Some(m) = mcp {
            let settings = settings.mcp.clone();
            tokio::spawn(async move {
                if let Err(e) =
                    super::mcp::http::serve(m.listener, m.bridge, m.keys, settings).await
                {
                    tracing::error!("MCP over HTTP stopped: {e:#}");
                }
            });
        }
        tokio::spawn(boot(server.clone(), common.clone(), problems));
        tokio::spawn(reload_on_hangup(server.clone()));
        server
            .serve(listener, shutdown_signal(stop, interrupt))
            .await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(Duration::from_secs(5));
    // Only this daemon's own rendezvous: another daemon may have started since.
    if let Some(path) = &rendezvous
        && read_rendezvous(path).is_some_and(|r| r.pid == std::process::id())
    {
        let _ = std::fs::remove_file(path);
    }
    errln!("passepartout: stopped; the journal is saved");
    drop(placeholder);
    Ok(ExitCode::SUCCESS)
}

/// Start the MCP servers of gateway mode, if `passepartout.toml` names any, on `runtime`.
fn gateway(
    places: &passepartout::agent::Places,
    settings: &passepartout::settings::ConfigFile,
    runtime: &tokio::runtime::Runtime,
) -> anyhow::Result<Option<Arc<passepartout::gateway::Gateway>>> {
    let servers = &settings.mcp.servers;
    if servers.is_empty() {
        return Ok(None);
    }
    let launch = passepartout::gateway::Launch {
        trampoline: passepartout::runtime::capabilities::confine::own_executable()
            .context("cannot find this executable")?,
        seen_dir: places
            .mcp_seen_dir()
            .context("no data directory for what MCP servers offer (set XDG_DATA_HOME or HOME)")?,
        protected: places.protected(settings),
    };
    let pins = places
        .mcp_pins_file()
        .context("no configuration directory for mcp-pins.toml (set XDG_CONFIG_HOME or HOME)")?;
    let _entered = runtime.enter();
    Ok(Some(passepartout::gateway::Gateway::start(
        servers, pins, &launch,
    )?))
}

/// The daemon's MCP transport over HTTP, ready to serve.
struct McpHttp {
    listener: std::net::TcpListener,
    url: String,
    bridge: super::mcp::Bridge,
    keys: Keys,
}

/// Bind `[mcp] http` when set: its bridge reaches the daemon at `addr` with the client key (the
/// approver key only to put an approver client's decision); its clients send either key as
/// their bearer token.
fn mcp_http(
    section: &passepartout::settings::McpSection,
    addr: SocketAddr,
    keys: Option<&Keys>,
) -> anyhow::Result<Option<McpHttp>> {
    let Some(listener) = super::mcp::http::bind(section)? else {
        return Ok(None);
    };
    let Some(keys) = keys else {
        anyhow::bail!(
            "[mcp] http needs authentication (its bearer token is the client key): drop \
             --insecure-no-auth, or [mcp] http"
        );
    };
    let url = format!(
        "http://{}{}",
        listener.local_addr()?,
        super::mcp::http::PATH
    );
    let door = super::mcp::Door::Direct {
        addr: addr.to_string(),
        keys: Some(keys.clone()),
    };
    let wait = Duration::from_secs(
        section
            .approval_wait_secs
            .unwrap_or(super::mcp::APPROVAL_WAIT_SECS),
    );
    Ok(Some(McpHttp {
        listener,
        url,
        bridge: super::mcp::Bridge::new(door, wait),
        keys: keys.clone(),
    }))
}

/// Load the plugin set, say how it went, probe the providers and ingest memory: what the
/// daemon did before listening, done after.
async fn boot(server: Arc<Server>, common: Common, problems: Arc<std::sync::Mutex<Vec<String>>>) {
    let loaded = server.reload("start").await;
    let pipeline = server.current();
    let mut problems = std::mem::take(&mut *problems.lock().unwrap_or_else(|p| p.into_inner()));
    let probed = tokio::task::spawn_blocking(move || {
        let mut found = Vec::new();
        let places = common.places();
        if let Ok(cascade) = places.settings().and_then(|s| places.cascade(&s)) {
            for e in cascade.endpoints() {
                match passepartout::blocking::wait(e.probe()) {
                    Ok(code) if code < 400 => {}
                    Ok(code) => found.push(format!("provider {} answers HTTP {code}", e.name)),
                    Err(err) => found.push(format!("provider {} is not reachable: {err}", e.name)),
                }
            }
        }
        // State from disk: the configured Org paths.
        passepartout::daemon::server::save_memory(&pipeline);
        (found, pipeline.plugins().len())
    })
    .await;
    let (found, plugins) = probed.unwrap_or_default();
    problems.extend(found);
    match loaded {
        Ok(_) => {
            let health = if problems.is_empty() {
                "healthy"
            } else {
                "degraded"
            };
            errln!("passepartout: {health}: {plugins} plugin(s) loaded, journal writable");
        }
        Err(e) => errln!(
            "passepartout: unhealthy: {e}; every action is refused until the plugins load \
             (fix it: the daemon reloads when the files change, or on SIGHUP)"
        ),
    }
    for p in &problems {
        errln!("passepartout:   {p}");
    }
}

/// SIGHUP reloads the plugin set (the old one keeps serving if the new one fails to load).
async fn reload_on_hangup(server: Arc<Server>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            return;
        };
        while hup.recv().await.is_some() {
            match server.reload("SIGHUP").await {
                Ok(r) => errln!(
                    "passepartout: reloaded on SIGHUP: plugin set {}{}",
                    r.set,
                    if r.changed { "" } else { " (unchanged)" }
                ),
                Err(e) => errln!("passepartout: reload on SIGHUP failed: {e}"),
            }
        }
    }
    #[cfg(not(unix))]
    let _ = server;
}

/// SIGTERM and SIGINT, registered before the daemon says where it listens.
struct StopSignals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    /// Register both (inside the runtime's context).
    fn register() -> StopSignals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            StopSignals {
                term: signal(SignalKind::terminate()).ok(),
                int: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        StopSignals {}
    }
}

async fn shutdown_signal(stop: StopSignals, interrupt: Arc<std::sync::atomic::AtomicBool>) {
    #[cfg(unix)]
    {
        let (mut term, mut int) = (stop.term, stop.int);
        if term.is_none() && int.is_none() {
            let _ = tokio::signal::ctrl_c().await;
        } else {
            tokio::select! {
                Some(()) = async { term.as_mut()?.recv().await } => {}
                Some(()) = async { int.as_mut()?.recv().await } => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = stop;
        let _ = tokio::signal::ctrl_c().await;
    }
    errln!("passepartout: stopping");
    // Loops in flight stop before their next round; a cycle already running finishes.
    interrupt.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// `passepartout stop`: SIGTERM to the daemon its rendezvous file names (after checking that
/// the process is this program's daemon, not a process that took its pid), then wait for it to
/// finish the requests in flight and go.
pub fn stop() -> anyhow::Result<ExitCode> {
    let path = passepartout::daemon::rendezvous_file().context("no runtime directory")?;
    let Some(r) = read_rendezvous(&path) else {
        outln!("no daemon is running");
        return Ok(ExitCode::SUCCESS);
    };
    // Its command line, not /proc/PID/exe: the daemon makes itself non-dumpable, which hides
    // its exe link from processes without CAP_SYS_PTRACE.
    let ours = std::fs::read(format!("/proc/{}/cmdline", r.pid)).is_ok_and(|cmdline| {
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        let program = args
            .first()
            .and_then(|a| a.rsplit(|b| *b == b'/').next())
            .unwrap_or_default();
        program.starts_with(b"passepartout") && args.contains(&&b"daemon"[..])
    });
    let pid = libc::pid_t::try_from(r.pid).context("the rendezvous file's pid")?;
    if !ours {
        // SAFETY: signal 0 only checks that the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone {
            let _ = std::fs::remove_file(&path);
            outln!(
                "no daemon is running (removed the stale {})",
                path.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        anyhow::bail!(
            "{} names pid {pid}, which runs but does not look like a passepartout daemon (a \
             renamed binary?); not stopping it. Stop it yourself, or remove the file if it is stale",
            path.display()
        );
    }
    // SAFETY: kill(2) with a pid checked above to be this program's daemon.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        anyhow::bail!(
            "cannot stop the daemon (pid {pid}): {}",
            std::io::Error::last_os_error()
        );
    }
    errln!("stopping the daemon (pid {pid}); requests in flight finish first");
    for _ in 0..600 {
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            outln!("stopped");
            return Ok(ExitCode::SUCCESS);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    anyhow::bail!(
        "the daemon (pid {pid}) is still running after 60 s: its requests in flight have not finished"
    )
}

fn read_rendezvous(path: &Path) -> Option<Rendezvous> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// The daemon `path` names, if its process lives and its port answers.
fn running_daemon(path: &Path) -> Option<Rendezvous> {
    let r = read_rendezvous(path)?;
    let pid = libc::pid_t::try_from(r.pid).ok()?;
    // SAFETY: signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    let answers = || {
        format!("{}:{}", r.host, r.port)
            .parse::<SocketAddr>()
            .ok()
            .is_some_and(|a| {
                std::net::TcpStream::connect_timeout(&a, Duration::from_secs(1)).is_ok()
            })
    };
    (r.pid != std::process::id() && alive && answers()).then_some(r)
}

/// Where the daemon is (`--port`, else what it wrote in the runtime directory), and whether
/// it wants authentication.
fn address(common: &Common) -> anyhow::Result<(String, bool)> {
    let path =
        passepartout::daemon::rendezvous_file().context("no runtime directory: pass --port")?;
    let found = read_rendezvous(&path);
    if let Some(p) = common.port {
        return Ok((
            format!("127.0.0.1:{p}"),
            found.is_none_or(|r| r.auth != "none"),
        ));
    }
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "no daemon is running ({} is missing): start one with `passepartout daemon`",
            path.display()
        )
    })?;
    let r: Rendezvous =
        serde_json::from_str(&text).with_context(|| format!("{} is damaged", path.display()))?;
    Ok((format!("{}:{}", r.host, r.port), r.auth != "none"))
}

pub(super) fn connect(common: &Common) -> anyhow::Result<Client> {
    connect_as(common, true, "passepartout-cli")
}

/// Connect with the client key only, even when this user can read the approver key: for a
/// bridge whose own client (an MCP client) must not decide approvals or see their events.
/// It calls itself `name` in its hello.
pub(super) fn connect_as_client(common: &Common, name: &str) -> anyhow::Result<Client> {
    connect_as(common, false, name)
}

/// A connection to the daemon `common` names, calling itself `name`; with the approver key too
/// when `approver` and this user can read it.
pub(super) fn connect_as(common: &Common, approver: bool, name: &str) -> anyhow::Result<Client> {
    let (addr, auth) = address(common)?;
    let keys = match passepartout::daemon::keys::keys_dir() {
        Some(dir) if auth => Some(Keys::for_client(&dir)?),
        // The rendezvous says the daemon asks for no keys, but anything that can write that
        // file could say so, pointing at a daemon of its own: keys this user has are used all
        // the same, so that a daemon not asking for them is refused as a downgrade.
        Some(dir) => Keys::for_client(&dir).ok(),
        None => None,
    }
    .map(|k| k.for_role(approver));
    Ok(Client::connect_as(&addr, keys.as_ref(), name)?)
}

fn print_events(events: &[Value], trace: bool) {
    for e in answer::events(events) {
        match e {
            Event::Message { text, .. } => outln!("{text}"),
            Event::GateTrace { trace: gates } if trace => {
                for g in gates {
                    errln!(
                        "  gate {:<16} {:<16} {}",
                        g.gate,
                        g.verdict.name(),
                        g.reason.unwrap_or_default()
                    );
                }
            }
            // A plain request's: the rest come only on a subscription.
            _ => {}
        }
    }
}

/// `passepartout send TEXT` / `--action JSON`.
pub fn send(
    common: &Common,
    text: Option<&str>,
    action: Option<&str>,
    focus: Option<String>,
    trace: bool,
    json_out: bool,
) -> anyhow::Result<ExitCode> {
    let mut client = connect(common)?;
    let (events, reply) = match (text, action) {
        (_, Some(a)) => {
            // Refused here, as the daemon would: a bad request (exit 2), naming the field.
            let action = match Action::from_json(a) {
                Ok(action) => action,
                Err(e) => {
                    errln!("error: --action: {e}");
                    return Ok(ExitCode::from(2));
                }
            };
            client.call(&Request::Act { action })?
        }
        (Some(t), None) => client.call(&Request::Ask {
            text: t.into(),
            focus,
        })?,
        (None, None) => anyhow::bail!("give the text to send, or --action JSON"),
    };
    if json_out {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "events": events, "reply": reply }))?
        );
    } else {
        print_events(&events, trace);
    }
    let ran = answer::read::<Ran>(&reply, "the steps of a run");
    if !json_out {
        report(&ran, false);
    }
    let whose = if action.is_some() {
        Whose::Direct
    } else {
        Whose::Model
    };
    Ok(exit_code(&ran, whose))
}

/// Start a daemon in the background, with the places this command was given, and wait until
/// it listens (a first start compiles every plugin). Its output goes to `daemon.log` beside
/// the database, never to this stdout.
pub(super) fn start_background(common: &Common) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    // Absolute: a relative `--db p.db` has an empty parent, which does not "exist".
    let log = common
        .places()
        .database()
        .map(|d| std::path::absolute(&d).unwrap_or(d))
        .map(|d| d.with_file_name("daemon.log"));
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("daemon")
        .args(common.as_flags())
        .stdin(std::process::Stdio::null());
    if let Some(path) = log
        .as_deref()
        .filter(|p| p.parent().is_some_and(Path::exists))
    {
        let f = std::fs::File::create(path)?;
        cmd.stderr(f.try_clone()?).stdout(f);
    } else {
        cmd.stderr(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
    }
    cmd.spawn().context("cannot start the daemon")?;
    errln!(
        "started a daemon in the background (its first start compiles the plugins, which can \
         take a minute; later starts load them from the cache)"
    );
    // Up to 120 s: a first start compiles every plugin (the Python gate alone takes ~15 s on
    // two cores); the daemon listens only once they are loaded.
    for _ in 0..1200 {
        std::thread::sleep(Duration::from_millis(100));
        if address(common)
            .ok()
            .is_some_and(|(a, _)| std::net::TcpStream::connect(a).is_ok())
        {
            return Ok(());
        }
    }
    anyhow::bail!(
        "the daemon did not come up within 120 s; see {} for why",
        log.as_deref()
            .map_or("its log".into(), |p| p.display().to_string())
    )
}

/// Ask the person at the terminal whether to `op` the action printed above: yes only for `y`
/// or `yes`.
fn confirmed(op: &str) -> std::io::Result<bool> {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    write!(err, "{op} it? [y/N] ")?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// `op` (approve or deny) on `token` without a digest given: print the `pending` action and,
/// at a terminal, go on only once the person answers yes. A person decides on the action shown,
/// not on a token someone (the agent, say) handed them. The digest to bind the decision to, or
/// the exit code when there is nothing to decide or the answer was no.
pub(super) fn shown_and_confirmed(
    op: &str,
    token: &str,
    pending: Option<passepartout::approvals::Pending>,
) -> anyhow::Result<Result<String, ExitCode>> {
    let Some(p) = pending else {
        errln!("error: no pending approval has the token {token:?} (see `passepartout approvals`)");
        return Ok(Err(ExitCode::from(2)));
    };
    errln!("{op} {}: {}", p.state, serde_json::to_string(&p.action)?);
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) && !confirmed(op)? {
        errln!("not {op}d: nothing was decided");
        return Ok(Err(ExitCode::from(1)));
    }
    Ok(Ok(p.digest))
}

/// Approve or deny through the running daemon, so the action runs there and its result reaches
/// the client that asked. `None` when no daemon answers (the caller then works on the database
/// directly).
pub fn decide_via_daemon(
    common: &Common,
    op: &str,
    token: &str,
    digest: Option<&str>,
    json_out: bool,
) -> Option<anyhow::Result<ExitCode>> {
    // Only when no daemon answers: one that answers and refuses us (busy, a key it does not
    // take) is said so, not decided behind its back on the database it holds.
    let mut client = match connect_if_running(common) {
        Ok(Some(c)) => c,
        Ok(None) => return None,
        // A rendezvous left by a daemon that was killed names no daemon, whoever holds its
        // port now.
        Err(_)
            if common.port.is_none()
                && passepartout::daemon::rendezvous_file()
                    .is_some_and(|p| running_daemon(&p).is_none()) =>
        {
            return None;
        }
        Err(e) => return Some(Err(e)),
    };
    Some((|| {
        // The decision is bound to the action as shown: the digest given, else the one of the
        // action printed here.
        let digest = match digest {
            Some(d) => d.to_owned(),
            None => {
                let (_, list) = client.call(&Request::Approvals)?;
                match shown_and_confirmed(op, token, answer::pending(&list, token)?)? {
                    Ok(d) => d,
                    Err(code) => return Ok(code),
                }
            }
        };
        let (token, digest) = (token.to_owned(), digest);
        let request = if op == "deny" {
            Request::Deny { token, digest }
        } else {
            Request::Approve { token, digest }
        };
        let (events, reply) = client.call(&request)?;
        if json_out {
            outln!(
                "{}",
                serde_json::to_string_pretty(&json!({ "events": events, "reply": reply }))?
            );
        }
        if op == "deny" {
            return Ok(
                match answer::read::<answer::Dropped>(&reply, "the denied action") {
                    Ok(d) => {
                        if !json_out {
                            outln!("denied; dropped {}", serde_json::to_string(&d.dropped)?);
                        }
                        ExitCode::SUCCESS
                    }
                    // Denied all the same: only the daemon's account of the action is
                    // unreadable.
                    Err(e @ AnswerError::Unreadable { .. }) => {
                        errln!("denied ({e})");
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        errln!("error: {e}");
                        ExitCode::from(2)
                    }
                },
            );
        }
        let ran = answer::read::<Ran>(&reply, "the steps of a run");
        if !json_out {
            report(&ran, true);
        }
        Ok(exit_code(&ran, Whose::Direct))
    })())
}

/// The running daemon's status: `Ok(None)` when none runs (no rendezvous, nothing listens),
/// and why when one listens and does not answer (it refused this client's keys, or it is not
/// ours: a downgrade).
///
/// # Errors
/// What went wrong after something answered where the daemon should be.
pub fn reach_status(common: &Common) -> anyhow::Result<Option<passepartout::daemon::ops::Status>> {
    let Some(mut client) = connect_if_running(common)? else {
        return Ok(None);
    };
    let (_, reply) = client.call(&Request::Status)?;
    Ok(Some(answer::read(&reply, "the daemon's status")?))
}

/// A connection to the running daemon (with the approver key when this user can read it);
/// `Ok(None)` when none runs (no rendezvous, nothing listens).
///
/// # Errors
/// Something answered where the daemon should be and refused us.
fn connect_if_running(common: &Common) -> anyhow::Result<Option<Client>> {
    if address(common).is_err() {
        return Ok(None);
    }
    match connect(common) {
        Ok(c) => Ok(Some(c)),
        // Nothing listens, rather than something that refused us.
        Err(e)
            if matches!(
                e.downcast_ref::<passepartout::daemon::client::ClientError>(),
                Some(passepartout::daemon::client::ClientError::Unreachable { .. })
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Print a run's rejections and failures (and the daemon's refusal) to stderr, and with
/// `results` what ran to stdout. A step this CLI cannot read (a newer daemon's outcome) is
/// skipped and does not hide the others.
fn report(ran: &Result<Ran, AnswerError>, results: bool) {
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            errln!("error: {e}");
            return;
        }
    };
    for step in ran.steps.0.iter().flatten() {
        match &step.outcome {
            StepOutcome::Ran { result, .. } if results => outln!("{result}"),
            StepOutcome::Rejected { gate, reason, .. } => {
                errln!("rejected by {gate}: {reason}");
            }
            StepOutcome::Failed { error: message } | StepOutcome::ToolFailed { message, .. } => {
                errln!("error: {message}");
            }
            StepOutcome::Suspended { token, reasons } => {
                errln!("approval required ({}). Token: {token}", reasons.join("; "));
            }
            StepOutcome::Dropped { why } => errln!("stopped: {why}"),
            StepOutcome::Invalid { reason } => errln!("cannot do that: {reason}"),
            _ => {}
        }
    }
}

/// A daemon reply's exit code ([`super::exit`]): a refused request is bad input, a failure the
/// daemon reports (its pipeline's error) is a failure.
fn exit_code(ran: &Result<Ran, AnswerError>, whose: Whose) -> ExitCode {
    match ran {
        Ok(ran) => ExitCode::from(super::exit::of(
            ran.steps.0.iter().flatten().map(|s| &s.outcome),
            whose,
        )),
        // The request's own fault is bad input; the daemon failing at it is a failure.
        Err(AnswerError::Refused(r)) if r.kind == "request" => {
            ExitCode::from(super::exit::BAD_INPUT)
        }
        Err(_) => ExitCode::from(super::exit::FAILED),
    }
}
