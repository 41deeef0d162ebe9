//! What an MCP server may make the daemon hold: a message of at most [`MAX_LINE`] bytes (the
//! stdio transport reads lines without an end of its own), at most [`MAX_PENDING`] messages to
//! it waiting for it to read them ([`SendCap`]), and a tool listing of at most [`MAX_PAGES`]
//! pages and [`MAX_TOOLS`] tools, each within a plugin tool's limits of description and schema
//! (and a schema at most [`MAX_SCHEMA_DEPTH`] deep, of at most [`MAX_SCHEMA_VALUES`] values). A
//! server past them is cut off, or has what is past them left out, saying so: it never takes
//! the daemon's memory, nor `status` past one reply.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{JsonObject, PaginatedRequestParams, Tool};
use rmcp::service::{
    Peer, RoleClient, RxJsonRpcMessage, ServiceError, ServiceRole, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::runtime::tools::{MAX_DESCRIPTION, MAX_SCHEMA};

/// The longest line (one JSON-RPC message) a server's stdout may write.
pub const MAX_LINE: usize = 16 << 20;
/// The most pages of tools one listing reads.
pub const MAX_PAGES: usize = 16;
/// The most tools one server offers.
pub const MAX_TOOLS: usize = 256;
/// The longest tool name a server may list, bytes.
pub const MAX_NAME: usize = 128;
/// The deepest a tool's schema may nest objects and arrays (the schema itself is the first
/// level): a schema within [`MAX_SCHEMA`] bytes may nest a hundred levels, each kept as a tree.
pub const MAX_SCHEMA_DEPTH: usize = 32;
/// The most JSON values (objects, arrays, strings, numbers, ...) one tool's schema may hold: a
/// `0` is two bytes of a schema, but some 32 kept as a `serde_json::Value`.
pub const MAX_SCHEMA_VALUES: usize = 8192;
/// The most messages to a server that may wait for it to read them: a server that writes
/// request after request and reads none of the answers is cut off past this.
pub const MAX_PENDING: usize = 64;
/// The most of why a server stopped that is kept (logged and shown in `status`), bytes: an
/// error the server wrote can be as long as a message.
pub const MAX_WHY: usize = 1024;

/// `why`, at most [`MAX_WHY`] bytes of it (cut at a character, saying so).
pub fn shortened(why: &str) -> String {
    if why.len() <= MAX_WHY {
        return why.to_owned();
    }
    let cut = why.floor_char_boundary(MAX_WHY);
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
/// tools; a tool whose description or schema is larger than a plugin tool's may be, or whose
/// schema nests deeper than [`MAX_SCHEMA_DEPTH`] or holds more than [`MAX_SCHEMA_VALUES`]
/// values, is left out. What was left out is logged, naming `server`.
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
    if schema > MAX_SCHEMA {
        return Some(format!(
            "its schema is {schema} bytes, more than {MAX_SCHEMA}"
        ));
    }
    too_dense(&tool.input_schema)
}

/// Why `schema` nests deeper than [`MAX_SCHEMA_DEPTH`] or holds more than
/// [`MAX_SCHEMA_VALUES`] values, if it does: counted by walking it (no recursion), stopping at
/// the first bound passed.
fn too_dense(schema: &JsonObject) -> Option<String> {
    let too_many = || {
        Some(format!(
            "its schema holds more than {MAX_SCHEMA_VALUES} values (objects, arrays, strings, \
             numbers)"
        ))
    };
    // The schema itself and its members.
    let mut values = 1 + schema.len();
    if values > MAX_SCHEMA_VALUES {
        return too_many();
    }
    // Each container with its depth; the schema is depth 1.
    let mut stack: Vec<(&serde_json::Value, usize)> = schema.values().map(|v| (v, 2)).collect();
    while let Some((value, depth)) = stack.pop() {
        let members = match value {
            serde_json::Value::Array(a) => a.len(),
            serde_json::Value::Object(o) => o.len(),
            _ => continue,
        };
        if depth > MAX_SCHEMA_DEPTH {
            return Some(format!(
                "its schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
            ));
        }
        values += members;
        if values > MAX_SCHEMA_VALUES {
            return too_many();
        }
        match value {
            serde_json::Value::Array(a) => stack.extend(a.iter().map(|v| (v, depth + 1))),
            serde_json::Value::Object(o) => stack.extend(o.values().map(|v| (v, depth + 1))),
            _ => {}
        }
    }
    None
}

/// A transport to a server that is cut off when the server does not read what is sent to it:
/// past `max` messages waiting at once, or one waiting longer than `stuck`. rmcp answers each
/// request a server sends (a `ping`, say) in a task of its own, without a bound: a server that
/// writes requests and never reads its stdin would otherwise have the daemon hold one task per
/// request, for ever. Once cut off, receiving ends (the server is stopped and started again)
/// and every waiting send fails.
pub struct SendCap<T> {
    inner: T,
    pending: Arc<AtomicUsize>,
    cut: CancellationToken,
    max: usize,
    stuck: Duration,
}

impl<T> SendCap<T> {
    /// `inner`, cut off past `max` messages waiting at once or one waiting longer than `stuck`.
    pub fn new(inner: T, max: usize, stuck: Duration) -> SendCap<T> {
        SendCap {
            inner,
            pending: Arc::default(),
            cut: CancellationToken::new(),
            max,
            stuck,
        }
    }

    /// Cancelled once it was cut off (rmcp drops the transport's errors itself).
    pub fn cut(&self) -> CancellationToken {
        self.cut.clone()
    }
}

/// One message waiting to be sent: counted while it lives.
struct Waiting(Arc<AtomicUsize>);

impl Waiting {
    /// Count one more; how many wait now, with it.
    fn enter(pending: &Arc<AtomicUsize>) -> (Waiting, usize) {
        let now = pending.fetch_add(1, Ordering::AcqRel) + 1;
        (Waiting(pending.clone()), now)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl<R, T> Transport<R> for SendCap<T>
where
    R: ServiceRole,
    T: Transport<R, Error = std::io::Error>,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let (waiting, now) = Waiting::enter(&self.pending);
        let over = now > self.max;
        if over {
            self.cut.cancel();
        }
        let send = (!over).then(|| self.inner.send(item));
        let cut = self.cut.clone();
        let (max, stuck) = (self.max, self.stuck);
        async move {
            let _waiting = waiting;
            let Some(send) = send else {
                return Err(std::io::Error::other(format!(
                    "more than {max} messages to it wait: it does not read them"
                )));
            };
            tokio::select! {
                sent = tokio::time::timeout(stuck, send) => sent.unwrap_or_else(|_| {
                    cut.cancel();
                    Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("a message to it waited {stuck:?}: it does not read them"),
                    ))
                }),
                () = cut.cancelled() => Err(std::io::Error::new(
                    std::io::ErrorKind::BrokenPipe,
                    "it was cut off: it does not read what is sent to it",
                )),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let cut = self.cut.clone();
        tokio::select! {
            received = self.inner.receive() => received,
            () = cut.cancelled() => None,
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if self.cut.is_cancelled() {
            // A send may still hold the writer, blocked on a pipe the server does not read:
            // dropping the transport closes it.
            return Ok(());
        }
        self.inner.close().await
    }
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

    /// A schema of `objects` nested objects (`{"a": {"a": ...}}`, the schema the first) whose
    /// innermost holds an array of `zeros` zeros: `objects + 1` levels deep.
    fn nested(objects: usize, zeros: usize) -> JsonObject {
        let mut value = serde_json::json!({ "z": vec![0; zeros] });
        for _ in 1..objects {
            value = serde_json::json!({ "a": value });
        }
        match value {
            serde_json::Value::Object(o) => o,
            _ => unreachable!("built as an object"),
        }
    }

    fn refused(schema: JsonObject) -> Option<String> {
        too_large(&Tool::new("t", "a tool", Arc::new(schema)))
    }

    /// Small in bytes, large as a tree: too deep, or too many values, is refused whatever its
    /// size, and says which.
    #[test]
    fn a_schema_too_deep_or_with_too_many_values_is_refused() {
        assert_eq!(refused(nested(MAX_SCHEMA_DEPTH - 1, 10)), None);
        let deep = refused(nested(MAX_SCHEMA_DEPTH, 0)).expect("too deep");
        assert!(deep.contains("nests deeper than 32 levels"), "{deep}");
        // A server's 120 levels of `{"a":` are a few hundred bytes.
        assert!(refused(nested(120, 0)).is_some_and(|why| why.contains("deeper")));
        // The schema, its `z` and the array's members: at the bound, then one past it.
        assert_eq!(refused(nested(1, MAX_SCHEMA_VALUES - 2)), None);
        let dense = refused(nested(1, MAX_SCHEMA_VALUES - 1)).expect("too many values");
        assert!(dense.contains("more than 8192 values"), "{dense}");
        // 30,000 zeros 21 levels down: 60 kB as text, within MAX_SCHEMA, but ~1 MiB as a tree.
        let dense = nested(20, 30_000);
        assert!(serde_json::to_vec(&dense).expect("json").len() < MAX_SCHEMA);
        assert!(refused(dense).is_some_and(|why| why.contains("values")));
    }

    /// A transport whose sends never end: the server never reads.
    struct Deaf;

    impl Transport<RoleClient> for Deaf {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::pending()
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
            std::future::pending().await
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn answer(id: i64) -> TxJsonRpcMessage<RoleClient> {
        rmcp::model::ClientJsonRpcMessage::response(
            rmcp::model::ClientResult::empty(()),
            rmcp::model::NumberOrString::Number(id),
        )
    }

    /// Past the most messages waiting, the transport is cut off: receiving ends and every
    /// waiting send fails.
    #[tokio::test]
    async fn a_server_that_reads_nothing_is_cut_off_past_the_most_waiting() {
        let mut transport = SendCap::new(Deaf, 4, Duration::from_secs(3600));
        let cut = transport.cut();
        let waiting: Vec<_> = (0..4)
            .map(|id| tokio::spawn(Transport::<RoleClient>::send(&mut transport, answer(id))))
            .collect();
        tokio::task::yield_now().await;
        assert!(!cut.is_cancelled(), "four may wait");
        let over = Transport::<RoleClient>::send(&mut transport, answer(4)).await;
        assert!(over.is_err_and(|e| e.to_string().contains("does not read")));
        assert!(cut.is_cancelled());
        for w in waiting {
            assert!(w.await.expect("joined").is_err(), "a waiting send fails");
        }
        let received = tokio::time::timeout(
            Duration::from_secs(5),
            Transport::<RoleClient>::receive(&mut transport),
        )
        .await;
        assert!(matches!(received, Ok(None)), "receiving ends");
    }

    /// One message waiting longer than `stuck` cuts it off as well.
    #[tokio::test]
    async fn one_message_waiting_too_long_cuts_it_off() {
        let mut transport = SendCap::new(Deaf, 64, Duration::from_millis(50));
        let cut = transport.cut();
        let sent = Transport::<RoleClient>::send(&mut transport, answer(1)).await;
        assert!(sent.is_err_and(|e| e.kind() == std::io::ErrorKind::TimedOut));
        assert!(cut.is_cancelled());
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
