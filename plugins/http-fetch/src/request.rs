//! What the model asks for, checked; the redirect rules; and the text the model gets back.
//! All pure: the wasi:http calls are in `wire`.

use std::collections::BTreeMap;

use passepartout_sdk::ToolError;
use serde::Deserialize;

use crate::url::Url;

/// Body bytes read when `max_bytes` is not given: 1 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 1024 * 1024;
/// The most body bytes one call reads: 8 MiB.
pub const MAX_BYTES_CAP: u64 = 8 * 1024 * 1024;
/// Redirects followed before giving up.
pub const MAX_REDIRECTS: u32 = 5;
/// Sent unless the model sets its own `user-agent`.
pub const USER_AGENT: &str = "passepartout-http-fetch/0.1";

/// The arguments of the `http-fetch` tool.
#[derive(Debug, Default, Deserialize)]
pub struct FetchArgs {
    /// An absolute `http` or `https` URL.
    pub url: String,
    /// `GET` (default), `HEAD` or `POST`.
    pub method: Option<String>,
    /// Request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The request body (`POST` only).
    pub body: Option<String>,
    /// Read at most this many body bytes (default 1 MiB, at most 8 MiB).
    pub max_bytes: Option<u64>,
}

/// The HTTP methods `http-fetch` sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`: the response has no body.
    Head,
    /// `POST`, with the given body.
    Post,
}

/// A checked request: the first hop.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// Where to.
    pub url: Url,
    /// How.
    pub method: Method,
    /// Header names lowercased, in name order; `user-agent` always set; `content-length`
    /// left to the transport.
    pub headers: Vec<(String, String)>,
    /// The body, for `POST`.
    pub body: Option<String>,
    /// Body bytes to read at most.
    pub max_bytes: u64,
}

impl Request {
    /// Check `args`.
    ///
    /// # Errors
    /// [`ToolError::InvalidArgs`] for a URL that is not `http`/`https`, an unknown method, a
    /// body on `GET`/`HEAD`, a header with a line break, or `max_bytes` of 0.
    pub fn from_args(args: FetchArgs) -> Result<Request, ToolError> {
        let invalid = ToolError::InvalidArgs;
        let url = Url::parse(&args.url).map_err(invalid)?;
        let method = match args
            .method
            .as_deref()
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            None | Some("GET") => Method::Get,
            Some("HEAD") => Method::Head,
            Some("POST") => Method::Post,
            Some(other) => {
                return Err(invalid(format!(
                    "method {other:?} is not supported: use GET, HEAD or POST"
                )));
            }
        };
        if args.body.is_some() && method != Method::Post {
            return Err(invalid("a body is sent only with method POST".into()));
        }
        let mut headers = Vec::with_capacity(args.headers.len() + 1);
        for (name, value) in args.headers {
            let name = name.trim().to_ascii_lowercase();
            if name.is_empty() || value.contains(['\r', '\n']) {
                return Err(invalid(format!(
                    "header {name:?}: names must not be empty and values must not contain line breaks"
                )));
            }
            if name == "content-length" {
                continue; // Computed from the body.
            }
            headers.push((name, value));
        }
        if !headers.iter().any(|(n, _)| n == "user-agent") {
            headers.push(("user-agent".into(), USER_AGENT.into()));
        }
        headers.sort();
        let max_bytes = match args.max_bytes {
            Some(0) => return Err(invalid("max_bytes must be at least 1".into())),
            Some(n) => n.min(MAX_BYTES_CAP),
            None => DEFAULT_MAX_BYTES,
        };
        Ok(Request {
            url,
            method,
            headers,
            body: args.body,
            max_bytes,
        })
    }
}

/// Whether `status` is a redirect `http-fetch` follows (when it has a `Location`).
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The method of the hop after a `status` redirect, and whether the body goes along: 307 and
/// 308 keep both; 303 turns anything but `HEAD` into `GET`; 301 and 302 turn `POST` into `GET`
/// (as browsers do).
pub fn next_method(status: u16, method: Method) -> (Method, bool) {
    match (status, method) {
        (_, Method::Head) => (Method::Head, false),
        (307 | 308, m) => (m, m == Method::Post),
        _ => (Method::Get, false),
    }
}

/// The headers another origin may be sent on a redirect: what says how to answer, never what
/// the model wrote there (an API key in `x-api-key`, data in a made-up header): gates judged
/// the first destination only.
const CROSS_ORIGIN_HEADERS: [&str; 4] = ["accept", "accept-language", "user-agent", "content-type"];

/// The headers for the next hop: all of them to the same origin, to another only
/// [`CROSS_ORIGIN_HEADERS`]; and no `content-type` once the body is dropped.
pub fn next_headers(
    headers: &[(String, String)],
    same_origin: bool,
    keep_body: bool,
) -> Vec<(String, String)> {
    headers
        .iter()
        .filter(|(n, _)| same_origin || CROSS_ORIGIN_HEADERS.contains(&n.as_str()))
        .filter(|(n, _)| keep_body || n != "content-type")
        .cloned()
        .collect()
}

/// What came back from the last hop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fetched {
    /// The status code.
    pub status: u16,
    /// The `content-type` header, if any.
    pub content_type: Option<String>,
    /// The body as read (at most `max_bytes`).
    pub body: Vec<u8>,
    /// True when the body went on past `max_bytes`.
    pub cut: bool,
}

/// The tool's output:
///
/// ```text
/// HTTP <status>
/// content-type: <type, or "(none)">
/// url: <final URL> (after N redirect(s))     <- only when redirected
///
/// <body as lossy UTF-8>
///
/// (body cut at N bytes; ...)                  <- only when cut
/// ```
pub fn format_output(f: &Fetched, final_url: &Url, redirects: u32, max_bytes: u64) -> String {
    let mut out = format!(
        "HTTP {}\ncontent-type: {}\n",
        f.status,
        f.content_type.as_deref().unwrap_or("(none)")
    );
    if redirects > 0 {
        out.push_str(&format!(
            "url: {final_url} (after {redirects} redirect{})\n",
            if redirects == 1 { "" } else { "s" }
        ));
    }
    out.push('\n');
    out.push_str(&String::from_utf8_lossy(&f.body));
    if f.cut {
        out.push_str(&format!("\n\n(body cut at {max_bytes} bytes"));
        if max_bytes < MAX_BYTES_CAP {
            out.push_str(&format!(
                "; pass a larger max_bytes, at most {MAX_BYTES_CAP}, to read more"
            ));
        }
        out.push(')');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Result<Request, ToolError> {
        let args: FetchArgs = passepartout_sdk::parse_args(json)?;
        Request::from_args(args)
    }

    fn ok(json: &str) -> Request {
        match request(json) {
            Ok(r) => r,
            Err(e) => panic!("{json}: {e:?}"),
        }
    }

    fn invalid(json: &str) -> String {
        match request(json) {
            Err(ToolError::InvalidArgs(m)) => m,
            other => panic!("{json}: expected InvalidArgs, got {other:?}"),
        }
    }

    #[test]
    fn defaults() {
        let r = ok(r#"{"url":"https://example.com/a"}"#);
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.max_bytes, DEFAULT_MAX_BYTES);
        assert_eq!(r.headers, [("user-agent".into(), USER_AGENT.into())]);
        assert_eq!(r.body, None);
    }

    #[test]
    fn post_with_headers_and_a_capped_size() {
        let r = ok(
            r#"{"url":"http://example.com/","method":"post","headers":{"Content-Type":"text/plain","User-Agent":"me","Content-Length":"9"},"body":"hi","max_bytes":999999999}"#,
        );
        assert_eq!(r.method, Method::Post);
        assert_eq!(r.max_bytes, MAX_BYTES_CAP);
        assert_eq!(
            r.headers,
            [
                ("content-type".into(), "text/plain".into()),
                ("user-agent".into(), "me".into())
            ]
        );
        assert_eq!(r.body.as_deref(), Some("hi"));
    }

    #[test]
    fn refusals() {
        assert!(invalid(r#"{"url":"ftp://example.com/"}"#).contains("only http and https"));
        assert!(
            invalid(r#"{"url":"http://x.example/","method":"PUT"}"#).contains("GET, HEAD or POST")
        );
        assert!(invalid(r#"{"url":"http://x.example/","body":"x"}"#).contains("POST"));
        assert!(invalid(r#"{"url":"http://x.example/","max_bytes":0}"#).contains("max_bytes"));
        assert!(
            invalid(r#"{"url":"http://x.example/","headers":{"x":"a\r\nb: c"}}"#)
                .contains("line breaks")
        );
        assert!(matches!(request("{}"), Err(ToolError::InvalidArgs(_))));
    }

    #[test]
    fn redirect_rules() {
        for s in [301, 302, 303, 307, 308] {
            assert!(is_redirect(s));
        }
        for s in [200, 300, 304, 305, 404] {
            assert!(!is_redirect(s));
        }
        assert_eq!(next_method(301, Method::Post), (Method::Get, false));
        assert_eq!(next_method(302, Method::Get), (Method::Get, false));
        assert_eq!(next_method(303, Method::Post), (Method::Get, false));
        assert_eq!(next_method(303, Method::Head), (Method::Head, false));
        assert_eq!(next_method(307, Method::Post), (Method::Post, true));
        assert_eq!(next_method(308, Method::Get), (Method::Get, false));
    }

    #[test]
    fn only_how_to_answer_follows_a_redirect_to_another_origin() {
        let h: Vec<(String, String)> = [
            ("authorization", "Bearer x"),
            ("content-type", "a/b"),
            ("cookie", "c"),
            ("user-agent", "u"),
            ("x-api-key", "k"),
        ]
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(next_headers(&h, true, true), h);
        let names = |v: Vec<(String, String)>| v.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        assert_eq!(
            names(next_headers(&h, false, true)),
            ["content-type", "user-agent"]
        );
        assert_eq!(
            names(next_headers(&h, true, false)),
            ["authorization", "cookie", "user-agent", "x-api-key"]
        );
    }

    #[test]
    fn output_layout() {
        let url = match Url::parse("https://example.com/x") {
            Ok(u) => u,
            Err(e) => panic!("{e}"),
        };
        let f = Fetched {
            status: 200,
            content_type: Some("text/plain".into()),
            body: b"hello \xff".to_vec(),
            cut: false,
        };
        assert_eq!(
            format_output(&f, &url, 0, 10),
            "HTTP 200\ncontent-type: text/plain\n\nhello \u{fffd}"
        );
        let cut = Fetched {
            cut: true,
            content_type: None,
            ..f
        };
        let s = format_output(&cut, &url, 2, 10);
        assert!(s.starts_with(
            "HTTP 200\ncontent-type: (none)\nurl: https://example.com/x (after 2 redirects)\n\n"
        ));
        assert!(s.ends_with(
            "(body cut at 10 bytes; pass a larger max_bytes, at most 8388608, to read more)"
        ));
    }
}
