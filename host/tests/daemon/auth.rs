//! Hostile clients against authentication: no key, a wrong key, an old protocol, unsigned and
//! uppercase frames, the client key without the approver key, and replays within and across
//! connections.

use super::*;
use passepartout::daemon::protocol::Secret;

fn stranger() -> Keys {
    Keys {
        client: Secret::new(b"a guess at the key, 32 bytes long"),
        approver: None,
    }
}

#[test]
fn a_connection_without_the_key_gets_nothing_but_the_refusal() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[], None);
    let no_key = Client::connect(&d.addr, None).err().expect("refused");
    assert!(
        no_key.to_string().contains("requires authentication"),
        "{no_key}"
    );
    let wrong = Client::connect(&d.addr, Some(&stranger()))
        .err()
        .expect("refused");
    assert!(
        wrong.to_string().contains("authentication failed"),
        "{wrong}"
    );

    // By hand: after the challenge, a request instead of the signed auth gets the refusal
    // and nothing else: no hello, no reply.
    let mut s = TcpStream::connect(&d.addr).expect("connect");
    s.write_all(&hello(&Nonce::random().expect("nonce")))
        .expect("hello");
    assert_eq!(read_one(&mut s, &mut Vec::new(), None)["type"], "challenge");
    let started = Instant::now();
    s.write_all(&frame(
        &json!({ "type": "request", "id": 1, "op": "approvals" }),
    ))
    .expect("write");
    let got = answers(&mut s, Vec::new(), None);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        protocol_error(&got).contains("authentication failed"),
        "{got:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "an unsigned frame is refused at once, not after the read timeout"
    );

    // The old protocol, or none: refused with the versions this daemon speaks.
    for hello in [
        json!({ "type": "hello", "version": 1 }),
        json!({ "type": "hello" }),
        json!({ "type": "hello", "version": 99 }),
    ] {
        let got = raw(&d.addr, &frame(&hello));
        assert!(protocol_error(&got).contains("not supported"), "{got:?}");
        assert_eq!(got[0]["error"]["supported"], json!([protocol::VERSION]));
    }
    // A hello over the handshake limit (4 KiB).
    let big = json!({ "type": "hello", "version": 2, "client": "x".repeat(5000) });
    assert!(protocol_error(&raw(&d.addr, &frame(&big))).contains("over the limit of 4096"));
    // The daemon goes on serving its own.
    assert_eq!(result(&eval(&mut d.client(), 1, 1)), "2");
}

#[test]
fn unsigned_and_uppercase_frames_after_the_handshake_are_refused_at_once() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(
        home.path(),
        &[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")],
        None,
    );
    let mut r = Raw::connect(&d.addr, &d.keys());
    let started = Instant::now();
    r.stream
        .write_all(&frame(&json!({ "type": "request", "id": 1, "op": "ping" })))
        .expect("write");
    let got = r.rest();
    assert!(protocol_error(&got).contains("not signed"), "{got:?}");
    assert!(started.elapsed() < Duration::from_secs(1));

    let mut r = Raw::connect(&d.addr, &d.keys());
    let mut f = r.seal(&json!({ "type": "request", "id": 1, "op": "ping" }));
    for b in &mut f[protocol::LEN_DIGITS..protocol::LEN_DIGITS + protocol::MAC_DIGITS] {
        b.make_ascii_uppercase();
    }
    r.stream.write_all(&f).expect("write");
    assert!(protocol_error(&r.rest()).contains("signature is wrong"));
}

#[test]
fn client_key_holders_cannot_crowd_the_operators_questions_out() {
    use passepartout::approvals::{CLIENT_PLACES, MAX_PENDING};
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let d = start(home.path(), &[], Some(&plugins));
    // Two client-key connections (one holder may open many) ask as much as they may.
    let mut tools = [d.client_only(), d.client_only()];
    let mut refusal = None;
    for n in 0..MAX_PENDING {
        match ask_approval(&mut tools[n % 2]) {
            Ok(_) => {}
            Err(message) => {
                refusal = Some((n, message));
                break;
            }
        }
    }
    let (asked, message) = refusal.expect("refused before every place was taken");
    assert_eq!(asked, CLIENT_PLACES, "{message}");
    assert!(
        message.contains("kept for the operator") && message.contains("passepartout approvals"),
        "{message}"
    );
    assert!(ask_approval(&mut tools[0]).is_err(), "still full");
    // The operator's own questions are still asked, up to every place.
    let mut operator = d.client();
    for _ in CLIENT_PLACES..MAX_PENDING {
        ask_approval(&mut operator).expect("the operator's question is asked");
    }
    let full = ask_approval(&mut operator).expect_err("every place taken");
    assert!(full.contains("the most that may"), "{full}");
    // Deciding one of the clients' makes room for a client again.
    let (_, list) = operator
        .request_raw("approvals", json!({}))
        .expect("approvals");
    let listed = list["result"].as_array().expect("list");
    assert_eq!(listed.len(), MAX_PENDING);
    let theirs = listed
        .iter()
        .find(|p| p["signal"]["meta"]["client_key"] == true)
        .expect("a client's approval is listed as one");
    let token = theirs["token"].as_str().expect("token");
    let reply = decide(&mut operator, "deny", token);
    assert_eq!(reply["type"], "reply", "{reply}");
    ask_approval(&mut tools[1]).expect("room again");
}

#[test]
fn large_actions_asked_with_the_client_key_cannot_make_the_approvals_list_unreadable() {
    use passepartout::approvals::CLIENT_BYTES;
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let d = start(home.path(), &[], Some(&plugins));
    let mut tool = d.client_only();
    // Small enough for every standard gate's fuel, ~2 × 200 KiB kept each.
    let pad = 200 << 10;
    let mut asked = 0;
    let refusal = loop {
        match ask_approval_padded(&mut tool, pad) {
            Ok(_) => asked += 1,
            Err(message) => break message,
        }
        assert!(asked <= 64, "never refused");
    };
    assert!(
        asked > 0 && 2 * asked * pad <= CLIENT_BYTES,
        "{asked} asked"
    );
    assert!(refusal.contains("kept for the operator"), "{refusal}");
    // The operator still reads the list in one reply, and still asks.
    let mut operator = d.client();
    let (_, list) = operator
        .request_raw("approvals", json!({}))
        .expect("approvals");
    assert_eq!(list["type"], "reply", "{}", list["error"]);
    assert_eq!(list["result"].as_array().map(Vec::len), Some(asked));
    ask_approval_padded(&mut operator, pad).expect("the operator's is asked");
}

#[test]
fn what_waits_is_listed_in_one_reply_of_a_daemon_with_a_small_frame() {
    let home = tempfile::tempdir().expect("temp dir");
    super::providers::config(home.path(), "[daemon]\nmax_frame = 65536\n");
    let plugins = hostile_gate_dir(home.path());
    let d = start(home.path(), &[], Some(&plugins));
    let mut operator = d.client();
    // ~2 × 4 KiB kept each: 256 of them would be 2 MiB, far past one reply.
    let pad = 4 << 10;
    let mut asked = 0;
    let refusal = loop {
        match ask_approval_padded(&mut operator, pad) {
            Ok(_) => asked += 1,
            Err(message) => break message,
        }
        assert!(asked <= 64, "never refused");
    };
    assert!(asked > 0, "none asked");
    assert!(refusal.contains("as listed"), "{refusal}");
    let (_, list) = operator
        .request_raw("approvals", json!({}))
        .expect("approvals");
    assert_eq!(list["type"], "reply", "{}", list["error"]);
    assert_eq!(list["result"].as_array().map(Vec::len), Some(asked));
}

#[test]
fn only_the_approver_key_decides_approvals() {
    let home = tempfile::tempdir().expect("temp dir");
    let plugins = hostile_gate_dir(home.path());
    let d = start(home.path(), &[], Some(&plugins));
    let mut tool = d.client_only();
    assert_eq!(tool.hello["role"], "client");
    assert!(!tool.is_approver());
    let token = needs_approval(&mut tool);
    for (op, fields) in [
        ("approvals", json!({})),
        (
            "approve",
            json!({ "token": token, "digest": "0".repeat(64) }),
        ),
        ("deny", json!({ "token": token, "digest": "0".repeat(64) })),
    ] {
        let (_, reply) = tool.request_raw(op, fields).expect("request");
        assert_eq!(reply["type"], "error", "{op}: {reply}");
        assert!(
            reply["error"]["message"].as_str().is_some_and(
                |m| m.contains("needs the approver key")
                    // Where this machine keeps the key is not the client's to know.
                    && !m.contains(&home.path().display().to_string())
                    && !m.contains("approver.key")
            ),
            "{reply}"
        );
    }
    // A wrong approver key is refused outright, not downgraded.
    let forged = Keys {
        client: d.keys().client,
        approver: Some(Secret::new(b"not the approver key at all, no")),
    };
    let e = Client::connect(&d.addr, Some(&forged))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("approver proof is wrong"), "{e}");
    // The operator decides; a digest that is not the action's is refused.
    let mut operator = d.client();
    assert!(operator.is_approver());
    let (_, wrong) = operator
        .request_raw(
            "approve",
            json!({ "token": token, "digest": "0".repeat(64) }),
        )
        .expect("request");
    assert!(
        wrong["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("is not the one shown")),
        "{wrong}"
    );
    assert_eq!(result(&decide(&mut operator, "approve", &token)), "3");
}

#[test]
fn replayed_reordered_and_foreign_frames_are_refused() {
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(
        home.path(),
        &[("PASSEPARTOUT_READ_TIMEOUT_SECS", "60")],
        None,
    );
    let keys = d.keys();
    let act = json!({ "type": "request", "id": 1, "op": "act", "action": { "tool": "eval", "args": { "expression": "(+ 20 22)" } } });

    // The same signed request twice on one connection: it runs once.
    let mut a = Raw::connect(&d.addr, &keys);
    let recorded = a.send(&act);
    assert_eq!(result(&wait_reply(&mut a)), "42");
    a.stream.write_all(&recorded).expect("replay");
    let got = a.rest();
    assert!(got.iter().all(|m| m["type"] != "reply"), "{got:?}");
    assert!(protocol_error(&got).contains("replayed"), "{got:?}");

    // Two frames sent out of order.
    let mut b = Raw::connect(&d.addr, &keys);
    let first = b.seal(&json!({ "type": "request", "id": 1, "op": "ping" }));
    let second = b.seal(&json!({ "type": "request", "id": 2, "op": "ping" }));
    b.stream.write_all(&second).expect("write");
    b.stream.write_all(&first).expect("write");
    let got = b.rest();
    assert!(got.iter().all(|m| m["type"] != "reply"), "{got:?}");

    // A frame from one connection on another.
    let mut c = Raw::connect(&d.addr, &keys);
    c.stream.write_all(&recorded).expect("foreign");
    assert!(protocol_error(&c.rest()).contains("signature is wrong"));

    // A whole recorded session replayed on a new connection: the daemon's nonce differs, so
    // the recorded auth proves nothing.
    let mut s = TcpStream::connect(&d.addr).expect("connect");
    let ours = Nonce::random().expect("nonce");
    s.write_all(&hello(&ours)).expect("hello");
    let challenge = read_one(&mut s, &mut Vec::new(), None);
    let old_theirs = Nonce::random().expect("nonce");
    let key = keys.client.session(&ours, &old_theirs);
    let mut old = key.sealer(Direction::ToServer);
    let auth = protocol::encode(br#"{"type":"auth"}"#, Some(&mut old)).expect("auth");
    assert_ne!(challenge["nonce"], json!(old_theirs.hex()));
    s.write_all(&auth).expect("write");
    let got = answers(&mut s, Vec::new(), None);
    assert!(
        protocol_error(&got).contains("authentication failed"),
        "{got:?}"
    );

    // Only the first act ran.
    let journal = passepartout::journal::Journal::open(
        &home.path().join("data/passepartout/passepartout.db"),
    )
    .expect("journal");
    let ran = journal
        .records(None)
        .expect("records")
        .iter()
        .filter(|r| r.kind == "tool-result" && r.body["result"] == "42")
        .count();
    assert_eq!(ran, 1);
}

/// The reply to the last request, skipping events.
pub(super) fn wait_reply(r: &mut Raw) -> Value {
    loop {
        let m = r.read();
        if m["type"] == "reply" || m["type"] == "error" {
            return m;
        }
    }
}

/// `passepartout daemon --insecure-no-auth` started in `home`, its stderr to `stderr`.
fn insecure(home: &Path, stderr: Stdio) -> std::process::Child {
    std::fs::create_dir_all(home.join("run")).expect("mkdir");
    command(home, &["daemon", "--port", "0", "--insecure-no-auth"], &[])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn")
}

#[test]
fn insecure_no_auth_says_so_and_lets_anyone_in() {
    let home = tempfile::tempdir().expect("temp dir");
    let mut child = insecure(home.path(), Stdio::piped());
    let mut err = child.stderr.take().expect("stderr");
    let d = Daemon {
        child,
        home: home.path().to_owned(),
        addr: String::new(),
    };
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&line).contains("listening on") {
        assert_eq!(
            err.read(&mut byte).expect("stderr"),
            1,
            "{}",
            String::from_utf8_lossy(&line)
        );
        line.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&line);
    assert!(text.contains("WARNING: --insecure-no-auth"), "{text}");
    let rendezvous: Value = serde_json::from_slice(
        &std::fs::read(home.path().join("run/passepartout/daemon.json")).expect("rendezvous"),
    )
    .expect("json");
    assert_eq!(rendezvous["auth"], "none");
    let addr = format!("127.0.0.1:{}", rendezvous["port"]);
    let mut anyone = Client::connect(&addr, None).expect("connect");
    assert!(anyone.is_approver());
    assert_eq!(result(&eval(&mut anyone, 1, 2)), "3");
    assert!(
        !home.path().join("data/passepartout/keys").exists(),
        "no keys are made when they are not used"
    );
    drop(d);
}

/// The operator's switch that forbids running without authentication, under its name and under
/// the seed's (which still works, with a deprecation note): the daemon refuses to start.
#[test]
fn enforcing_authentication_refuses_insecure_no_auth_under_either_name() {
    for (var, deprecated) in [
        ("PASSEPARTOUT_ENFORCE_AUTH", false),
        ("OACP_ENFORCE_HMAC", true),
    ] {
        let home = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(home.path().join("run")).expect("mkdir");
        let out = command(
            home.path(),
            &["daemon", "--port", "0", "--insecure-no-auth"],
            &[(var, "yes")],
        )
        .output()
        .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{var}: {stderr}");
        assert!(stderr.contains("choose one"), "{var}: {stderr}");
        assert_eq!(
            stderr
                .contains("OACP_ENFORCE_HMAC is deprecated: set PASSEPARTOUT_ENFORCE_AUTH instead"),
            deprecated,
            "{var}: {stderr}"
        );
        assert!(
            !home.path().join("run/passepartout/daemon.json").exists(),
            "{var}: it never listened"
        );
    }
}

#[test]
fn a_rendezvous_that_says_no_authentication_does_not_make_the_cli_drop_its_keys() {
    // Anything that can write the rendezvous could point the CLI at a daemon of its own that
    // asks for no keys (and feed it fake approvals and results): the keys this user has are
    // used all the same, so such a daemon is refused as a downgrade.
    let home = tempfile::tempdir().expect("temp dir");
    let d = start(home.path(), &[], None);
    let rendezvous = home.path().join("run/passepartout/daemon.json");
    let mut forged: Value =
        serde_json::from_slice(&std::fs::read(&rendezvous).expect("rendezvous")).expect("json");
    forged["auth"] = json!("none");
    std::fs::write(&rendezvous, forged.to_string()).expect("write");
    // At the real daemon: the keys are still proven, and it answers.
    let out = command(home.path(), &["status", "--json"], &[])
        .output()
        .expect("run");
    let status: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(status["daemon"]["health"], "healthy", "{status}");
    // At a daemon of someone else's that asks for no keys: refused, saying why.
    let insecure_home = tempfile::tempdir().expect("temp dir");
    // Killed and reaped when dropped.
    let fake = Daemon {
        child: insecure(insecure_home.path(), Stdio::null()),
        home: insecure_home.path().to_owned(),
        addr: String::new(),
    };
    let fake_rendezvous = insecure_home.path().join("run/passepartout/daemon.json");
    let deadline = Instant::now() + Duration::from_secs(30);
    let fake_at = loop {
        if let Some(v) = std::fs::read(&fake_rendezvous)
            .ok()
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
        {
            break v;
        }
        assert!(Instant::now() < deadline, "the fake daemon did not start");
        std::thread::sleep(Duration::from_millis(50));
    };
    forged["port"] = fake_at["port"].clone();
    std::fs::write(&rendezvous, forged.to_string()).expect("write");
    let out = command(
        home.path(),
        &[
            "send",
            "--action",
            r#"{"tool":"eval","args":{"expression":"(+ 1 1)"}}"#,
        ],
        &[],
    )
    .output()
    .expect("run");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("does not authenticate") && said.contains("refusing to talk to it"),
        "{said}"
    );
    assert!(!out.status.success(), "{said}");
    // `status` says so too, rather than that no daemon runs.
    let out = command(home.path(), &["status", "--json"], &[])
        .output()
        .expect("run");
    let status: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert!(
        status["daemon_error"]
            .as_str()
            .is_some_and(|e| e.contains("does not authenticate")),
        "{status}"
    );
    let out = command(home.path(), &["doctor", "--json"], &[])
        .output()
        .expect("run");
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert!(doctor.contains("does not authenticate"), "{doctor}");
    drop(fake);
    drop(d);
}

#[test]
fn an_approver_secret_equal_to_the_client_secret_is_refused() {
    let home = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(home.path().join("run")).expect("mkdir");
    let secret = "0123456789abcdef0123456789abcdef";
    let out = command(
        home.path(),
        &["daemon", "--port", "0"],
        &[
            ("PASSEPARTOUT_HMAC_SECRET", secret),
            ("PASSEPARTOUT_APPROVER_SECRET", secret),
        ],
    )
    .output()
    .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the approver key is the client key"),
        "{stderr}"
    );
}

#[test]
fn a_secret_from_the_environment_shorter_than_a_key_is_refused() {
    for var in [
        "PASSEPARTOUT_HMAC_SECRET",
        "OACP_HMAC_SECRET",
        "PASSEPARTOUT_APPROVER_SECRET",
    ] {
        let home = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(home.path().join("run")).expect("mkdir");
        let out = command(home.path(), &["daemon", "--port", "0"], &[(var, "hunter2")])
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{var}: {stderr}");
        assert!(
            stderr.contains("shorter than 32 characters"),
            "{var}: {stderr}"
        );
    }
}
