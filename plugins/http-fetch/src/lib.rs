//! `http-fetch`: fetch a URL over wasi:http. Only `http` and `https`; `GET`, `HEAD` or `POST`.
//! Redirects (301, 302, 303, 307, 308) are followed here, at most 5, each as a new outgoing
//! request, so the host checks every hop's destination against the operator's grants and
//! refuses private, loopback and metadata addresses. Of the request's headers only `accept`,
//! `accept-language`, `user-agent` and `content-type` follow a redirect to another origin
//! (no credentials, nothing the model made up), and a body is never carried to one (a 307/308 there fails the call: gates
//! judged the first destination only). The body is read up to `max_bytes` and the output says when it was cut.

pub mod request;
pub mod url;
mod wire;

use passepartout_sdk::{Tool, ToolError, ToolInfo, parse_args};

use request::{FetchArgs, MAX_REDIRECTS, Request, format_output, next_headers, next_method};

/// The tool plugin.
pub struct HttpFetch;

const PARAMETERS: &str = r#"{"type":"object","properties":{"url":{"type":"string","x-effect":"url","description":"absolute http or https URL"},"method":{"type":"string","enum":["GET","HEAD","POST"]},"headers":{"type":"object","additionalProperties":{"type":"string"}},"body":{"type":"string","description":"request body, POST only"},"max_bytes":{"type":"integer","minimum":1,"maximum":8388608,"description":"read at most this many body bytes (default 1048576)"}},"required":["url"]}"#;

impl Tool for HttpFetch {
    fn describe() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "http-fetch".into(),
            description: "Fetch an http(s) URL from a host the operator allows (GET, HEAD or \
                POST; redirects followed). Returns `HTTP <status>`, the content-type, the final \
                URL when redirected, a blank line, then the body as text (cut at max_bytes)."
                .into(),
            parameters: PARAMETERS.into(),
            read_only: false,
        }]
    }

    fn call(name: String, args: String) -> Result<String, ToolError> {
        if name != "http-fetch" {
            return Err(ToolError::InvalidArgs(format!(
                "the http-fetch plugin has no tool named {name:?}; it has http-fetch"
            )));
        }
        fetch(Request::from_args(parse_args::<FetchArgs>(&args)?)?)
    }
}

/// Send `req`, following redirects hop by hop.
fn fetch(req: Request) -> Result<String, ToolError> {
    let Request {
        mut url,
        mut method,
        mut headers,
        mut body,
        max_bytes,
    } = req;
    let first = url.clone();
    let mut redirects = 0;
    loop {
        let answer = wire::send(&url, method, &headers, body.as_deref(), max_bytes)?;
        let Some(location) = answer.location else {
            return Ok(format_output(&answer.fetched, &url, redirects, max_bytes));
        };
        if redirects == MAX_REDIRECTS {
            return Err(ToolError::Failed(format!(
                "{first}: more than {MAX_REDIRECTS} redirects (the last one, from {url}, to {location})"
            )));
        }
        let next = url.join(&location).map_err(|e| {
            ToolError::Failed(format!(
                "{url} redirected to {location:?}, which cannot be fetched: {e}"
            ))
        })?;
        let (next_method, keep_body) = next_method(answer.fetched.status, method);
        // A body goes where the gates saw it go: a 307/308 that would carry it to another
        // origin (past an allow-list of hosts nobody is asked about) is not followed.
        if keep_body && body.is_some() && !url.same_origin(&next) {
            return Err(ToolError::Failed(format!(
                "{url} answered {} to send the request's body on to {next}, another origin: \
                 not followed; if the body should go there, send it there in a new call (the \
                 gates judge that destination)",
                answer.fetched.status
            )));
        }
        headers = next_headers(&headers, url.same_origin(&next), keep_body);
        if !keep_body {
            body = None;
        }
        method = next_method;
        url = next;
        redirects += 1;
    }
}

passepartout_sdk::export_tool!(HttpFetch);
