//! One HTTP exchange over wasi:http `outgoing-handler`. Every hop of a redirect is a new call,
//! so the host checks each destination (granted host, no private, loopback or metadata
//! address) before connecting.

use passepartout_sdk::ToolError;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    self as http, ErrorCode, Fields, HeaderError, OutgoingBody, OutgoingRequest, RequestOptions,
};
use wasip2::io::streams::StreamError;

use crate::request::{Fetched, Method, is_redirect};
use crate::url::{Scheme, Url};

/// Nanoseconds to wait for a connection.
const CONNECT_TIMEOUT_NS: u64 = 10_000_000_000;
/// Nanoseconds to wait for the first response byte, and between later ones.
const READ_TIMEOUT_NS: u64 = 25_000_000_000;
/// Bytes asked of the body stream per read.
const READ_CHUNK: u64 = 64 * 1024;
/// Bytes written to the request body per call (`blocking-write-and-flush` takes at most 4096).
const WRITE_CHUNK: usize = 4096;

/// One hop's answer: what [`Fetched`] holds, plus the `Location` of a redirect (whose body is
/// not read).
pub struct Answer {
    /// Status, content type and (unless a redirect or `HEAD`) the body.
    pub fetched: Fetched,
    /// The `Location` header of a redirect.
    pub location: Option<String>,
}

/// Send one request and read its answer, at most `max_bytes` of body.
///
/// # Errors
/// [`ToolError::InvalidArgs`] for a header the host will not send; otherwise what
/// [`map_error`] makes of the transport's error.
pub fn send(
    url: &Url,
    method: Method,
    headers: &[(String, String)],
    body: Option<&str>,
    max_bytes: u64,
) -> Result<Answer, ToolError> {
    let mut list: Vec<(String, Vec<u8>)> = headers
        .iter()
        .map(|(n, v)| (n.clone(), v.as_bytes().to_vec()))
        .collect();
    if let Some(b) = body {
        list.push(("content-length".into(), b.len().to_string().into_bytes()));
    }
    let fields = Fields::from_list(&list).map_err(|e| header_error(&e))?;
    let request = OutgoingRequest::new(fields);
    let failed =
        |what: &str| ToolError::Failed(format!("{url}: could not set the request's {what}"));
    request
        .set_method(&match method {
            Method::Get => http::Method::Get,
            Method::Head => http::Method::Head,
            Method::Post => http::Method::Post,
        })
        .map_err(|()| failed("method"))?;
    request
        .set_scheme(Some(&match url.scheme {
            Scheme::Http => http::Scheme::Http,
            Scheme::Https => http::Scheme::Https,
        }))
        .map_err(|()| failed("scheme"))?;
    request
        .set_authority(Some(&url.authority))
        .map_err(|()| failed("host"))?;
    request
        .set_path_with_query(Some(&url.path_and_query))
        .map_err(|()| failed("path"))?;
    let outgoing_body = request.body().map_err(|()| failed("body"))?;

    let options = RequestOptions::new();
    // A host that does not support a timeout keeps its own; the call's deadline still holds.
    let _ = options.set_connect_timeout(Some(CONNECT_TIMEOUT_NS));
    let _ = options.set_first_byte_timeout(Some(READ_TIMEOUT_NS));
    let _ = options.set_between_bytes_timeout(Some(READ_TIMEOUT_NS));

    let future =
        outgoing_handler::handle(request, Some(options)).map_err(|e| map_error(url, &e))?;
    write_body(url, outgoing_body, body.unwrap_or_default().as_bytes())?;
    future.subscribe().block();
    let response = match future.get() {
        Some(Ok(Ok(r))) => r,
        Some(Ok(Err(e))) => return Err(map_error(url, &e)),
        Some(Err(())) | None => {
            return Err(ToolError::Failed(format!(
                "{url}: the response could not be read"
            )));
        }
    };
    let status = response.status();
    let (content_type, location) = {
        let h = response.headers();
        let first = |name: &str| {
            h.get(name)
                .first()
                .map(|v| String::from_utf8_lossy(v).into_owned())
        };
        (first("content-type"), first("location"))
    };
    let location = location.filter(|_| is_redirect(status));
    let mut fetched = Fetched {
        status,
        content_type,
        ..Fetched::default()
    };
    if location.is_none() && method != Method::Head {
        let incoming = response.consume().map_err(|()| {
            ToolError::Failed(format!("{url}: the response body could not be read"))
        })?;
        let stream = incoming.stream().map_err(|()| {
            ToolError::Failed(format!("{url}: the response body could not be read"))
        })?;
        loop {
            let room = (max_bytes + 1).saturating_sub(fetched.body.len() as u64);
            match stream.blocking_read(room.min(READ_CHUNK)) {
                Ok(chunk) => fetched.body.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => {
                    return Err(match http::http_error_code(&e) {
                        Some(code) => map_error(url, &code),
                        None => ToolError::Failed(format!(
                            "{url}: reading the body failed: {}",
                            e.to_debug_string()
                        )),
                    });
                }
            }
            if fetched.body.len() as u64 > max_bytes {
                fetched
                    .body
                    .truncate(usize::try_from(max_bytes).unwrap_or(usize::MAX));
                fetched.cut = true;
                break;
            }
        }
    }
    Ok(Answer { fetched, location })
}

/// Write `bytes` as the request body and finish it.
fn write_body(url: &Url, body: OutgoingBody, bytes: &[u8]) -> Result<(), ToolError> {
    let failed =
        |e: String| ToolError::Failed(format!("{url}: sending the request body failed: {e}"));
    {
        let stream = body.write().map_err(|()| failed("no body stream".into()))?;
        for chunk in bytes.chunks(WRITE_CHUNK) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|e| failed(format!("{e:?}")))?;
        }
    }
    OutgoingBody::finish(body, None).map_err(|e| map_error(url, &e))
}

/// A header the host would not accept.
fn header_error(e: &HeaderError) -> ToolError {
    ToolError::InvalidArgs(match e {
        HeaderError::Forbidden => {
            "a header is one the host sets itself (such as host, connection or transfer-encoding); \
             remove it"
                .into()
        }
        HeaderError::InvalidSyntax | HeaderError::Immutable => {
            "a header name or value is not valid HTTP; use ASCII names without spaces".into()
        }
    })
}

/// The port `url` goes to: the one it names, else its scheme's.
fn port(url: &Url) -> String {
    url.authority
        .get(url.host().len()..)
        .and_then(|rest| rest.strip_prefix(':'))
        .map_or_else(
            || {
                match url.scheme {
                    crate::url::Scheme::Https => "443",
                    crate::url::Scheme::Http => "80",
                }
                .to_owned()
            },
            str::to_owned,
        )
}

/// What a wasi:http error means to the model, naming the URL. The host's refusals (a host the
/// policy does not grant, a private, loopback or metadata address) are
/// [`ToolError::Denied`]; the rest [`ToolError::Failed`].
pub fn map_error(url: &Url, e: &ErrorCode) -> ToolError {
    let host = url.host();
    let failed = |m: String| ToolError::Failed(format!("{url}: {m}"));
    match e {
        ErrorCode::HttpRequestDenied => ToolError::Denied(format!(
            "{url}: refused by the host: {host} port {} is not granted to http-fetch by the \
             operator's policy (an address is granted with its port, e.g. \"127.0.0.1:8080\"), \
             or it is a private, loopback or metadata address",
            port(url)
        )),
        ErrorCode::DestinationIpProhibited => ToolError::Denied(format!(
            "{url}: refused by the host: {host} is a private, loopback or metadata address"
        )),
        ErrorCode::DnsTimeout => failed(format!("looking up {host} timed out")),
        ErrorCode::DnsError(p) => failed(format!(
            "{host} could not be resolved{}",
            p.rcode
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        )),
        ErrorCode::DestinationNotFound => failed(format!("{host} was not found")),
        ErrorCode::DestinationUnavailable | ErrorCode::DestinationIpUnroutable => {
            failed(format!("{host} is unreachable"))
        }
        ErrorCode::ConnectionRefused => failed(format!("{host} refused the connection")),
        ErrorCode::ConnectionTerminated | ErrorCode::HttpResponseIncomplete => {
            failed("the connection closed before the response was complete".into())
        }
        ErrorCode::ConnectionTimeout => failed(format!("connecting to {host} timed out")),
        ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => failed("the server took too long to answer".into()),
        ErrorCode::TlsProtocolError
        | ErrorCode::TlsCertificateError
        | ErrorCode::TlsAlertReceived(_) => failed(format!(
            "the TLS connection to {host} failed ({})",
            code_name(e)
        )),
        other => failed(code_name(other)),
    }
}

/// `ErrorCode::HttpProtocolError` → `HttpProtocolError`.
fn code_name(e: &ErrorCode) -> String {
    let s = format!("{e:?}");
    s.strip_prefix("ErrorCode::").unwrap_or(&s).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        match Url::parse("https://internal.example:8080/admin") {
            Ok(u) => u,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn host_refusals_are_denied_and_name_the_url() {
        for code in [
            ErrorCode::HttpRequestDenied,
            ErrorCode::DestinationIpProhibited,
        ] {
            match map_error(&url(), &code) {
                ToolError::Denied(m) => {
                    assert!(
                        m.starts_with("https://internal.example:8080/admin: refused"),
                        "{m}"
                    );
                    assert!(m.contains("internal.example "), "{m}");
                    if matches!(code, ErrorCode::HttpRequestDenied) {
                        assert!(m.contains("port 8080"), "names the refused port: {m}");
                    }
                }
                other => panic!("{code:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn transport_errors_fail_with_a_reason() {
        let msg = |code: ErrorCode| match map_error(&url(), &code) {
            ToolError::Failed(m) => m,
            other => panic!("{other:?}"),
        };
        assert!(
            msg(ErrorCode::ConnectionRefused).ends_with("internal.example refused the connection")
        );
        assert!(msg(ErrorCode::DnsTimeout).contains("timed out"));
        assert!(msg(ErrorCode::TlsCertificateError).contains("TlsCertificateError"));
        assert_eq!(
            msg(ErrorCode::HttpProtocolError),
            "https://internal.example:8080/admin: HttpProtocolError"
        );
    }
}
