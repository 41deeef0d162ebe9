//! What an MCP server may make the daemon hold: a message of at most [`MAX_LINE`] bytes (the
//! stdio transport reads lines without an end of its own), and a tool listing of at most
//! [`MAX_PAGES`] pages and [`MAX_TOOLS`] tools, each within a plugin tool's limits of
//! description and schema. A server past them is cut off, or has what is past them left out,
//! saying so: it never takes the daemon's memory, nor `status` past one reply.

use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::model::{PaginatedRequestParams, Tool};
use rmcp::service::{Peer, RoleClient, ServiceError};
use tokio::io::{AsyncRead, ReadBuf};

use crate::runtime::tools::{MAX_DESCRIPTION, MAX_SCHEMA};

/// The longest line (one JSON-RPC message) a server's stdout may write.
pub const MAX_LINE: usize = 16 << 20;
/// The most pages of tools one listing reads.
pub const MAX_PAGES: usize = 16;
/// The most tools one server offers.
pub const MAX_TOOLS: usize = 256;
/// The longest tool name a server may list, bytes.
pub const MAX_NAME: usize = 128;
/// The most of why a server stopped that is kept (logged and shown in `status`), bytes: an
/// error the server wrote can be as long as a message.
pub const MAX_WHY: usize = 1024;

/// `why`, at most [`MAX_WHY`] bytes of it (cut at a character, saying so).
pub fn shortened(why: &str) -> String {
    if why.len() <= MAX_WHY {
        return why.to_owned();
    }
    let mut cut = MAX_WHY;
    while !why.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}… ({} bytes in all)", &why[..cut], why.len())
}

/// A server's stdout that fails once a line runs past `max` bytes: the transport's reader
/// keeps a line until its end, however long.
pub struct LineCap<R> {
    inner: R,
    line: usize,
    max: usize,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl<R> LineCap<R> {
    /// `inner`, cut off at a line longer than `max` bytes.
    pub fn new(inner: R, max: usize) -> LineCap<R> {
        LineCap {
            inner,
            line: 0,
            max,
            cut: std::sync::Arc::default(),
        }
    }

    /// Set once it was cut off (the transport that reads it drops the error itself).
    pub fn cut(&self) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
        self.cut.clone()
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineCap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let mut line = self.line;
            for &b in &buf.filled()[before..] {
                line = if b == b'\n' { 0 } else { line + 1 };
                if line > self.max {
                    self.cut.store(true, std::sync::atomic::Ordering::Relaxed);
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("it wrote a message longer than {} MiB", self.max >> 20),
                    )));
                }
            }
            self.line = line;
        }
        polled
    }
}

/// Every tool `peer` lists, within the bounds: at most [`MAX_PAGES`] pages and [`MAX_TOOLS`]
/// tools; a tool whose description or schema is larger than a plugin tool's may be is left
/// out. What was left out is logged, naming `server`.
///
/// # Errors
/// The server failed a page.
pub async fn list_tools(peer: &Peer<RoleClient>, server: &str) -> Result<Vec<Tool>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor = None;
    for page in 1..=MAX_PAGES {
        let listed = peer
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await?;
        for tool in listed.tools {
            if let Some(why) = too_large(&tool) {
                tracing::warn!(
                    "MCP server {server}: tool {:?} is not offered: {why}",
                    shortened(&tool.name)
                );
            } else if tools.len() < MAX_TOOLS {
                tools.push(tool);
            }
        }
        cursor = listed.next_cursor;
        if cursor.is_none() {
            break;
        }
        if page == MAX_PAGES {
            tracing::warn!(
                "MCP server {server}: its tools run past {MAX_PAGES} pages; the rest are not offered"
            );
        }
    }
    if tools.len() == MAX_TOOLS {
        tracing::warn!("MCP server {server}: at most {MAX_TOOLS} of its tools are offered");
    }
    Ok(tools)
}

/// Why `tool` is larger than a tool may be, if it is.
fn too_large(tool: &Tool) -> Option<String> {
    if tool.name.len() > MAX_NAME {
        return Some(format!(
            "its name is {} bytes, more than {MAX_NAME}",
            tool.name.len()
        ));
    }
    let description = tool.description.as_deref().map_or(0, str::len);
    if description > MAX_DESCRIPTION {
        return Some(format!(
            "its description is {description} bytes, more than {MAX_DESCRIPTION}"
        ));
    }
    let schema = serde_json::to_vec(&*tool.input_schema).map_or(usize::MAX, |s| s.len());
    (schema > MAX_SCHEMA).then(|| format!("its schema is {schema} bytes, more than {MAX_SCHEMA}"))
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncBufReadExt as _;

    use super::*;

    async fn lines(text: &str, max: usize) -> std::io::Result<Vec<usize>> {
        let mut read = tokio::io::BufReader::new(LineCap::new(text.as_bytes(), max));
        let mut lengths = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match read.read_until(b'\n', &mut line).await? {
                0 => return Ok(lengths),
                n => lengths.push(n),
            }
        }
    }

    #[tokio::test]
    async fn lines_within_the_cap_pass_and_one_past_it_fails() {
        let within = format!("{}\n{}\n{}", "a".repeat(10), "b".repeat(16), "c".repeat(16));
        assert_eq!(lines(&within, 16).await.expect("read"), [11, 17, 16]);
        let past = format!("{}\n{}\n", "a".repeat(10), "b".repeat(17));
        let e = lines(&past, 16).await.expect_err("too long");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
        assert!(e.to_string().contains("longer than"), "{e}");
    }

    #[test]
    fn why_a_server_stopped_is_kept_short() {
        assert_eq!(shortened("it stopped"), "it stopped");
        let long = "é".repeat(MAX_WHY);
        let short = shortened(&long);
        assert!(short.len() < MAX_WHY + 64, "{}", short.len());
        assert!(
            short.ends_with(&format!("({} bytes in all)", long.len())),
            "{short}"
        );
    }
}
