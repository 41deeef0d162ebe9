//! One HTTP POST of JSON to a provider, with the failure modes the cascade falls through on.
//! Keys travel in headers only and never appear in an error.

use std::time::Duration;

use serde_json::Value;

/// Why a call to one provider failed.
#[derive(Debug, Clone, PartialEq)]
pub enum CallError {
    /// Could not connect (refused, DNS, TLS).
    Connect(String),
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
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Connect(e) => write!(f, "cannot connect: {e}"),
            CallError::Timeout(d) => write!(f, "no answer within {} s", d.as_secs_f32()),
            CallError::RateLimited {
                retry_after: Some(d),
            } => write!(f, "rate limited (HTTP 429), retry after {} s", d.as_secs()),
            CallError::RateLimited { retry_after: None } => write!(f, "rate limited (HTTP 429)"),
            CallError::Status(code, body) => write!(f, "HTTP {code}: {body}"),
            CallError::Malformed(e) => write!(f, "the answer is not the protocol: {e}"),
        }
    }
}

/// POST `body` to `url` with `headers`, within `timeout`; the JSON answer.
///
/// # Errors
/// A [`CallError`] for each way it can fail.
pub fn post_json(
    client: &reqwest::blocking::Client,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    timeout: Duration,
) -> Result<Value, CallError> {
    let mut req = client.post(url).timeout(timeout).json(body);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    let resp = req.send().map_err(|e| describe(e, timeout))?;
    let status = resp.status();
    if status.as_u16() == 429 {
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        return Err(CallError::RateLimited { retry_after });
    }
    let text = resp.text().map_err(|e| describe(e, timeout))?;
    if !status.is_success() {
        let snippet: String = text.chars().take(300).collect();
        return Err(CallError::Status(
            status.as_u16(),
            redact(&snippet, headers),
        ));
    }
    serde_json::from_str(&text).map_err(|e| CallError::Malformed(format!("not JSON ({e})")))
}

/// GET `url` (for `doctor`): the status code.
///
/// # Errors
/// As [`post_json`], for transport failures.
pub fn get_status(
    client: &reqwest::blocking::Client,
    url: &str,
    headers: &[(&str, String)],
    timeout: Duration,
) -> Result<u16, CallError> {
    let mut req = client.get(url).timeout(timeout);
    for (k, v) in headers {
        req = req.header(*k, v);
    }
    req.send()
        .map(|r| r.status().as_u16())
        .map_err(|e| describe(e, timeout))
}

/// reqwest's error without the URL (it could carry credentials) and without any header.
fn describe(e: reqwest::Error, timeout: Duration) -> CallError {
    if e.is_timeout() {
        return CallError::Timeout(timeout);
    }
    let e = e.without_url();
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        msg = format!("{msg}: {s}");
        source = s.source();
    }
    CallError::Connect(msg)
}

/// `text` with every header value we sent (and the key inside `Bearer KEY`) replaced by `***`:
/// some servers echo the key back in their error bodies.
fn redact(text: &str, headers: &[(&str, String)]) -> String {
    let mut out = text.to_owned();
    for (_, v) in headers {
        let secret = v.strip_prefix("Bearer ").unwrap_or(v);
        if secret.len() >= 8 {
            out = out.replace(secret, "***");
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
