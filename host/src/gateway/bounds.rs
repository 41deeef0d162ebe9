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

/// A server's stdout that fails once a line runs past `max` bytes: the transport's reader
/// keeps a line until its end, however long.
pub struct LineCap<R> {
    inner: R,
    line: usize,
    max: usize,
}

impl<R> LineCap<R> {
    /// `inner`, cut off at a line longer than `max` bytes.
    pub fn new(inner: R, max: usize) -> LineCap<R> {
        LineCap {
            inner,
            line: 0,
            max,
        }
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
                    tool.name
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
}
