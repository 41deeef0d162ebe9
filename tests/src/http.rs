//! A real HTTP/1.1 server on 127.0.0.1 for provider tests: it answers each request with the
//! next canned response (status, headers, body, optional delay) and records what it received.
//! A provider probe (`GET …/models`, which the daemon sends at boot while it may already be
//! serving) is answered with an empty model list and takes nothing from the queue, so the
//! canned answers go to the calls they were meant for whatever the order.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Lets a streamed answer's writes out one at a time, when the test says: the server waits
/// for a permit before each write (at most a minute, then it gives up and closes).
#[derive(Clone, Debug, Default)]
pub struct Release(Arc<(Mutex<usize>, Condvar)>);

impl Release {
    /// Let `n` more writes out.
    pub fn allow(&self, n: usize) {
        let (count, cv) = &*self.0;
        *count.lock().expect("lock") += n;
        cv.notify_all();
    }

    /// Wait for a permit; false when none came within a minute.
    fn take(&self) -> bool {
        let (count, cv) = &*self.0;
        let guard = count.lock().expect("lock");
        let (mut guard, timeout) = cv
            .wait_timeout_while(guard, Duration::from_secs(60), |n| *n == 0)
            .expect("lock");
        if timeout.timed_out() {
            return false;
        }
        *guard -= 1;
        true
    }
}

/// A streamed answer: `text/event-stream`, each write sent when its [`Release`] (if any)
/// allows, then the connection closed.
#[derive(Clone, Debug)]
pub struct Streamed {
    /// The writes, each any number of events (or parts of one).
    pub writes: Vec<String>,
    /// Who lets them out; `None`: all at once.
    pub release: Option<Release>,
}

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
    /// Stream these instead of the body.
    pub streamed: Option<Streamed>,
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
            streamed: None,
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
    /// Server-sent events, written as `writes`, each when `release` allows.
    pub fn events(writes: Vec<String>, release: Option<&Release>) -> Canned {
        Canned {
            streamed: Some(Streamed {
                writes,
                release: release.cloned(),
            }),
            ..Canned::json("")
        }
    }
    /// A status with a body.
    pub fn status(status: u16, body: &str) -> Canned {
        Canned {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
            missing: 0,
            streamed: None,
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
    let mut stream = stream;
    if let Some(streamed) = &canned.streamed {
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
        if stream.write_all(head.as_bytes()).is_err() {
            return;
        }
        for w in &streamed.writes {
            if streamed.release.as_ref().is_some_and(|r| !r.take()) {
                return;
            }
            if stream
                .write_all(w.as_bytes())
                .and_then(|()| stream.flush())
                .is_err()
            {
                return;
            }
        }
        return;
    }
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

/// An OpenAI Chat Completions stream's events (`data: {…}` and a blank line each).
pub mod openai_stream {
    use serde_json::json;

    /// A chunk carrying `text`.
    pub fn text(text: &str) -> String {
        chunk(&json!({"role": "assistant", "content": text}), None)
    }

    /// A chunk carrying a piece of tool call `index`: its id and name in the first piece.
    pub fn tool(index: u64, first: Option<(&str, &str)>, arguments: &str) -> String {
        let mut call = json!({"index": index, "function": {"arguments": arguments}});
        if let Some((id, name)) = first {
            call["id"] = json!(id);
            call["type"] = json!("function");
            call["function"]["name"] = json!(name);
        }
        chunk(&json!({"tool_calls": [call]}), None)
    }

    /// The end: the finish reason, the usage chunk (`stream_options.include_usage`), `[DONE]`.
    pub fn end(reason: &str, prompt: u64, completion: u64) -> String {
        let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model", "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}});
        format!(
            "{}data: {usage}\n\ndata: [DONE]\n\n",
            chunk(&json!({}), Some(reason))
        )
    }

    /// The end without a usage chunk (a server that ignores `include_usage`).
    pub fn finish(reason: &str) -> String {
        format!("{}data: [DONE]\n\n", chunk(&json!({}), Some(reason)))
    }

    fn chunk(delta: &serde_json::Value, finish: Option<&str>) -> String {
        let v = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {v}\n\n")
    }
}
