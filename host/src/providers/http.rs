//! One HTTP POST of JSON to a provider, with the failure modes the cascade falls through on.
//! Keys travel in headers only and never appear in an error.

use std::time::{Duration, SystemTime};

use serde_json::Value;

/// Why a call to one provider failed.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// Could not connect (refused, DNS, TLS).
    Connect(String),
    /// Connected, but the answer ended early (the connection closed mid-body).
    Truncated(String),
    /// A 3xx: never followed, since a redirect could carry the key to another host.
    Redirect {
        /// The status.
        status: u16,
        /// Where it pointed, if it said.
        location: Option<String>,
    },
    /// No answer within the provider's timeout.
    Timeout(Duration),
    /// HTTP 429; `retry_after` from the Retry-After header.
    RateLimited {
        /// How long the provider asked us to wait.
        retry_after: Option<Duration>,
    },
    /// Any other non-2xx status, with the start of the body.
    Status(u16, String),
    /// A 2xx body that is not the protocol.
    Malformed(String),
    /// The provider reported an error in the middle of a streamed answer.
    Stream(String),
    /// A streamed answer failed after its first token: no other provider is asked (what was
    /// shown of it would not be theirs).
    Cut {
        /// Tokens received before it failed.
        tokens: u64,
        /// Why it failed.
        cause: Box<CallError>,
    },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Connect(e) => write!(f, "cannot connect: {e}"),
            CallError::Truncated(e) => write!(f, "the answer was cut off: {e}"),
            CallError::Redirect { status, location } => {
                write!(
                    f,
                    "HTTP {status}: redirects are not followed, on purpose (one could carry the \
                     key to another host)"
                )?;
                match location {
                    Some(l) => write!(f, "; set the provider's base_url to where it points: {l}"),
                    None => Ok(()),
                }
            }
            CallError::Timeout(d) => write!(f, "no answer within {} s", d.as_secs_f32()),
            CallError::RateLimited {
                retry_after: Some(d),
            } => write!(f, "rate limited (HTTP 429), retry after {} s", d.as_secs()),
            CallError::RateLimited { retry_after: None } => write!(f, "rate limited (HTTP 429)"),
            CallError::Status(code, body) => write!(f, "HTTP {code}: {body}"),
            CallError::Malformed(e) => write!(f, "the answer is not the protocol: {e}"),
            CallError::Stream(e) => write!(f, "the provider stopped the answer: {e}"),
            CallError::Cut { tokens, cause } => {
                write!(f, "the answer broke off after {tokens} token(s): {cause}")
            }
        }
    }
}

/// POST `body` to `url` with `headers`, within `timeout`; the JSON answer, read as `T`.
///
/// # Errors
/// A [`CallError`] for each way it can fail.
pub async fn post_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    timeout: Duration,
) -> Result<T, CallError> {
    let body = body_of(post(client, url, headers, body, timeout).await?, timeout).await?;
    super::lenient::read(&body)
}

/// POST `body` to `url` with `headers`, within `timeout` (the whole exchange, the answer's
/// body included): the response, when its status is a success.
///
/// # Errors
/// A [`CallError`] for a transport failure, a 429, a redirect, or another status.
pub async fn post(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    timeout: Duration,
) -> Result<reqwest::Response, CallError> {
    let mut req = client.post(url).timeout(timeout).json(body);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let resp = req.send().await.map_err(|e| describe(e, timeout))?;
    let status = resp.status();
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if status.as_u16() == 429 {
        let retry_after = header("retry-after").and_then(|v| retry_after(&v, SystemTime::now()));
        return Err(CallError::RateLimited { retry_after });
    }
    if status.is_redirection() {
        return Err(CallError::Redirect {
            status: status.as_u16(),
            location: header("location").map(|l| redact(&l, headers)),
        });
    }
    if !status.is_success() {
        // The start of the body is all that is told: never more than a few KiB read, and for
        // at most a few seconds (what came by then is kept). Under the call's whole timeout,
        // a provider that sends a 4xx and then trickles its body would cost that timeout on
        // every call, and a 4xx never opens the breaker.
        const ERROR_BODY_WAIT: Duration = Duration::from_secs(2);
        let mut resp = resp;
        let mut head = Vec::new();
        let read = async {
            while head.len() < 4096 {
                match resp.chunk().await {
                    Ok(Some(piece)) => head.extend_from_slice(&piece),
                    _ => break,
                }
            }
        };
        let _ = tokio::time::timeout(ERROR_BODY_WAIT, read).await;
        // Redacted whole, then cut: a key cut in two would leave its start unredacted.
        let redacted = redact(&String::from_utf8_lossy(&head), headers);
        let snippet: String = redacted.chars().take(300).collect();
        return Err(CallError::Status(status.as_u16(), snippet));
    }
    Ok(resp)
}

/// Whether `resp` is a stream of server-sent events (else a server that ignored `stream`
/// answered whole).
pub fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// A successful response's body, at most [`super::stream::MAX_ANSWER`] bytes of it.
///
/// # Errors
/// [`CallError::Timeout`] or [`CallError::Truncated`] while reading it,
/// [`CallError::Malformed`] when it is longer.
pub async fn body_of(mut resp: reqwest::Response, timeout: Duration) -> Result<Vec<u8>, CallError> {
    let mut body = Vec::new();
    while let Some(piece) = resp.chunk().await.map_err(|e| body_error(e, timeout))? {
        if body.len() + piece.len() > super::stream::MAX_ANSWER {
            return Err(CallError::Malformed(format!(
                "an answer longer than {} bytes",
                super::stream::MAX_ANSWER
            )));
        }
        body.extend_from_slice(&piece);
    }
    Ok(body)
}

/// `e` with every header value we sent replaced by `***` in what the provider said (a
/// streamed error event may echo the key, as an error body may).
pub fn redact_error(e: CallError, headers: &[(&str, String)]) -> CallError {
    match e {
        CallError::Stream(m) => CallError::Stream(redact(&m, headers)),
        CallError::Malformed(m) => CallError::Malformed(redact(&m, headers)),
        CallError::Cut { tokens, cause } => CallError::Cut {
            tokens,
            cause: Box::new(redact_error(*cause, headers)),
        },
        other => other,
    }
}

/// A failure while reading a response's body.
pub fn body_error(e: reqwest::Error, timeout: Duration) -> CallError {
    if e.is_timeout() {
        CallError::Timeout(timeout)
    } else {
        CallError::Truncated(crate::runtime::chain(&e.without_url()))
    }
}

/// GET `url` (for `doctor`): the status code.
///
/// # Errors
/// As [`post_json`], for transport failures.
pub async fn get_status(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    timeout: Duration,
) -> Result<u16, CallError> {
    let mut req = client.get(url).timeout(timeout);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    req.send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| describe(e, timeout))
}

/// The longest a provider's `Retry-After` may cool it down: a header asking for more (up to
/// `u64::MAX` seconds) is read as this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// A `Retry-After` value (seconds, or an HTTP date) as a wait from `now`, at most
/// [`MAX_RETRY_AFTER`]; `None` when it is neither.
pub fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
    let wait = if digits {
        // More digits than a u64 holds is still "a very long time".
        Duration::from_secs(
            value
                .parse::<u64>()
                .unwrap_or(u64::MAX)
                .min(MAX_RETRY_AFTER.as_secs()),
        )
    } else {
        httpdate::parse_http_date(value)
            .ok()?
            .duration_since(now)
            .unwrap_or(Duration::ZERO)
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// reqwest's error without the URL (it could carry credentials) and without any header.
fn describe(e: reqwest::Error, timeout: Duration) -> CallError {
    if e.is_timeout() {
        return CallError::Timeout(timeout);
    }
    CallError::Connect(crate::runtime::chain(&e.without_url()))
}

/// `text` with every header value we sent (and the key inside `Bearer KEY`) replaced by `***`:
/// some servers echo the key back in their error bodies.
fn redact(text: &str, headers: &[(&str, String)]) -> String {
    let mut out = text.to_owned();
    for (_, v) in headers {
        let secret = v.strip_prefix("Bearer ").unwrap_or(v);
        if secret.len() >= 8 {
            out = out.replace(secret, "***");
            // A text cut before it reached here (a streamed error's message) may end in the
            // key's start: that goes too.
            let cut = (4..secret.len())
                .rev()
                .filter(|&n| secret.is_char_boundary(n))
                .find(|&n| out.ends_with(&secret[..n]));
            if let Some(n) = cut {
                out.truncate(out.len() - n);
                out.push_str("***");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::{MAX_RETRY_AFTER, redact, retry_after};

    #[test]
    fn a_key_is_redacted_whole_and_where_a_cut_left_its_start() {
        let headers = [("authorization", "Bearer sk-0123456789abcdef".to_owned())];
        assert_eq!(
            redact("bad key sk-0123456789abcdef, sk-0123456789abcdef", &headers),
            "bad key ***, ***"
        );
        // Cut at 300 characters by whoever read it: the start of the key is gone too.
        let said: String = format!("{}sk-0123456789abcdef", "x".repeat(290))
            .chars()
            .take(300)
            .collect();
        let shown = redact(&said, &headers);
        assert!(
            shown.ends_with("x***") && !shown.contains("sk-0"),
            "{shown}"
        );
        assert_eq!(redact("sk-0 is fine", &headers), "sk-0 is fine");
    }

    #[test]
    fn retry_after_is_clamped_and_reads_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(retry_after("30", now), Some(Duration::from_secs(30)));
        assert_eq!(retry_after(" 0 ", now), Some(Duration::ZERO));
        for huge in [
            "9300000000000000000",
            "18446744073709551615",
            "99999999999999999999999",
        ] {
            assert_eq!(retry_after(huge, now), Some(MAX_RETRY_AFTER), "{huge}");
        }
        let later = httpdate::fmt_http_date(now + Duration::from_secs(120));
        assert_eq!(retry_after(&later, now), Some(Duration::from_secs(120)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(120));
        assert_eq!(retry_after(&past, now), Some(Duration::ZERO));
        let far = httpdate::fmt_http_date(now + Duration::from_secs(10 * 365 * 86_400));
        assert_eq!(retry_after(&far, now), Some(MAX_RETRY_AFTER));
        for junk in ["", "soon", "-5", "1.5", "+3"] {
            assert_eq!(retry_after(junk, now), None, "{junk}");
        }
    }

    #[test]
    fn echoed_keys_are_redacted() {
        let headers = [
            ("authorization", "Bearer sk-live-abcdef123456".to_owned()),
            ("x-api-key", "ant-key-987654321".to_owned()),
        ];
        let body = r#"{"error": "invalid key sk-live-abcdef123456 or ant-key-987654321"}"#;
        let out = super::redact(body, &headers);
        assert!(
            !out.contains("sk-live") && !out.contains("ant-key"),
            "{out}"
        );
        assert!(out.contains("invalid key *** or ***"));
    }
}
