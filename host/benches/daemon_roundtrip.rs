//! A direct `eval` action over the daemon's protocol (real TCP on 127.0.0.1) with 1, 10, 100
//! and 200 concurrent clients, beside the same action run in-process, in one run. Prints round
//! trips per second, p50/p99 latency and the CPU time the whole process (daemon and clients)
//! spent per round trip for each, and the ratio to in-process. Then the cost
//! of authentication: the same round trip on a daemon that signs every frame (the default)
//! and on one with `--insecure-no-auth`, and the handshake of a new connection, each beside
//! the other in the same run.
//!
//! Then the same signed round trip with the Rust gates only (the Python `pii` gate disabled in
//! the policy), beside its own in-process baseline.
//!
//! Those clients send their next request as soon as the answer comes (closed loop), so at 100
//! or 200 clients the latency is mostly queueing: mean latency = clients / throughput. One row
//! per set of gates has the clients send on a schedule instead (an open load below capacity:
//! 2,000/s from 200 clients with every gate, 5,000/s from 100 with the Rust gates), the latency
//! counted from when each request was due.
//!
//! Then MCP: `tools/call` of the same `eval` through `passepartout mcp` (the real binary, over
//! its stdin/stdout, JSON-RPC as an MCP client sends it) to the signed daemon, beside the same
//! action through our own protocol.
//!
//! As users run it: each agent assembled by [`passepartout::agent`] as the CLI and the daemon
//! assemble theirs, with the built-in plugins and gates and the on-disk journal (each daemon and
//! each in-process baseline its own database in a temporary directory).
//!
//! Run: `cargo bench -p passepartout --bench daemon_roundtrip`. To print only some of the rows
//! after criterion's (to compare two builds quickly), name them in `ROWS`, comma-separated:
//! `every` (every standard gate), `mcp`, `rust` (the Rust gates only); from `host/`:
//! `ROWS=rust ../target/release/deps/daemon_roundtrip-HASH --bench nomatch`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use passepartout::agent::{Agent, Places};
use passepartout::daemon::Keys;
use passepartout::daemon::client::Client;
use passepartout::daemon::protocol::Secret;
use passepartout::daemon::request::Request;
use passepartout::daemon::server::{Router, RouterActuator, Server, ServerConfig};
use passepartout::signal::{Action, Signal};
use serde_json::json;

/// The bench's temporary directory (journals, policies).
fn temp() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("temp dir"))
        .path()
}

/// An empty plugin directory.
fn empty_plugins() -> std::path::PathBuf {
    let dir = temp().join("no-plugins");
    std::fs::create_dir_all(&dir).expect("plugin directory");
    dir
}

/// Which gates the agent runs.
#[derive(Clone, Copy, PartialEq)]
enum Gates {
    /// Every standard gate (`approval`, `explanation`, `pii` in Python, `secrets`,
    /// `shell-guard`), as users run them.
    Standard,
    /// The standard gates written in Rust: `pii` disabled in the policy.
    RustOnly,
}

/// An agent assembled as the CLI and the daemon assemble theirs ([`passepartout::agent`]),
/// with its own on-disk journal, the built-in plugins and `gates`.
fn agent(router: &Arc<Router>, gates: Gates) -> Agent {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let policy = temp().join(format!("policy-{n}.toml"));
    // The policy `passepartout init` writes, as users run it.
    let workspace = temp().join("workspace");
    std::fs::create_dir_all(&workspace).expect("workspace");
    let mut text = passepartout::policy_edit::starter(&workspace);
    if gates == Gates::RustOnly {
        text.push_str("\n[plugins.pii]\nenabled = false\n");
    }
    std::fs::write(&policy, text).expect("policy");
    let places = Places {
        // An empty plugin directory: the built-in plugins only (a directory named explicitly
        // must exist).
        plugins: Some(empty_plugins()),
        policy: Some(policy),
        cache: Some(std::env::temp_dir().join("passepartout-bench-cache")),
        no_cache: false,
        config: Some(temp().join("passepartout.toml")),
        db: Some(temp().join(format!("journal-{n}.db"))),
        progress: None,
        also_protected: Vec::new(),
    };
    let journal = places.journal().expect("journal");
    let loaded = places.setup().expect("setup").load();
    assert!(
        loaded.report.errors.is_empty(),
        "{:?}",
        loaded.report.errors
    );
    let agent = loaded
        .assemble(
            journal,
            None,
            vec![("client", Box::new(RouterActuator(router.clone())))],
        )
        .expect("agent");
    let pii = agent.plugins().iter().any(|p| p.manifest.name == "pii");
    assert_eq!(
        pii,
        gates == Gates::Standard,
        "the pii gate is loaded as asked"
    );
    agent
}

fn action() -> Action {
    serde_json::from_value(json!({ "tool": "eval", "args": { "expression": "(+ 1 2)" } }))
        .expect("an action")
}

fn request_signal() -> Signal {
    Signal::request(action(), Default::default())
}

fn keys() -> Keys {
    Keys {
        client: Secret::new(b"bench client key, 32 bytes long!"),
        approver: Some(Secret::new(b"bench approver key, 32 bytes ok!")),
    }
}

/// Start a daemon in this process on a free port; returns its address.
fn start_daemon(keys: Option<Keys>, gates: Gates) -> String {
    let router = Arc::new(Router::default());
    let pipeline = Arc::new(agent(&router, gates));
    let config = ServerConfig {
        keys,
        handshake_deadline: Duration::from_secs(5),
        read_timeout: Duration::from_secs(300),
        heartbeat: Duration::from_secs(3600),
        auto_save: Duration::from_secs(3600),
        max_frame: 0xff_ffff,
        reload_poll: Duration::ZERO,
    };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("tokio");
        rt.block_on(async move {
            listener.set_nonblocking(true).expect("nonblocking");
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            Server::new(pipeline, router, config)
                .serve(listener, std::future::pending())
                .await;
        });
    });
    addr
}

/// One row's measurements.
#[derive(Clone, Copy)]
struct Measured {
    /// Calls (round trips, actions) per second.
    rps: f64,
    /// Median latency.
    p50: Duration,
    /// 99th-percentile latency.
    p99: Duration,
    /// CPU time of the whole bench process (daemon and clients alike, their connects included)
    /// per call: steadier than the throughput on a shared machine, where a run may get less of
    /// the cores. A child process (`passepartout mcp` in the MCP row) is not counted.
    cpu: Duration,
}

/// User and system CPU time this process has used so far.
fn process_cpu() -> Duration {
    // SAFETY: getrusage(2) fills the zeroed struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn round_trip(client: &mut Client) {
    let (_, reply) = client
        .call(&Request::Act { action: action() })
        .expect("request");
    assert_eq!(
        reply["result"]["steps"][0]["outcome"]["result"], "3",
        "the reply: {reply}"
    );
}

/// `clients` clients, each sending `per_client` requests.
fn load(addr: &str, keys: Option<&Keys>, clients: usize, per_client: usize) -> Measured {
    measure(clients, per_client, || {
        let mut client = Client::connect(addr, keys).expect("connect");
        move || round_trip(&mut client)
    })
}

/// `per_worker` calls on each of `workers` threads at once, each thread calling the function
/// `setup` makes for it.
fn measure<F: FnMut()>(
    workers: usize,
    per_worker: usize,
    setup: impl Fn() -> F + Sync,
) -> Measured {
    measure_with(workers, per_worker, |_| {
        let mut call = setup();
        move || {
            let t = Instant::now();
            call();
            t.elapsed()
        }
    })
}

/// `clients` clients that together send `rate` round trips a second, each on its own schedule
/// (client i of n sends at start + (i/n + k) * n/rate): an open load, as many independent users
/// make, below what the daemon can do. Latency counts from when a request was due, so a
/// request sent late because the one before it was slow counts its wait (no coordinated
/// omission). The schedule starts once every client has
/// connected: 200 signed handshakes take longer than a fixed head start, and requests due
/// while the others still connect measured the bench's own connect storm, not the load.
fn paced(
    addr: &str,
    keys: Option<&Keys>,
    clients: usize,
    rate: f64,
    per_client: usize,
) -> Measured {
    let interval = Duration::from_secs_f64(clients as f64 / rate);
    let connected = std::sync::Barrier::new(clients);
    let start = std::sync::OnceLock::new();
    let measured = measure_with(clients, per_client, |i| {
        let mut client = Client::connect(addr, keys).expect("connect");
        connected.wait();
        let start = *start.get_or_init(|| Instant::now() + Duration::from_millis(20));
        let mut due = start + interval.mul_f64(i as f64 / clients as f64);
        move || {
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            round_trip(&mut client);
            let latency = due.elapsed();
            due += interval;
            latency
        }
    });
    // Throughput from the first request due to the last answer: the clients' connects before
    // it are not the daemon's pace.
    let began = start.get().copied().unwrap_or_else(Instant::now);
    let sustained = (clients * per_client) as f64 / began.elapsed().as_secs_f64();
    Measured {
        rps: sustained,
        ..measured
    }
}

/// `per_worker` calls on each of `workers` threads at once, worker `i` calling the function
/// `setup(i)` makes for it, which returns the call's latency.
fn measure_with<F: FnMut() -> Duration>(
    workers: usize,
    per_worker: usize,
    setup: impl Fn(usize) -> F + Sync,
) -> Measured {
    let start = Instant::now();
    let cpu = process_cpu();
    let mut latencies: Vec<Duration> = std::thread::scope(|s| {
        let setup = &setup;
        let handles: Vec<_> = (0..workers)
            .map(|i| {
                s.spawn(move || {
                    let mut call = setup(i);
                    (0..per_worker).map(|_| call()).collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker thread"))
            .collect()
    });
    let total = start.elapsed();
    let cpu = process_cpu().saturating_sub(cpu);
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    Measured {
        rps: latencies.len() as f64 / total.as_secs_f64(),
        p50: pct(0.50),
        p99: pct(0.99),
        cpu: cpu / latencies.len().max(1) as u32,
    }
}

/// `passepartout mcp` bridging to the daemon at `addr`, initialised as an MCP client does.
struct Mcp {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: std::io::BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Mcp {
    fn start(addr: &str) -> Mcp {
        use std::process::{Command, Stdio};
        let port = addr.rsplit(':').next().expect("port");
        let run = temp().join("run");
        std::fs::create_dir_all(&run).expect("runtime dir");
        let mut child = Command::new(env!("CARGO_BIN_EXE_passepartout"))
            .args(["mcp", "--port", port])
            .env("XDG_RUNTIME_DIR", &run)
            .env("XDG_DATA_HOME", temp().join("data"))
            .env(
                "PASSEPARTOUT_HMAC_SECRET",
                "bench client key, 32 bytes long!",
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("passepartout mcp");
        let to = child.stdin.take().expect("stdin");
        let from = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        let mut mcp = Mcp {
            child,
            to,
            from,
            next: 1,
        };
        mcp.request(
            "initialize",
            json!({ "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "bench", "version": "0" } }),
        );
        mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        mcp
    }

    fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        writeln!(self.to, "{message}").expect("write to passepartout mcp");
    }

    fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::BufRead;
        let id = self.next;
        self.next += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let mut line = String::new();
            self.from
                .read_line(&mut line)
                .expect("read from passepartout mcp");
            assert!(!line.is_empty(), "passepartout mcp stopped");
            let reply: serde_json::Value = serde_json::from_str(&line).expect("JSON-RPC");
            if reply["id"] == id {
                return reply;
            }
        }
    }

    fn eval(&mut self) {
        let reply = self.request(
            "tools/call",
            json!({ "name": "eval", "arguments": { "expression": "(+ 1 2)" } }),
        );
        assert_eq!(reply["result"]["content"][0]["text"], "3", "{reply}");
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let addr = start_daemon(None, Gates::Standard);
    let signed_addr = start_daemon(Some(keys()), Gates::Standard);
    let rust_addr = start_daemon(Some(keys()), Gates::RustOnly);
    let in_process = agent(&Arc::new(Router::default()), Gates::Standard);
    let rust_in_process = agent(&Arc::new(Router::default()), Gates::RustOnly);
    let mut client = Client::connect(&addr, None).expect("connect");
    let mut signed = Client::connect(&signed_addr, Some(&keys())).expect("connect signed");

    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("eval-action");
    group.bench_function("in-process", |b| {
        b.iter(|| passepartout::blocking::wait(in_process.run(request_signal())))
    });
    // Ten threads at once, ten actions each per iteration: how the gates share the cores.
    group.bench_function("in-process-10-threads-x10", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                for _ in 0..10 {
                    s.spawn(|| {
                        for _ in 0..10 {
                            passepartout::blocking::wait(in_process.run(request_signal()));
                        }
                    });
                }
            })
        })
    });
    group.bench_function("in-process-rust-gates", |b| {
        b.iter(|| passepartout::blocking::wait(rust_in_process.run(request_signal())))
    });
    group.bench_function("over-protocol-1-client-unsigned", |b| {
        b.iter(|| round_trip(&mut client))
    });
    group.bench_function("over-protocol-1-client-signed", |b| {
        b.iter(|| round_trip(&mut signed))
    });
    let mut mcp = Mcp::start(&signed_addr);
    group.bench_function("mcp-stdio-tools-call", |b| b.iter(|| mcp.eval()));
    let mut rust_signed = Client::connect(&rust_addr, Some(&keys())).expect("connect rust");
    group.bench_function("over-protocol-1-client-signed-rust-gates", |b| {
        b.iter(|| round_trip(&mut rust_signed))
    });
    // Ten clients at once, ten round trips each per iteration (time per iteration / 100 is
    // the time per round trip).
    let mut ten: Vec<Client> = (0..10)
        .map(|_| Client::connect(&rust_addr, Some(&keys())).expect("connect rust"))
        .collect();
    group.bench_function("over-protocol-10-clients-x10-signed-rust-gates", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                for client in ten.iter_mut() {
                    s.spawn(move || (0..10).for_each(|_| round_trip(client)));
                }
            })
        })
    });
    group.finish();
    let mut group = c.benchmark_group("connect");
    group.bench_function("handshake-unsigned", |b| {
        b.iter(|| Client::connect(&addr, None).expect("connect"))
    });
    group.bench_function("handshake-signed", |b| {
        b.iter(|| Client::connect(&signed_addr, Some(&keys())).expect("connect"))
    });
    group.finish();
    c.final_summary();
    if std::env::args().any(|a| a == "--profile-time") {
        // Profiling one benchmark (`-- --profile-time N FILTER`): no rows.
        return;
    }

    let keys = keys();
    // The bench's own switch, not a setting of Passepartout.
    #[allow(clippy::disallowed_methods)]
    let rows = std::env::var("ROWS").ok();
    let names: Vec<&str> = rows
        .iter()
        .flat_map(|r| r.split(','))
        .map(str::trim)
        .collect();
    if let Some(unknown) = names.iter().find(|n| !["every", "mcp", "rust"].contains(n)) {
        eprintln!("ROWS names `{unknown}`: the rows are `every`, `mcp` and `rust`");
        std::process::exit(2);
    }
    let wanted = |name: &str| rows.is_none() || names.contains(&name);
    if wanted("every") {
        every_gate_rows(&addr, &signed_addr, &keys, &in_process);
    }
    if wanted("mcp") {
        mcp_rows(&signed_addr, &keys, &in_process);
    }
    if wanted("rust") {
        rust_gate_rows(&rust_addr, &keys, &rust_in_process);
    }
}

/// Every standard gate: in-process, over the protocol unsigned and signed at 1 to 200 clients,
/// and the open loads.
fn every_gate_rows(addr: &str, signed_addr: &str, keys: &Keys, in_process: &Agent) {
    println!("\neval action, every standard gate: round trips per second and latency");
    let base_rps = baseline("in-process (1 thread)", in_process);
    let threads = in_process_threads(in_process, 10, 200);
    row("in-process, 10 threads", threads, base_rps, "");
    for clients in [1, 10, 100, 200] {
        let mut unsigned_rps = 0.0;
        for (name, addr, keys) in [
            ("unsigned", addr, None),
            ("signed", signed_addr, Some(keys)),
        ] {
            let measured = load(addr, keys, clients, 2000 / clients);
            let vs = if keys.is_some() {
                format!(", {:.2}x unsigned", measured.rps / unsigned_rps)
            } else {
                unsigned_rps = measured.rps;
                String::new()
            };
            row(
                &format!("protocol {name}, {clients} client(s)"),
                measured,
                base_rps,
                &vs,
            );
        }
    }
    // An open load below capacity: the latency a user sees when the daemon is busy, not
    // saturated (closed-loop clients make mean latency = clients / throughput).
    paced_row(signed_addr, keys, 200, 2000.0, 15, base_rps);
    paced_row(signed_addr, keys, 200, 3000.0, 30, base_rps);
    // A lone user: one act every 20 ms, the daemon idle in between (docs/performance.md: on
    // these machines, memory not touched for a millisecond is slow to touch again).
    paced_row(signed_addr, keys, 1, 50.0, 250, base_rps);
}

/// `tools/call` through `passepartout mcp`, beside our own protocol, one client.
fn mcp_rows(signed_addr: &str, keys: &Keys, in_process: &Agent) {
    println!("\neval through MCP (passepartout mcp over stdio, every standard gate), one client");
    let base_rps = baseline("in-process (1 thread)", in_process);
    let ours = load(signed_addr, Some(keys), 1, 1000);
    row("protocol signed, 1 client", ours, base_rps, "");
    // A session of its own (its start, as a connection's, is in the throughput).
    let mcp_row = measure(1, 1000, || {
        let mut session = Mcp::start(signed_addr);
        move || session.eval()
    });
    row(
        "MCP tools/call, 1 client",
        mcp_row,
        base_rps,
        &format!(", {:.2}x our protocol", mcp_row.rps / ours.rps),
    );
}

/// The Rust gates only: in-process, over the protocol signed at 1 to 200 clients, the open loads.
fn rust_gate_rows(rust_addr: &str, keys: &Keys, rust_in_process: &Agent) {
    println!(
        "\neval action, the Rust gates only (pii disabled): round trips per second and latency"
    );
    let base_rps = baseline("in-process (1 thread)", rust_in_process);
    let threads = in_process_threads(rust_in_process, 10, 400);
    row("in-process, 10 threads", threads, base_rps, "");
    for clients in [1, 10, 100, 200] {
        let measured = load(rust_addr, Some(keys), clients, 4000 / clients);
        row(
            &format!("protocol signed, {clients} client(s)"),
            measured,
            base_rps,
            "",
        );
    }
    paced_row(rust_addr, keys, 100, 5000.0, 50, base_rps);
    // The issue-15 target's rate, offered rather than as fast as the clients can go.
    paced_row(rust_addr, keys, 100, 8000.0, 160, base_rps);
}

/// The row of [`paced`]: `clients` signed clients offering `rate` round trips a second in all.
fn paced_row(addr: &str, keys: &Keys, clients: usize, rate: f64, per_client: usize, base_rps: f64) {
    row(
        &format!(
            "signed, {clients} client{}, {rate:.0}/s offered",
            if clients == 1 { "" } else { "s" }
        ),
        paced(addr, Some(keys), clients, rate, per_client),
        base_rps,
        "",
    );
}

/// The agent called directly, sequentially: the baseline of the rows after it. Prints its row
/// and returns its round trips per second.
fn baseline(name: &str, agent: &Agent) -> f64 {
    let measured = in_process_threads(agent, 1, 2000);
    println!("  {name:<34} {}", columns(measured));
    measured.rps
}

/// The agent called directly from `threads` threads at once, `per_thread` actions each. What
/// the protocol adds is the difference to the rows after it.
fn in_process_threads(agent: &Agent, threads: usize, per_thread: usize) -> Measured {
    measure(threads, per_thread, || {
        || {
            passepartout::blocking::wait(agent.run(request_signal()));
        }
    })
}

/// One row: round trips per second, p50, p99, CPU per round trip, and the ratio to the
/// baseline.
fn row(name: &str, measured: Measured, base_rps: f64, extra: &str) {
    println!(
        "  {name:<34} {}  ({:.2}x in-process throughput{extra})",
        columns(measured),
        measured.rps / base_rps
    );
}

/// A row's measurements: round trips per second, p50, p99, and the process's CPU time per round
/// trip.
fn columns(m: Measured) -> String {
    format!(
        "{:>9.0}/s  p50 {:>8.1?}  p99 {:>8.1?}  cpu {:>6.1?}",
        m.rps, m.p50, m.p99, m.cpu
    )
}
