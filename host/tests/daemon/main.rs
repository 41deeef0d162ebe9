//! The daemon as a separate process on 127.0.0.1, over real TCP: many clients, bad input,
//! approvals across clients, and a kill -9 that loses nothing. Hostile clients are in `auth`
//! (keys, replays), `bounds` (leaks, lockout, non-readers, oversized replies) and
//! `approvals` (kill -9 during approvals).

mod approvals;
mod auth;
mod bounds;
mod chat;
mod events;
mod gateway;
mod mcp;
mod providers;
mod reload;
mod tui;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use passepartout::daemon::Keys;
use passepartout::daemon::client::{Client, ClientError};
use passepartout::daemon::protocol::{self, Direction, Nonce, Opener, Sealer};
use serde_json::{Value, json};

struct Daemon {
    child: Child,
    home: PathBuf,
    addr: String,
}

impl Daemon {
    /// The keys the daemon made in its home.
    fn keys(&self) -> Keys {
        Keys::for_client(&self.home.join("data/passepartout/keys")).expect("the daemon's keys")
    }

    /// Every record of the daemon's journal, oldest first.
    fn records(&self) -> Vec<passepartout::journal::Record> {
        passepartout::journal::Journal::open(&self.home.join("data/passepartout/passepartout.db"))
            .expect("journal")
            .records(None)
            .expect("records")
    }

    /// A client with both keys (the operator's).
    fn client(&self) -> Client {
        Client::connect(&self.addr, Some(&self.keys())).expect("connect")
    }

    /// The client key alone: what the agent's own tools could at most get, never the
    /// approver key.
    fn client_keys(&self) -> Keys {
        Keys {
            client: self.keys().client,
            approver: None,
        }
    }

    /// A connection with the client key only ([`Daemon::client_keys`]).
    fn client_only(&self) -> Client {
        Client::connect(&self.addr, Some(&self.client_keys())).expect("connect")
    }

    /// The daemon's resident memory, KiB.
    fn rss_kib(&self) -> u64 {
        self.proc_kib("VmRSS:")
    }

    /// The most memory the daemon has held resident at once, KiB.
    fn peak_rss_kib(&self) -> u64 {
        self.proc_kib("VmHWM:")
    }

    /// The daemon's /proc status line `field`, in KiB.
    fn proc_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("the daemon's /proc status");
        status
            .lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in {status}"))
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The compiled-component cache the tests share.
fn shared_cache() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-cache")
}

fn command(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    command_of(
        Path::new(env!("CARGO_BIN_EXE_passepartout")),
        home,
        args,
        env,
    )
}

/// [`command`], running the `passepartout` at `program`.
fn command_of(program: &Path, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env_clear()
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        // One compile cache for every test (keyed by the component's sha256, so sharing is
        // safe): the Python gate alone takes ~15 s to compile.
        .env("PASSEPARTOUT_CACHE", shared_cache())
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("HOME", home)
        .env("PASSEPARTOUT_READ_TIMEOUT_SECS", "2")
        .env("HEARTBEAT_INTERVAL", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// A daemon started in `home` with its plugins loaded (or failed to load): every test's clients
/// then run against the plugin set, never against a daemon still compiling it (seconds with a
/// cold compile cache, during which a silent client would meet the tests' 2 s read timeout).
fn start(home: &Path, env: &[(&str, &str)], plugins: Option<&Path>) -> Daemon {
    let d = listening(home, env, plugins);
    let deadline = Instant::now() + Duration::from_secs(300);
    let keys = Keys::for_client(&d.home.join("data/passepartout/keys")).ok();
    let mut client = Client::connect(&d.addr, keys.as_ref()).expect("connect");
    while status(&mut client)["health"] == "loading" {
        assert!(
            Instant::now() < deadline,
            "the daemon did not load its plugins in 300 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    d
}

/// A daemon started in `home`, as soon as it says where it listens (its plugins may still be
/// loading).
fn listening(home: &Path, env: &[(&str, &str)], plugins: Option<&Path>) -> Daemon {
    listening_from(
        Path::new(env!("CARGO_BIN_EXE_passepartout")),
        home,
        env,
        plugins,
    )
}

/// [`listening`], the daemon being the `passepartout` at `program`.
fn listening_from(
    program: &Path,
    home: &Path,
    env: &[(&str, &str)],
    plugins: Option<&Path>,
) -> Daemon {
    std::fs::create_dir_all(home.join("run")).expect("mkdir");
    let rendezvous = home.join("run/passepartout/daemon.json");
    let _ = std::fs::remove_file(&rendezvous);
    let mut args = vec!["daemon", "--port", "0"];
    let dir;
    if let Some(p) = plugins {
        dir = p.to_str().expect("utf-8").to_owned();
        args.extend(["--plugins", dir.as_str()]);
    }
    let child = command_of(program, home, &args, env)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn daemon");
    // Owned at once, so that the process is killed and reaped even if the wait below fails.
    let mut daemon = Daemon {
        child,
        home: home.to_owned(),
        addr: String::new(),
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(&rendezvous)
            && let Ok(v) = serde_json::from_str::<Value>(&text)
        {
            daemon.addr = format!("127.0.0.1:{}", v["port"]);
            return daemon;
        }
        assert!(Instant::now() < deadline, "the daemon did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn eval(client: &mut Client, a: u64, b: u64) -> Value {
    let (events, reply) = client.request_raw("act", json!({ "action": { "tool": "eval", "args": { "expression": format!("(+ {a} {b})") } } })).expect("request");
    // Before its reply, the gates' trace, as a flat event frame (what `send --trace` prints).
    if reply["type"] == "reply" {
        assert!(
            events
                .iter()
                .any(|e| e["event"] == "gate-trace" && e["trace"].is_array()),
            "{events:?}"
        );
    }
    reply
}

fn result(reply: &Value) -> &str {
    reply["result"]["steps"][0]["outcome"]["result"]
        .as_str()
        .unwrap_or_default()
}

#[test]
fn fifty_clients_each_get_their_own_twenty_replies() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[], None);
    let keys = d.keys();
    std::thread::scope(|s| {
        for c in 0..50u64 {
            let addr = d.addr.clone();
            let keys = &keys;
            s.spawn(move || {
                let mut client = Client::connect(&addr, Some(keys)).expect("connect");
                for r in 0..20u64 {
                    let reply = eval(&mut client, c * 1000, r);
                    assert_eq!(reply["type"], "reply", "{reply}");
                    assert_eq!(
                        result(&reply),
                        (c * 1000 + r).to_string(),
                        "client {c} got someone else's reply: {reply}"
                    );
                }
            });
        }
    });
}

/// A connection driven by hand: the handshake done with the protocol's own primitives, so
/// that tests can send what a real client never would.
struct Raw {
    stream: TcpStream,
    sealer: Sealer,
    opener: Opener,
    /// Bytes read past the last frame.
    buf: Vec<u8>,
}

/// Frames `bytes` arrive as before the daemon closes the connection, decoded unsigned (`None`)
/// or with `opener`.
fn answers(
    stream: &mut TcpStream,
    mut buf: Vec<u8>,
    mut opener: Option<&mut Opener>,
) -> Vec<Value> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let _ = stream.read_to_end(&mut buf);
    let mut out = Vec::new();
    let mut rest = &buf[..];
    loop {
        // The daemon's refusals before authentication are unsigned.
        let unsigned = rest.get(protocol::LEN_DIGITS) == Some(&b'{');
        let o = opener.as_deref_mut().filter(|_| !unsigned);
        match protocol::decode(rest, o, protocol::MAX_FRAME) {
            Ok(Some((v, used))) => {
                out.push(v);
                rest = &rest[used..];
            }
            _ => return out,
        }
    }
}

/// Send `bytes` on a fresh connection (no handshake); what the daemon answers.
fn raw(addr: &str, bytes: &[u8]) -> Vec<Value> {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.write_all(bytes).expect("write");
    answers(&mut s, Vec::new(), None)
}

fn frame(json: &Value) -> Vec<u8> {
    protocol::encode(&serde_json::to_vec(json).expect("json"), None).expect("frame")
}

fn hello(nonce: &Nonce) -> Vec<u8> {
    frame(
        &json!({ "type": "hello", "version": protocol::VERSION, "client": "raw-test", "nonce": nonce.hex() }),
    )
}

/// One frame; `buf` keeps what arrived past it.
fn read_one(stream: &mut TcpStream, buf: &mut Vec<u8>, opener: Option<&mut Opener>) -> Value {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut opener = opener;
    loop {
        if let Some((v, used)) =
            protocol::decode(buf, opener.as_deref_mut(), protocol::MAX_FRAME).expect("a frame")
        {
            buf.drain(..used);
            return v;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).expect("read");
        assert!(n > 0, "the daemon closed the connection");
        buf.extend_from_slice(&chunk[..n]);
    }
}

impl Raw {
    /// Hello, challenge, signed auth (with the approver proof when `keys` has it), hello.
    fn connect(addr: &str, keys: &Keys) -> Raw {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let ours = Nonce::random().expect("nonce");
        stream.write_all(&hello(&ours)).expect("hello");
        let mut buf = Vec::new();
        let challenge = read_one(&mut stream, &mut buf, None);
        assert_eq!(challenge["type"], "challenge", "{challenge}");
        let theirs = Nonce::parse(challenge["nonce"].as_str().expect("nonce")).expect("nonce");
        let key = keys.client.session(&ours, &theirs);
        let mut raw = Raw {
            stream,
            sealer: key.sealer(Direction::ToServer),
            opener: key.opener(Direction::ToClient),
            buf,
        };
        let mut auth = json!({ "type": "auth" });
        if let Some(a) = &keys.approver {
            auth["approver"] = json!(a.approver_proof(&ours, &theirs));
        }
        let frame = raw.seal(&auth);
        raw.stream.write_all(&frame).expect("auth");
        // An approver goes on under the key bound to the approver key too.
        if let Some(a) = &keys.approver {
            let k = a.approver_session(&key);
            raw.sealer = k.sealer(Direction::ToServer);
            raw.opener = k.opener(Direction::ToClient);
        }
        let hello = raw.read();
        assert_eq!(hello["type"], "hello", "{hello}");
        raw
    }

    /// `json` as this connection's next signed frame.
    fn seal(&mut self, json: &Value) -> Vec<u8> {
        protocol::encode(
            &serde_json::to_vec(json).expect("json"),
            Some(&mut self.sealer),
        )
        .expect("frame")
    }

    fn send(&mut self, json: &Value) -> Vec<u8> {
        let frame = self.seal(json);
        self.stream.write_all(&frame).expect("write");
        frame
    }

    fn read(&mut self) -> Value {
        read_one(&mut self.stream, &mut self.buf, Some(&mut self.opener))
    }

    /// Everything until the daemon closes.
    fn rest(mut self) -> Vec<Value> {
        answers(
            &mut self.stream,
            std::mem::take(&mut self.buf),
            Some(&mut self.opener),
        )
    }
}

fn protocol_error(messages: &[Value]) -> String {
    let last = messages.last().expect("an answer");
    assert_eq!(last["type"], "error", "{last}");
    last["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn bad_input_closes_that_client_only() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[], None);
    // A client that says nothing is closed after the read timeout (2 s here).
    let silent = raw(&d.addr, b"");
    assert!(protocol_error(&silent).contains("no frame arrived within 2 s"));
    let mut good = d.client();
    assert!(protocol_error(&raw(&d.addr, b"zzzzzz{}")).contains("not 6 lowercase hex digits"));
    assert!(protocol_error(&raw(&d.addr, b"000005}}}}}")).contains("not JSON"));
    assert!(
        protocol_error(&raw(&d.addr, &frame(&json!({ "type": "request" }))))
            .contains("first message must be a hello")
    );
    // After the handshake: an unknown message type.
    let mut r = Raw::connect(&d.addr, &d.keys());
    r.send(&json!({ "type": "launch" }));
    assert!(protocol_error(&r.rest()).contains("unknown message type"));
    // Short read and disconnect mid-request: the daemon just goes on.
    let mut s = TcpStream::connect(&d.addr).expect("connect");
    s.write_all(b"000fff{\"type\":").expect("write");
    drop(s);
    let mut r = Raw::connect(&d.addr, &d.keys());
    r.send(&json!({"type":"request","id":"1","op":"act","action":{"tool":"eval","args":{"expression":"(+ 1 1)"}}}));
    drop(r);
    // An unknown op is a request error, not a broken connection.
    let (_, reply) = good
        .request_raw("launch-missiles", json!({}))
        .expect("request");
    assert_eq!(reply["type"], "error");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown op"))
    );
    assert_eq!(
        result(&eval(&mut good, 2, 3)),
        "5",
        "the good client is still served"
    );
}

/// A client choosing a huge request id would have it echoed in every answer, kept with the
/// action it suspends (the approver's `approvals` listing) and copied into each verdict every
/// follower hears: such a request is refused before it runs, and the connection goes on.
#[test]
fn a_request_id_past_256_bytes_is_refused_and_runs_nothing() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[], None);
    let mut r = Raw::connect(&d.addr, &d.keys());
    let act = |id: &str| {
        json!({ "type": "request", "id": id, "op": "act",
                "action": { "tool": "eval", "args": { "expression": "(+ 40 2)" } } })
    };
    r.send(&act(&"a".repeat(1 << 20)));
    let refused = r.read();
    // What failed, without a megabyte of id.
    let shown = refused.to_string().chars().take(300).collect::<String>();
    assert_eq!(refused["type"], "error", "{shown}");
    assert_eq!(
        refused["id"],
        Value::Null,
        "the long id is not echoed: {shown}"
    );
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("at most 256 bytes") && message.contains("1048576"),
        "{message}"
    );
    // The longest id allowed is answered as any other, on the same connection.
    let longest = "b".repeat(256);
    r.send(&act(&longest));
    let reply = loop {
        let m = r.read();
        assert_eq!(m["id"], json!(longest), "{m}");
        if m["type"] != "event" {
            break m;
        }
    };
    assert_eq!(reply["type"], "reply", "{reply}");
    assert_eq!(result(&reply), "42");
    // Nothing ran for the refused request: one proposal in the journal, the allowed one's.
    let proposals: Vec<Value> = d
        .records()
        .into_iter()
        .filter(|r| r.kind == "proposal")
        .map(|r| r.body["signal"]["meta"]["session"].clone())
        .collect();
    assert_eq!(proposals.len(), 1, "{proposals:?}");
    assert!(
        proposals[0].as_str().is_some_and(|s| s.contains(&longest)),
        "{proposals:?}"
    );
}

fn hostile_gate_dir(home: &Path) -> PathBuf {
    passepartout_tests::plugin_folder_of(
        &home.join("plugins/hostile-gate"),
        passepartout_tests::HOSTILE_GATE_WASM,
        passepartout_tests::HOSTILE_GATE_MANIFEST,
    );
    home.join("plugins")
}

/// Approve or deny `token` as a person would: on the action `approvals` shows.
fn decide(client: &mut Client, op: &str, token: &str) -> Value {
    let (_, list) = client
        .request_raw("approvals", json!({}))
        .expect("approvals");
    let shown = list["result"]
        .as_array()
        .and_then(|a| a.iter().find(|p| p["token"] == token))
        .unwrap_or_else(|| panic!("{token} is not listed: {list}"));
    let digest = shown["digest"].as_str().expect("digest");
    let (_, reply) = client
        .request_raw(op, json!({ "token": token, "digest": digest }))
        .expect("decide");
    reply
}

fn needs_approval(client: &mut Client) -> String {
    ask_approval(client).unwrap_or_else(|e| panic!("{e}"))
}

/// What `act` of the hostile gate's `approve` answered: a token, or the error's message.
fn ask_approval(client: &mut Client) -> Result<String, String> {
    ask_approval_padded(client, 0)
}

/// As [`ask_approval`], the action carrying `pad` bytes more (an arg `pad`, when not 0).
fn ask_approval_padded(client: &mut Client, pad: usize) -> Result<String, String> {
    let mut args = json!({ "do": "approve", "expression": "(+ 1 2)" });
    if pad > 0 {
        args["pad"] = json!("x".repeat(pad));
    }
    let (_, reply) = client
        .request_raw("act", json!({ "action": { "tool": "eval", "args": args } }))
        .expect("request");
    if reply["type"] == "error" {
        return Err(reply["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned());
    }
    let outcome = &reply["result"]["steps"][0]["outcome"];
    match (outcome["outcome"].as_str(), outcome["token"].as_str()) {
        (Some("suspended"), Some(token)) => Ok(token.to_owned()),
        // Not the whole reply: it carries the action.
        _ => Err(format!(
            "not suspended: {}",
            outcome.to_string().chars().take(400).collect::<String>()
        )),
    }
}

#[test]
fn an_approval_asked_by_one_client_is_granted_by_another() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let d = start(home.path(), &[], Some(&plugins));
    let mut asker = d.client();
    let mut approver = d.client();
    let token = needs_approval(&mut asker);
    let reply = decide(&mut approver, "approve", &token);
    assert_eq!(result(&reply), "3", "{reply}");
    // The asker hears the result of its action.
    asker
        .set_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let event = asker.read().expect("event");
    assert_eq!(event["event"], "message");
    assert_eq!(event["text"], "3");
}

#[test]
fn kill_9_loses_neither_pending_approvals_nor_the_journal() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let mut d = start(home.path(), &[], Some(&plugins));
    let mut client = d.client();
    let token = needs_approval(&mut client);
    for i in 0..5 {
        eval(&mut client, i, i);
    }
    d.child.kill().expect("kill -9");
    let _ = d.child.wait();
    drop(client);

    let d2 = start(&d.home, &[], Some(&plugins));
    let mut client = d2.client();
    let (_, pending) = client.request_raw("approvals", json!({})).expect("request");
    assert_eq!(
        pending["result"][0]["token"],
        token.as_str(),
        "the approval survived"
    );
    let out = command(&d2.home, &["journal", "verify"], &[])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let reply = decide(&mut client, "approve", &token);
    assert_eq!(result(&reply), "3");
}

/// A daemon in `home` with the hostile gate, and the token of the `(+ 1 2)` it holds for
/// approval.
fn holding_an_approval(home: &Path) -> (Daemon, String) {
    let plugins = hostile_gate_dir(home);
    let d = start(home, &[], Some(&plugins));
    let token = needs_approval(&mut d.client());
    (d, token)
}

/// Whether `token` is still pending, as the daemon's `approvals` says.
fn is_pending(d: &Daemon, token: &str) -> bool {
    let (_, list) = d
        .client()
        .request_raw("approvals", json!({}))
        .expect("approvals");
    list["result"]
        .as_array()
        .is_some_and(|a| a.iter().any(|p| p["token"] == token))
}

#[test]
fn approve_refused_by_the_running_daemon_decides_nothing_behind_its_back() {
    let home = tempfile::tempdir().expect("temp dir");
    let (d, token) = holding_an_approval(home.path());
    // A key the daemon does not take: it answers, and refuses. The database is this user's
    // to open, but the decision is not made there instead.
    let wrong = "w".repeat(40);
    for op in ["approve", "deny"] {
        let out = command(
            home.path(),
            &[op, &token],
            &[("PASSEPARTOUT_HMAC_SECRET", wrong.as_str())],
        )
        .output()
        .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{op}: {stderr}");
        assert!(
            !stderr.contains("(+ 1 2)"),
            "{op} showed the action: {stderr}"
        );
    }
    assert!(is_pending(&d, &token), "decided");
}

#[test]
fn the_approve_command_goes_through_the_running_daemon() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let d = start(home.path(), &[], Some(&plugins));
    let mut asker = d.client();
    let token = needs_approval(&mut asker);
    let out = command(home.path(), &["approve", &token], &[])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "3");
    asker
        .set_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    assert_eq!(
        asker.read().expect("event")["text"],
        "3",
        "the asker hears it from the daemon"
    );
    let out = command(
        home.path(),
        &[
            "send",
            "--action",
            r#"{"tool":"eval","args":{"expression":"(* 6 7)"}}"#,
        ],
        &[],
    )
    .output()
    .expect("run");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "42");
    // A malformed action is a bad request (exit 2) that names the field, and runs nothing.
    let out = command(
        home.path(),
        &["send", "--action", r#"{"tool":"eval","sudo":true}"#],
        &[],
    )
    .output()
    .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown field `sudo`"), "{stderr}");
    let out = command(home.path(), &["status", "--json"], &[])
        .output()
        .expect("run");
    let status: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(status["daemon"]["health"], "healthy", "{status}");
    assert!(status["daemon"]["uptime_secs"].is_u64());
}

#[test]
fn chat_starts_a_daemon_and_talks_to_the_model() {
    use passepartout_tests::http::{Canned, Server, fixture};
    let home = tempfile::tempdir().expect("temp dir");
    // The daemon probes the provider at boot (GET /v1/models, answered apart by the server).
    let server = Server::start(vec![Canned::json(fixture("openai/text.json"))]);
    std::fs::create_dir_all(home.path().join("run")).expect("mkdir");
    providers::config(home.path(), &providers::openai(&server.url));
    // A database given elsewhere: the daemon chat starts uses it (and logs beside it).
    let elsewhere = home.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let db = elsewhere.join("chat.db");
    let db_flag = db.to_str().expect("utf-8");
    let mut chat = command(home.path(), &["chat", "--db", db_flag], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chat");
    chat.stdin
        .take()
        .expect("stdin")
        .write_all(b"hello there\n")
        .expect("write");
    let out = chat.wait_with_output().expect("chat ends at end of input");
    let rendezvous = home.path().join("run/passepartout/daemon.json");
    let pid = std::fs::read_to_string(&rendezvous)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["pid"].as_u64());
    // `stop` ends the daemon chat started.
    assert!(
        pid.is_some(),
        "the background daemon wrote where it listens"
    );
    let stopped = command(home.path(), &["stop"], &[]).output().expect("stop");
    assert!(
        db.exists() && elsewhere.join("daemon.log").exists(),
        "the background daemon used --db"
    );
    assert!(
        !home
            .path()
            .join("data/passepartout/passepartout.db")
            .exists(),
        "and not the default database"
    );
    if !stopped.status.success()
        && let Some(pid) = pid
    {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert!(
        stopped.status.success() && String::from_utf8_lossy(&stopped.stdout).trim() == "stopped",
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    assert!(
        !Path::new(&format!("/proc/{}", pid.unwrap_or(0))).exists(),
        "the daemon is gone"
    );
    assert!(!rendezvous.exists(), "and its rendezvous file with it");
    let again = command(home.path(), &["stop"], &[]).output().expect("stop");
    assert_eq!(
        (
            again.status.code(),
            String::from_utf8_lossy(&again.stdout).trim()
        ),
        (Some(0), "no daemon is running")
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("started a daemon in the background"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Hello from the fixture."
    );
    let requests = server.requests();
    assert!(
        requests.iter().any(|r| r.path == "/v1/models"),
        "the boot probe"
    );
    let asked = requests
        .iter()
        .find(|r| r.method == "POST")
        .expect("the question reached the model");
    // The chat skill frames what the person typed; their words end the prompt.
    let prompt = asked.body["messages"][1]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(prompt.ends_with("hello there"), "{prompt}");
    assert!(
        pid.is_some(),
        "the background daemon wrote where it listens"
    );
}

#[test]
fn an_explicit_port_that_is_taken_is_an_error_and_only_loopback_is_allowed() {
    let home = tempfile::tempdir().expect("temp dir");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = taken.local_addr().expect("addr").port().to_string();
    let out = command(home.path(), &["daemon", "--port", &port], &[])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not free"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = command(
        home.path(),
        &["daemon", "--port", "0"],
        &[("DAEMON_HOST", "0.0.0.0")],
    )
    .output()
    .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a loopback address"));
}

#[test]
fn past_the_connection_limit_a_client_is_told_and_the_others_go_on() {
    use passepartout::daemon::server::{APPROVER_PLACES, MAX_CONNECTIONS};
    let home = tempfile::tempdir().expect("temp dir");
    // Long read timeout: the held connections stay silent for the whole test.
    let d = start(
        home.path(),
        &[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")],
        None,
    );
    let tool_keys = d.client_keys();
    // The agent's own tools (the client key) fill every place they may take, once the
    // connection that waited for the plugins is gone.
    let mut first = d.client_only();
    let deadline = Instant::now() + Duration::from_secs(10);
    while status(&mut first)["connections"] != 1 {
        assert!(Instant::now() < deadline, "the start's connection lingers");
        std::thread::sleep(Duration::from_millis(20));
    }
    let hold: Vec<Client> = (1..MAX_CONNECTIONS - APPROVER_PLACES)
        .map(|_| d.client_only())
        .collect();
    let refused = Client::connect(&d.addr, Some(&tool_keys))
        .err()
        .expect("refused");
    assert!(
        refused
            .to_string()
            .contains("already serves 240 clients, as many as it takes with the client key"),
        "{refused}"
    );
    // The operator still gets in, up to the places kept for the approver key, and decides.
    let mut operators: Vec<Client> = (0..APPROVER_PLACES).map(|_| d.client()).collect();
    let (_, listed) = operators[0]
        .request_raw("approvals", json!({}))
        .expect("approvals");
    assert_eq!(listed["result"], json!([]), "{listed}");
    let refused = Client::connect(&d.addr, Some(&d.keys()))
        .err()
        .expect("refused");
    assert!(
        refused.to_string().contains("already serves 256 clients"),
        "{refused}"
    );
    assert_eq!(status(&mut operators[1])["connections"], 256);
    assert_eq!(
        result(&eval(&mut first, 1, 1)),
        "2",
        "the connected clients go on"
    );
    drop(hold);
    drop(operators);
    std::thread::sleep(Duration::from_millis(300));
    let mut again = d.client_only();
    assert_eq!(result(&eval(&mut again, 2, 2)), "4");
}

#[test]
fn memory_auto_saves_on_its_interval_and_once_more_at_sigterm() {
    let home = tempfile::tempdir().expect("temp dir");
    let org = home.path().join("org");
    std::fs::create_dir_all(&org).expect("mkdir");
    std::fs::write(org.join("a.org"), "* TODO First :project:\n").expect("write");
    providers::config(
        home.path(),
        &format!("[memory]\npaths = [\"{}\"]\n", org.display()),
    );
    let query = |home: &Path| -> Vec<String> {
        let out = command(
            home,
            &["memory", "query", "--tag", "project", "--json"],
            &[],
        )
        .output()
        .expect("run");
        let hits: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        hits.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|h| h["title"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let wait_for = |home: &Path, want: &[&str]| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let got = query(home);
            if got == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "memory has {got:?}, not {want:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    let mut d = start(home.path(), &[("MEMORY_AUTO_SAVE_INTERVAL", "1")], None);
    wait_for(home.path(), &["First"]);
    std::fs::write(
        org.join("a.org"),
        "* TODO First :project:\n* TODO Second :project:\n",
    )
    .expect("write");
    wait_for(home.path(), &["First", "Second"]);

    // kill -9: no save on the way out. The next daemon ingests at boot, and once more at
    // SIGTERM (its interval is an hour, so only those two can have read a new file).
    d.child.kill().expect("kill -9");
    let _ = d.child.wait();
    let mut slow = start(home.path(), &[("MEMORY_AUTO_SAVE_INTERVAL", "3600")], None);
    wait_for(home.path(), &["First", "Second"]);
    std::fs::write(org.join("b.org"), "* TODO Third :project:\n").expect("write");
    let _ = Command::new("kill")
        .arg(slow.child.id().to_string())
        .status();
    let status = slow.child.wait().expect("wait");
    assert!(status.success(), "a clean stop: {status:?}");
    wait_for(home.path(), &["First", "Second", "Third"]);
}

/// Write the built-in shell-guard to `dir/name` as a third-party gate named `name`.
fn guard_copy(dir: &Path, name: &str) -> PathBuf {
    let b = passepartout::builtin::BUILTIN
        .iter()
        .find(|b| b.dir == "shell-guard")
        .expect("shell-guard is built in");
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).expect("mkdir");
    std::fs::write(
        folder.join("plugin.toml"),
        b.manifest
            .replace("name = \"shell-guard\"", &format!("name = \"{name}\"")),
    )
    .expect("manifest");
    std::fs::write(folder.join("shell_guard.wasm"), b.component).expect("component");
    folder
}

fn destructive(client: &mut Client) -> Value {
    let (_, reply) = client
        .request_raw(
            "act",
            json!({ "action": { "tool": "eval", "args": { "expression": "(+ 1 2)", "command": "rm -rf /" } } }),
        )
        .expect("request");
    reply["result"]["steps"][0]["outcome"].clone()
}

fn status(client: &mut Client) -> Value {
    let (_, reply) = client.request_raw("status", json!({})).expect("status");
    reply["result"].clone()
}

#[test]
fn a_gate_installed_while_the_daemon_runs_is_in_force_for_the_next_request() {
    let home = tempfile::tempdir().expect("temp dir");
    let config = home.path().join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    // The built-in guard is off, so only the installed copy can refuse; eval asks a person.
    std::fs::write(
        config.join("policy.toml"),
        "[plugins.shell-guard]\nenabled = false\n\
         [plugins.approval.config]\ndangerous_tools = [\"eval\"]\n",
    )
    .expect("policy");
    let d = start(home.path(), &[("PASSEPARTOUT_RELOAD_POLL_MS", "0")], None);
    let mut client = d.client();
    let before = destructive(&mut client);
    assert_eq!(before["outcome"], "suspended", "{before}");
    let token = before["token"].as_str().expect("token").to_owned();
    let set_before = status(&mut client)["plugin_set"].clone();

    let src = guard_copy(&home.path().join("src"), "guard-copy");
    let out = command(
        home.path(),
        &["plugin", "install", "--yes", src.to_str().expect("utf-8")],
        &[],
    )
    .output()
    .expect("install");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("the running daemon took the change"),
        "{stdout}"
    );

    // The same connection, the next request: the new gate is in force.
    let after = destructive(&mut client);
    assert_eq!(after["outcome"], "rejected", "{after}");
    assert_eq!(after["gate"], "guard-copy", "{after}");
    // An approval asked for under the old set is verified by the new one when approved.
    let approved = decide(&mut client, "approve", &token);
    let outcome = &approved["result"]["steps"][0]["outcome"];
    assert_eq!(outcome["outcome"], "rejected", "{approved}");
    assert_eq!(outcome["gate"], "guard-copy", "{approved}");
    let s = status(&mut client);
    assert_ne!(s["plugin_set"], set_before);
    assert_eq!(s["reload"]["reloads"], 1);
    // Asking again with nothing changed loads nothing: no client can keep the daemon busy.
    let (_, again) = client.request_raw("reload", json!({})).expect("reload");
    assert_eq!(again["result"]["changed"], false, "{again}");
    assert_eq!(again["result"]["set"], s["plugin_set"]);

    // Mid-update (the folder set aside, the new one not yet in place) nothing is loaded.
    let aside = home
        .path()
        .join("data/passepartout/plugins/.old-guard-copy");
    std::fs::create_dir_all(&aside).expect("mkdir");
    let (_, busy) = client.request_raw("reload", json!({})).expect("reload");
    assert!(
        busy["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in progress")),
        "{busy}"
    );
    std::fs::remove_dir_all(&aside).expect("rmdir");
    let (_, done) = client.request_raw("reload", json!({})).expect("reload");
    assert_eq!(done["type"], "reply", "{done}");
    // A policy that does not parse keeps the running set, and says why.
    std::fs::write(config.join("policy.toml"), "[plugins.shell-guard-hunter2\n").expect("policy");
    let (_, reply) = client.request_raw("reload", json!({})).expect("reload");
    assert_eq!(reply["type"], "error", "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("the running one stays") && m.contains("policy.toml")),
        "{reply}"
    );
    // A client-key connection hears that it failed, not the file's words or this machine's
    // paths (the policy answered again, from its cached failure, tells it no more).
    let mut tool = d.client_only();
    for _ in 0..2 {
        let (_, reply) = tool.request_raw("reload", json!({})).expect("reload");
        let told = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(told.contains("the reload failed"), "{reply}");
        assert!(
            !told.contains("hunter2")
                && !told.contains("policy.toml")
                && !told.contains(&home.path().display().to_string()),
            "{reply}"
        );
    }
    let s = status(&mut client);
    assert_eq!(s["health"], "degraded");
    assert!(s["reload"]["last_error"].is_string(), "{s}");
    assert_eq!(destructive(&mut client)["gate"], "guard-copy");
}

/// With the built-in guard off by policy, start a daemon polling every `poll_ms`, then turn
/// the guard back on in the policy file.
fn guard_turned_back_on(home: &Path, poll_ms: &str) -> (Daemon, Client) {
    let config = home.join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join("policy.toml"),
        "[plugins.shell-guard]\nenabled = false\n",
    )
    .expect("policy");
    let d = start(home, &[("PASSEPARTOUT_RELOAD_POLL_MS", poll_ms)], None);
    let mut client = d.client();
    assert_ne!(destructive(&mut client)["outcome"], "rejected");
    std::fs::write(config.join("policy.toml"), "# all defaults\n").expect("policy");
    (d, client)
}

fn until_guarded(client: &mut Client, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while destructive(client)["gate"] != "shell-guard" {
        assert!(
            Instant::now() < deadline,
            "{what}: the changed policy was not loaded"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_daemon_reloads_when_its_files_change() {
    let home = tempfile::tempdir().expect("temp dir");
    let (_d, mut client) = guard_turned_back_on(home.path(), "100");
    until_guarded(&mut client, "file watch");
    assert!(status(&mut client)["reload"]["reloads"].as_u64() >= Some(1));
}

#[test]
fn sighup_reloads_the_daemon() {
    let home = tempfile::tempdir().expect("temp dir");
    // Not watching: only the signal can make it reload.
    let (d, mut client) = guard_turned_back_on(home.path(), "0");
    std::thread::sleep(Duration::from_millis(300));
    assert_ne!(
        destructive(&mut client)["outcome"],
        "rejected",
        "not reloaded yet"
    );
    let pid = libc::pid_t::try_from(d.child.id()).expect("a pid");
    // SAFETY: kill(2) with a pid this test spawned and still owns (not yet reaped).
    let sent = unsafe { libc::kill(pid, libc::SIGHUP) };
    assert_eq!(sent, 0, "SIGHUP sent");
    until_guarded(&mut client, "SIGHUP");
    assert_eq!(status(&mut client)["reload"]["reloads"], 1);
}

/// The daemon's thread count.
fn threads(d: &Daemon) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", d.child.id()))
        .expect("the daemon's /proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("Threads")
}

/// Clients with the client key asking for a reload all at once, while one loads a changed set,
/// do not each hold a thread of the daemon's (its blocking pool, which the journal's readers
/// and the approvals share): the requests wait their turn without one, and each is answered.
#[test]
fn many_reload_requests_at_once_hold_no_thread_each() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[("PASSEPARTOUT_RELOAD_POLL_MS", "0")], None);
    assert_eq!(result(&eval(&mut d.client(), 2, 2)), "4");
    let before = threads(&d);
    // A changed policy: the first request loads the set anew; the others wait behind it.
    let config = home.path().join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(config.join("policy.toml"), "# changed\n").expect("policy");
    let keys = d.client_keys();
    let per = passepartout::daemon::server::MAX_IN_FLIGHT;
    let mut clients: Vec<Raw> = (0..16).map(|_| Raw::connect(&d.addr, &keys)).collect();
    for c in &mut clients {
        let frames: Vec<u8> = (0..per)
            .flat_map(|i| c.seal(&json!({ "type": "request", "id": i, "op": "reload" })))
            .collect();
        c.stream.write_all(&frames).expect("send");
    }
    for c in &mut clients {
        let mut answered = 0;
        while answered < per {
            let m = c.read();
            if m["type"] == "reply" {
                answered += 1;
            } else {
                assert_ne!(m["type"], "error", "{m}");
            }
        }
    }
    let after = threads(&d);
    assert!(
        after < before + 16,
        "{} reload requests took {} threads ({before} before, {after} after)",
        16 * per,
        after.saturating_sub(before)
    );
    assert_eq!(status(&mut d.client())["reload"]["reloads"], 1);
}

#[test]
fn the_daemon_listens_before_its_plugins_load_and_requests_wait_for_them() {
    let home = tempfile::tempdir().expect("temp dir");
    // An empty compile cache: loading compiles every plugin (the Python gate alone for
    // seconds), and the daemon must not wait for that to listen.
    let cold = home.path().join("cold-cache");
    let cold = cold.to_str().expect("utf-8");
    let d = listening(home.path(), &[("PASSEPARTOUT_CACHE", cold)], None);
    let mut client = d.client();
    let s = status(&mut client);
    assert_eq!(s["health"], "loading", "{s}");
    // A request made now waits for the plugins, then runs through every gate.
    let reply = eval(&mut client, 2, 3);
    assert_eq!(result(&reply), "5", "{reply}");
    assert_ne!(status(&mut client)["health"], "loading");
}

/// A policy in `home` granting the shell tool `program` and a read-write workspace holding
/// `file` (name, text), owned by `nobody` as confined programs run.
fn shell_granted(home: &Path, program: &str, file: (&str, &str)) {
    let ws = home.join("ws");
    std::fs::create_dir_all(&ws).expect("mkdir");
    std::fs::write(ws.join(file.0), file.1).expect("write");
    passepartout_tests::give_to_nobody(&ws);
    let config = home.join("config/passepartout");
    std::fs::create_dir_all(&config).expect("mkdir");
    std::fs::write(
        config.join("policy.toml"),
        format!(
            "[plugins.shell]\nfs = [{{ guest = \"/workspace\", host = \"{}\", access = \"read-write\" }}]\nprocess = [\"{program}\"]\n",
            ws.display()
        ),
    )
    .expect("policy");
}

#[test]
fn a_program_renamed_over_the_daemons_executable_is_not_what_programs_start_through() {
    // Granted programs start through the daemon's own executable before they are confined.
    // Whoever replaces that file on disk (an upgrade half done, a writable bin directory)
    // must not get their code run unconfined: the trampoline is the file the daemon runs.
    let home = tempfile::tempdir().expect("temp dir");
    shell_granted(home.path(), "cat", ("notes.txt", "inside\n"));
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let exe = bin.join("passepartout");
    std::fs::copy(env!("CARGO_BIN_EXE_passepartout"), &exe).expect("copy the executable");
    let d = listening_from(&exe, home.path(), &[], None);
    let mut client = d.client();
    while status(&mut client)["health"] == "loading" {
        std::thread::sleep(Duration::from_millis(50));
    }
    let marker = home.path().join("swapped-in-code-ran");
    let swapped = bin.join("swapped");
    std::fs::write(
        &swapped,
        format!("#!/bin/sh\ntouch {}\nexit 3\n", marker.display()),
    )
    .expect("script");
    std::fs::set_permissions(
        &swapped,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::rename(&swapped, &exe).expect("rename over the executable");
    let (_, reply) = client
        .request_raw(
            "act",
            json!({ "action": { "tool": "shell", "args": { "program": "cat", "args": ["notes.txt"] }, "explanation": "read the notes file the user asked about" } }),
        )
        .expect("request");
    assert!(
        !marker.exists(),
        "the file renamed over the executable ran: {reply}"
    );
    assert!(reply.to_string().contains("inside"), "{reply}");
}

#[test]
fn a_granted_program_cannot_read_the_daemon_s_environment() {
    let home = tempfile::tempdir().expect("temp dir");
    shell_granted(home.path(), "cat", ("notes.txt", "inside\n"));
    // A provider key, where a granted program would look for it.
    let d = start(
        home.path(),
        &[("ANTHROPIC_API_KEY", "sk-ant-SECRET-IN-ENV")],
        None,
    );
    let mut client = d.client();
    let cat = |client: &mut Client, path: &str| -> String {
        let (_, reply) = client
            .request_raw(
                "act",
                json!({ "action": { "tool": "shell", "args": { "program": "cat", "args": [path] }, "explanation": "read the notes file the user asked about" } }),
            )
            .expect("request");
        reply.to_string()
    };
    let inside = cat(&mut client, "notes.txt");
    assert!(inside.contains("inside"), "the mount is readable: {inside}");
    let environ = format!("/proc/{}/environ", d.child.id());
    let out = cat(&mut client, &environ);
    assert!(!out.contains("SECRET-IN-ENV"), "{out}");
    assert!(out.contains("Permission denied"), "{out}");
}

#[test]
fn programs_that_run_for_seconds_hold_no_worker_and_others_are_answered_meanwhile() {
    // Requests are async on a worker per core: a granted program that runs for seconds must
    // not hold one (on 2 cores, two such calls would stall every other client). Eight run at
    // once, all for their full two seconds, and another client is answered meanwhile.
    let home = tempfile::tempdir().expect("temp dir");
    shell_granted(home.path(), "tail", ("log.txt", "a line\n"));
    let d = start(home.path(), &[], None);
    let mut probe = d.client();
    assert_eq!(result(&eval(&mut probe, 1, 1)), "2", "warm");
    let sleepers: Vec<_> = (0..8)
        .map(|_| {
            let mut client = d.client();
            std::thread::spawn(move || {
                let start = Instant::now();
                let (_, reply) = client
                    .request_raw(
                        "act",
                        json!({ "action": { "tool": "shell", "args": { "program": "tail", "args": ["-f", "log.txt"], "timeout_ms": 2000 }, "explanation": "follow the log for two seconds as the test asks" } }),
                    )
                    .expect("request");
                (start.elapsed(), reply)
            })
        })
        .collect();
    // Let the eight programs start.
    std::thread::sleep(Duration::from_millis(400));
    let start = Instant::now();
    let reply = eval(&mut probe, 2, 3);
    let took = start.elapsed();
    assert_eq!(result(&reply), "5", "{reply}");
    assert!(
        took < Duration::from_millis(1000),
        "a request waited {took:?} behind running programs"
    );
    for sleeper in sleepers {
        let (elapsed, reply) = sleeper.join().expect("sleeper");
        // Each followed the log until its own timeout ended it.
        assert!(reply.to_string().contains("timed out"), "{reply}");
        assert!(
            elapsed >= Duration::from_secs(2) && elapsed < Duration::from_secs(4),
            "{elapsed:?} (the eight ran one after another?): {reply}"
        );
    }
}
