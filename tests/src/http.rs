//! A real HTTP/1.1 server on 127.0.0.1 for provider tests: it answers each request with the
//! next canned response (status, headers, body, optional delay) and records what it received.
//! A provider probe (`GET …/models`, which the daemon sends at boot while it may already be
//! serving) is answered with an empty model list and takes nothing from the queue, so the
//! canned answers go to the calls they were meant for whatever the order.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A response to send.
#[derive(Clone, Debug)]
pub struct Canned {
    /// HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: String,
    /// Wait this long before answering.
    pub delay: Duration,
    /// Announce this many bytes more than the body has, then close: a cut-off answer.
    pub missing: usize,
}

impl Canned {
    /// A 200 with a JSON body.
    pub fn json(body: impl Into<String>) -> Canned {
        Canned {
            status: 200,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
            missing: 0,
        }
    }
    /// An OpenAI Chat Completions answer calling tool `name` with `args`.
    pub fn tool_call(id: &str, name: &str, args: &serde_json::Value) -> Canned {
        Canned::json(
            serde_json::json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}}], "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
                .to_string(),
        )
    }
    /// An OpenAI Chat Completions answer with text `t`.
    pub fn text(t: &str) -> Canned {
        Canned::json(serde_json::json!({"choices": [{"message": {"role": "assistant", "content": t}}], "usage": {"prompt_tokens": 10, "completion_tokens": 5}}).to_string())
    }
    /// A status with a body.
    pub fn status(status: u16, body: &str) -> Canned {
        Canned {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
            missing: 0,
        }
    }
}

/// A request the server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// `POST`, `GET`.
    pub method: String,
    /// The path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (`Null` when empty or not JSON).
    pub body: serde_json::Value,
}

impl Recorded {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The server. Dropping it stops it.
pub struct Server {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    responses: Arc<Mutex<VecDeque<Canned>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
}

impl Server {
    /// Start a server that will answer with `responses`, in order (then 500s); probes
    /// (`GET …/models`) are answered apart.
    ///
    /// # Panics
    /// When it cannot bind 127.0.0.1.
    pub fn start(responses: Vec<Canned>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("addr");
        let responses = Arc::new(Mutex::new(VecDeque::from(responses)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (r, q, s) = (responses.clone(), requests.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (r, q) = (r.clone(), q.clone());
                std::thread::spawn(move || serve(stream, &r, &q));
            }
        });
        Server {
            url: format!("http://{addr}"),
            responses,
            requests,
            stop,
            addr,
        }
    }

    /// Everything received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }

    /// Queue more responses.
    pub fn push(&self, canned: Canned) {
        self.responses.lock().expect("lock").push_back(canned);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(stream: TcpStream, responses: &Mutex<VecDeque<Canned>>, requests: &Mutex<Vec<Recorded>>) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_lowercase(), v.trim().to_owned()));
        }
    }
    let len = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let probe = method == "GET" && path.ends_with("/models");
    requests.lock().expect("lock").push(Recorded {
        method,
        path,
        headers,
        body,
    });
    let canned = if probe {
        Canned::json("{\"object\": \"list\", \"data\": []}")
    } else {
        responses
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or_else(|| Canned::status(500, "{\"error\":\"no canned response left\"}"))
    };
    std::thread::sleep(canned.delay);
    let mut out = format!(
        "HTTP/1.1 {} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        canned.status,
        canned.body.len() + canned.missing
    );
    for (k, v) in &canned.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&canned.body);
    let mut stream = stream;
    let _ = stream.write_all(out.as_bytes());
}

/// The text of a fixture under tests/fixtures/.
///
/// # Panics
/// When the fixture is missing.
pub fn fixture(path: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}
