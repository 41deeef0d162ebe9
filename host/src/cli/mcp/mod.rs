//! `passepartout mcp`: the daemon's tools for MCP clients (editors, desktop assistants, agent
//! CLIs), over stdio, with the maintained Rust SDK (`rmcp`).
//!
//! A bridge, not a second agent: `tools/list` is the daemon's `tools` (what its model is
//! offered, with the `explanation` argument), and `tools/call` is a direct `act` request on a
//! connection of its own, through every gate, approvals, the journal and the tool's sandbox in
//! the daemon. A rejection is a tool result with `isError` and the gate's reason, so the
//! client's model reads why. An action a gate wants a person to approve waits (up to
//! `--approval-wait`) for the person's decision, and then returns what followed: the tool's
//! output, or the denial, rejection or failure (read from the event's typed `told`).
//!
//! The daemon serves the same bridge over MCP's streamable HTTP transport when `[mcp] http`
//! asks for it ([`http`]); its calls go through the daemon's own protocol too.

mod elicit;
pub mod http;
pub mod pin;
mod resources;
pub(crate) mod watch;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use passepartout::daemon::Keys;
use passepartout::daemon::answer::{self, AnswerError, Ran};
use passepartout::daemon::client::{Client, ClientError};
use passepartout::daemon::request::{Event, Request};
use passepartout::pipeline::{StepOutcome, ToolSchema};
use passepartout::signal::{Action, GateTrace, Told};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode, ErrorData,
    Implementation, JsonObject, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities, ServerInfo,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt as _};
use serde_json::Value;

use super::Common;
use super::daemon;

/// How long a call a gate flags waits for a person's decision by default: below the 60 s many
/// MCP clients wait for a call.
pub const APPROVAL_WAIT_SECS: u64 = 50;

/// How often a call waiting for an approval shows the daemon it is still there (the daemon
/// closes connections idle past its read timeout).
const KEEP_ALIVE: Duration = Duration::from_millis(500);

/// Serve MCP on stdin/stdout until the client closes it. Starts a daemon in the background
/// when none answers, as `chat` does. With `approver` (the operator marked this client as one
/// that may decide approvals), a call a gate flags is put to the client's person as an MCP
/// elicitation.
///
/// # Errors
/// No daemon could be reached or started, the approver key cannot be read (with `approver`),
/// or the MCP session failed to start.
pub fn run(common: &Common, approval_wait: Duration, approver: bool) -> anyhow::Result<ExitCode> {
    // Only when nothing answers: a daemon that refuses us (a wrong key) is not replaced.
    if let Err(e) = daemon::connect_as_client(common, "passepartout-mcp")
        && matches!(
            e.downcast_ref::<ClientError>(),
            Some(ClientError::Unreachable { .. }) | None
        )
    {
        daemon::start_background(common)?;
    }
    if approver {
        daemon::connect_as(common, true, "passepartout-mcp")?
            .call(&Request::Approvals)
            .context(
                "--approver: this user's connection cannot decide approvals (the approver key, \
                 approver.key in the keys directory or PASSEPARTOUT_APPROVER_SECRET, must be \
                 readable)",
            )?;
    }
    let bridge = Bridge {
        approver,
        ..Bridge::new(Door::Cli(Arc::new(common.clone())), approval_wait)
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Each call in flight holds one of these while it talks to the daemon (or waits for
        // a person's approval): bounded as the daemon's own pool is, not tokio's 512; calls
        // past it wait their turn.
        .max_blocking_threads(128)
        .enable_all()
        .build()
        .context("cannot start the MCP server's runtime")?;
    let served = runtime.block_on(async {
        let service = bridge
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        service
            .waiting()
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session ended abnormally: {e}"))?;
        Ok(ExitCode::SUCCESS)
    });
    // A call still waiting for an approval does not keep the process once the client left.
    runtime.shutdown_timeout(Duration::from_secs(1));
    served
}

/// How the bridge reaches the daemon: as a client with the client key only, so that its own
/// client (an MCP client) can neither decide approvals nor see their events; with the approver
/// key only to put a decision the person made through an elicitation ([`elicit`]).
#[derive(Clone)]
pub enum Door {
    /// `passepartout mcp`: the daemon the command's options name.
    Cli(Arc<Common>),
    /// The daemon's own HTTP transport: its address and keys.
    Direct {
        /// `IP:PORT` of the daemon's protocol.
        addr: String,
        /// The daemon's keys; `None` on a daemon without authentication.
        keys: Option<Keys>,
    },
}

impl Door {
    /// A connection to the daemon, calling itself `name` (journaled with each request); with
    /// the approver key when `approver`.
    fn connect_with(&self, name: &str, approver: bool) -> anyhow::Result<Client> {
        match self {
            Door::Cli(common) => daemon::connect_as(common, approver, name),
            Door::Direct { addr, keys } => {
                let keys = keys.clone().map(|k| k.for_role(approver));
                Ok(Client::connect_as(addr, keys.as_ref(), name)?)
            }
        }
    }

    /// A client connection (no approver key), calling itself `name`.
    fn connect(&self, name: &str) -> anyhow::Result<Client> {
        self.connect_with(name, false)
    }
}

/// What the bridge calls itself to the daemon for a request of this MCP client:
/// `passepartout-mcp/NAME`, NAME the client's own (its `initialize`), printable ASCII only.
fn via(context: &RequestContext<RoleServer>) -> String {
    let name: String = context
        .peer
        .peer_info()
        .map(|info| {
            info.client_info
                .name
                .chars()
                .filter(|c| c.is_ascii_graphic() || *c == ' ')
                .take(40)
                .collect()
        })
        .unwrap_or_default();
    if name.is_empty() {
        "passepartout-mcp".into()
    } else {
        format!("passepartout-mcp/{name}")
    }
}

/// The MCP server: each request is answered by the daemon.
#[derive(Clone)]
pub struct Bridge {
    door: Door,
    approval_wait: Duration,
    /// Every client of this bridge is one the operator marked as an approver
    /// (`passepartout mcp --approver`). Over HTTP, a request is marked by its bearer instead
    /// ([`http::Approver`]).
    approver: bool,
    /// Whether this session's tool list is watched ([`Bridge::watch`]).
    watching: Arc<std::sync::atomic::AtomicBool>,
    /// The tool set, watched once for every session, and the sessions counted.
    sets: Arc<watch::Sets>,
    /// This session's place among [`watch::MAX_SESSIONS`] (none for the one stdio session).
    _slot: Option<Arc<watch::Slot>>,
    /// The places of requests being served, shared by every session.
    lanes: Arc<Lanes>,
}

/// The most calls (`tools/call`, a resource read: an action, then perhaps a wait for its
/// approval of up to `approval_wait`) served at once. Each holds a blocking thread of the
/// daemon's 128, which its reloads, memory saves and the status poller need too: 240 client
/// connections each waiting for an approval held them all.
pub const MAX_CALLS: usize = 64;
/// The most other requests (listings, an approval's question) served at once, apart from the
/// calls, so that calls waiting for approval never keep a client from listing the tools.
pub const MAX_QUICK: usize = 16;

/// What a request served through [`Bridge::daemon`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lane {
    /// An action, or a wait for its approval: at most [`MAX_CALLS`] at once.
    Call,
    /// Anything else: at most [`MAX_QUICK`] at once.
    Quick,
}

/// The places of each [`Lane`].
#[derive(Debug)]
struct Lanes {
    calls: Arc<tokio::sync::Semaphore>,
    quick: Arc<tokio::sync::Semaphore>,
}

impl Default for Lanes {
    fn default() -> Lanes {
        Lanes {
            calls: Arc::new(tokio::sync::Semaphore::new(MAX_CALLS)),
            quick: Arc::new(tokio::sync::Semaphore::new(MAX_QUICK)),
        }
    }
}

impl Bridge {
    /// A bridge reaching the daemon through `door`; a call a gate flags waits up to
    /// `approval_wait` for a person's decision.
    pub fn new(door: Door, approval_wait: Duration) -> Bridge {
        Bridge {
            door,
            approval_wait,
            approver: false,
            watching: Arc::default(),
            sets: Arc::default(),
            _slot: None,
            lanes: Arc::default(),
        }
    }

    /// The same bridge for a new MCP session (its own watch of the tool list), for the
    /// request being served ([`watch::APPROVER`]); `None` when every place it may take among
    /// [`watch::MAX_SESSIONS`] is taken.
    pub fn session(&self) -> Option<Bridge> {
        let approver = watch::APPROVER.try_with(|a| *a).unwrap_or(false);
        let slot = self.sets.slot(approver)?;
        Some(Bridge {
            watching: Arc::default(),
            _slot: Some(Arc::new(slot)),
            ..self.clone()
        })
    }

    /// Once per session, from its first `tools/list`: tell the client when the daemon's plugin
    /// set changes (a reload, an install), with `notifications/tools/list_changed`, until it
    /// leaves.
    fn watch(&self, peer: &rmcp::service::Peer<RoleServer>) {
        if self
            .watching
            .swap(true, std::sync::atomic::Ordering::Relaxed)
        {
            return;
        }
        self.sets.follow(&self.door, peer.clone());
    }

    /// Whether the client of this request may be asked to decide an approval: marked by the
    /// operator, and able to show a form (elicitation).
    fn asks(&self, context: &RequestContext<RoleServer>) -> bool {
        let marked = self.approver
            || context
                .extensions
                .get::<::http::request::Parts>()
                .is_some_and(|p| p.extensions.get::<http::Approver>().is_some());
        marked
            && context
                .peer
                .supported_elicitation_modes()
                .contains(&rmcp::service::ElicitationMode::Form)
    }

    /// The daemon's tools, as its model is offered them; asked calling itself `name`.
    async fn schemas(&self, name: String) -> Result<Vec<ToolSchema>, ErrorData> {
        self.daemon(Lane::Quick, move |door| {
            let mut client = door.connect(&name)?;
            let (_, reply) = client.call(&Request::Tools)?;
            Ok(answer::read::<Vec<ToolSchema>>(&reply, "the tools")?)
        })
        .await
    }

    /// Run `work` (blocking: it talks to the daemon) off the async workers, in a place of
    /// `lane`; refused at once when every place is taken.
    async fn daemon<T: Send + 'static>(
        &self,
        lane: Lane,
        work: impl FnOnce(&Door) -> anyhow::Result<T> + Send + 'static,
    ) -> Result<T, ErrorData> {
        let (places, most, what) = match lane {
            Lane::Call => (
                &self.lanes.calls,
                MAX_CALLS,
                "calls (those waiting for approval too)",
            ),
            Lane::Quick => (&self.lanes.quick, MAX_QUICK, "listings"),
        };
        let place = places.clone().try_acquire_owned().map_err(|_| {
            internal(format!(
                "busy: {most} {what} are being served at once, the most this bridge serves; \
                 try again once some are done"
            ))
        })?;
        let door = self.door.clone();
        tokio::task::spawn_blocking(move || {
            let _place = place;
            work(&door)
        })
        .await
        .map_err(|e| internal(format!("the bridge failed: {e}")))?
        .map_err(|e| internal(format!("{e:#}")))
    }
}

fn internal(message: String) -> ErrorData {
    ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None)
}

impl ServerHandler for Bridge {
    /// The versions of [`http::PROTOCOL_VERSIONS`]: a client that asks for a later one is
    /// answered with the latest of these, which its requests then name.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(http::PROTOCOL_VERSIONS)
    }

    fn get_info(&self) -> ServerInfo {
        ServerInfo::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new(
            "passepartout",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Every tool call goes through Passepartout's gates before the tool runs in its \
                 sandbox. A rejected call returns the gate's reason; give `explanation` (why you \
                 make the call) for tools that change something. A call a gate flags waits for \
                 a person to approve it.",
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let name = via(&context);
        self.watch(&context.peer);
        Ok(ListToolsResult {
            tools: self.schemas(name).await?.into_iter().map(tool).collect(),
            ..Default::default()
        })
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult {
            resources: resources::listed(&self.schemas(via(&context)).await?),
            ..Default::default()
        })
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult {
            resource_templates: resources::templates(&self.schemas(via(&context)).await?),
            ..Default::default()
        })
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let action = resources::action(&request.uri)?;
        let name = via(&context);
        let (_, started) = self
            .daemon(Lane::Call, move |door| call(door, action, &name))
            .await?;
        let result = match started {
            Started::Done(result) => result,
            Started::Suspended { token, reasons, .. } => {
                return Err(ErrorData::new(
                    ErrorCode::INVALID_REQUEST,
                    format!(
                        "a gate asks a person before this is read ({reasons}); the operator \
                         decides it (token {token}), then read it again"
                    ),
                    None,
                ));
            }
        };
        let text: String = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        if result.is_error == Some(true) {
            return Err(ErrorData::new(ErrorCode::INVALID_REQUEST, text, None));
        }
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri)]).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let action = action_of(&request.name, request.arguments.unwrap_or_default());
        let name = via(&context);
        let first = name.clone();
        let (traces, started) = self
            .daemon(Lane::Call, move |door| call(door, action, &first))
            .await?;
        progress(&context, &traces).await;
        let (mut client, token, reasons) = match started {
            Started::Done(result) => return Ok(result.into()),
            Started::Suspended {
                client,
                token,
                reasons,
            } => (client, token, reasons),
        };
        // When the call stops waiting (never, for a wait past what an instant can hold).
        let until = Instant::now().checked_add(self.approval_wait);
        // A client the operator marked as an approver is asked, while the call waits for
        // whichever decision comes first (its person's, or `passepartout approve`).
        let asking = self.asks(&context).then(|| {
            tokio::spawn(elicit::ask(
                self.clone(),
                context.peer.clone(),
                elicit::Question {
                    name: name.clone(),
                    token: token.clone(),
                    reasons: reasons.clone(),
                    until,
                },
            ))
        });
        let waiting = Waiting {
            wait: self.approval_wait,
            until,
            cancelled: context.ct.clone(),
        };
        let result = self
            .daemon(Lane::Call, move |_| {
                approved(&mut client, &token, &reasons, &waiting)
            })
            .await;
        if let Some(asking) = asking {
            asking.abort();
        }
        Ok(result?.into())
    }
}

/// A tool as MCP lists it. Our tool names (`^[a-z][a-z0-9-]{0,63}$`) are already names MCP
/// clients accept.
fn tool(schema: ToolSchema) -> Tool {
    let mut parameters = match schema.parameters {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    };
    // MCP requires an object schema; a tool's schema may leave `type` out.
    parameters
        .entry("type")
        .or_insert_with(|| Value::from("object"));
    Tool::new(schema.name, schema.description, Arc::new(parameters))
}

/// The direct action a `tools/call` asks for: the `explanation` argument is the action's.
fn action_of(name: &str, mut args: JsonObject) -> Action {
    let explanation = match args.remove("explanation") {
        Some(Value::String(e)) if !e.trim().is_empty() => Some(e),
        _ => None,
    };
    Action {
        target: "tool".into(),
        tool: Some(name.to_owned()),
        args,
        text: None,
        explanation,
        call_id: None,
    }
}

fn text(text: String) -> Vec<ContentBlock> {
    vec![ContentBlock::text(text)]
}

/// How one call waits for a person's decision.
struct Waiting {
    /// At most this long (as the person is told)...
    wait: Duration,
    /// ...that is, until then; `None`: until decided.
    until: Option<Instant>,
    /// Until the MCP client cancels the call (`notifications/cancelled`).
    cancelled: tokio_util::sync::CancellationToken,
}

/// How a call went in the daemon, at first.
enum Started {
    /// What the client gets.
    Done(CallToolResult),
    /// A gate asked for a person: the connection the decision's outcome will come on.
    Suspended {
        /// The call's own connection.
        client: Box<Client>,
        /// The approval's token.
        token: String,
        /// The gates' reasons, joined.
        reasons: String,
    },
}

fn done(result: CallToolResult) -> anyhow::Result<Started> {
    Ok(Started::Done(result))
}

/// Each gate's verdict, as a progress notification of the call when the client asked for
/// progress (a `progressToken`): `check K: GATE VERDICT (REASON), N µs`, K counting the
/// verifications (the walk, then the last mile when it ran the gates again).
async fn progress(context: &RequestContext<RoleServer>, traces: &[GateTrace]) {
    let Some(token) = context.meta.get_progress_token() else {
        return;
    };
    let lines: Vec<String> = traces
        .iter()
        .enumerate()
        .flat_map(|(k, trace)| {
            trace.iter().map(move |g| {
                let reason = g
                    .reason
                    .as_deref()
                    .map(|r| format!(" ({r})"))
                    .unwrap_or_default();
                format!(
                    "check {}: gate {} {}{reason}, {} µs",
                    k + 1,
                    g.gate,
                    g.verdict.name(),
                    g.micros
                )
            })
        })
        .collect();
    let total = lines.len() as f64;
    for (i, line) in lines.into_iter().enumerate() {
        let note = ProgressNotificationParam::new(token.clone(), (i + 1) as f64)
            .with_total(total)
            .with_message(line);
        if context.peer.notify_progress(note).await.is_err() {
            // The client left; the result will not reach it either.
            return;
        }
    }
}

/// Run `action` in the daemon on a connection of its own, calling itself `name`: the gates'
/// traces, and how it went.
fn call(door: &Door, action: Action, name: &str) -> anyhow::Result<(Vec<GateTrace>, Started)> {
    let mut client = door.connect(name)?;
    let (frames, reply) = client.call(&Request::Act { action })?;
    let traces = answer::events(&frames)
        .into_iter()
        .filter_map(|e| match e {
            Event::GateTrace { trace } => Some(trace),
            _ => None,
        })
        .collect();
    Ok((traces, started(client, &reply)?))
}

/// How the call answered by `reply` went; `client` is its connection.
fn started(client: Client, reply: &Value) -> anyhow::Result<Started> {
    let ran = match answer::read::<Ran>(reply, "the steps of a run") {
        Ok(ran) => ran,
        Err(AnswerError::Refused(r)) => {
            return done(CallToolResult::error(text(format!(
                "the daemon refused the call: {}",
                r.message
            ))));
        }
        Err(e) => return Err(e.into()),
    };
    // The first step is the action's; later ones are its feedback.
    let first = ran
        .steps
        .0
        .iter()
        .flatten()
        .map(|s| &s.outcome)
        .find(|o| !matches!(o, StepOutcome::Nothing));
    let failed = |message: String| done(CallToolResult::error(text(message)));
    match first {
        Some(StepOutcome::Ran { result, .. }) => {
            done(CallToolResult::success(text(result.clone())))
        }
        Some(StepOutcome::Rejected { gate, reason, .. }) => {
            failed(format!("rejected by the gate {gate}: {reason}"))
        }
        Some(StepOutcome::ToolFailed { tool, message }) => {
            failed(format!("the tool {tool} failed: {message}"))
        }
        Some(StepOutcome::Invalid { reason }) => failed(format!("cannot do that: {reason}")),
        Some(StepOutcome::Failed { error }) => failed(format!("the daemon failed: {error}")),
        Some(StepOutcome::Dropped { why }) => failed(format!("stopped: {why}")),
        Some(StepOutcome::Suspended { token, reasons }) => Ok(Started::Suspended {
            token: token.clone(),
            reasons: reasons.join("; "),
            client: Box::new(client),
        }),
        Some(StepOutcome::Nothing) | None => done(CallToolResult::success(Vec::new())),
    }
}

/// Wait on `client`'s connection for what follows the action suspended under `token`: the
/// daemon sends the requester a `message` event, with its typed `told`, once a person decides.
fn approved(
    client: &mut Client,
    token: &str,
    reasons: &str,
    waiting: &Waiting,
) -> anyhow::Result<CallToolResult> {
    let (wait, until) = (waiting.wait, waiting.until);
    let broken = |e: &dyn std::fmt::Display| {
        Ok(CallToolResult::error(text(format!(
            "waiting for a person's approval ({reasons}), the connection to the daemon broke: \
             {e}. Token {token}: the person can still approve or deny it; do not repeat the call"
        ))))
    };
    client.set_timeout(Some(KEEP_ALIVE))?;
    let mut pings = 0u64;
    while until.is_none_or(|u| Instant::now() < u) {
        if waiting.cancelled.is_cancelled() {
            // Nobody reads the answer any more; the approval stays pending for the person.
            return Ok(CallToolResult::error(text(format!(
                "cancelled by the client while waiting for a person's approval ({reasons}); \
                 token {token} is still pending"
            ))));
        }
        let frame = match client.read() {
            Ok(frame) => frame,
            Err(ClientError::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                // Nothing yet: show the daemon this call is still waiting (its pong is read,
                // and ignored, by this loop).
                pings += 1;
                let ping = Request::Ping.frame(&Value::from(format!("keep-alive-{pings}")));
                if let Err(e) = client.send(&ping) {
                    return broken(&e);
                }
                continue;
            }
            Err(e) => return broken(&e),
        };
        for event in answer::events(std::slice::from_ref(&frame)) {
            let Event::Message {
                text: line,
                told: Some(told),
            } = event
            else {
                continue;
            };
            match told {
                Told::Ran => return Ok(CallToolResult::success(text(line))),
                // Approved, then flagged again by the last mile: a new token to wait for.
                Told::Suspended => {}
                Told::Failed | Told::Invalid | Told::Rejected | Told::Denied => {
                    return Ok(CallToolResult::error(text(line)));
                }
            }
        }
    }
    // Worded for the person reading the client: the model must not approve its own call.
    Ok(CallToolResult::error(text(format!(
        "this call needs a person's approval ({reasons}) and none came within {} s. The \
         operator decides it (token {token}); do not repeat the call: once approved, it runs",
        wait.as_secs()
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn calls_past_the_most_are_refused_at_once_and_listings_are_still_served() {
        let door = Door::Direct {
            addr: "127.0.0.1:9".into(),
            keys: None,
        };
        let bridge = Bridge::new(door, Duration::from_secs(1));
        // Calls that wait (for an approval, say) until the test lets them go.
        let gate = Arc::new(tokio::sync::RwLock::new(()));
        let held = gate.write().await;
        let waiting: Vec<_> = (0..MAX_CALLS)
            .map(|_| {
                let (bridge, gate) = (bridge.clone(), gate.clone());
                tokio::spawn(async move {
                    bridge
                        .daemon(Lane::Call, move |_| {
                            drop(gate.blocking_read());
                            Ok(())
                        })
                        .await
                })
            })
            .collect();
        let deadline = Instant::now() + Duration::from_secs(10);
        while bridge.lanes.calls.available_permits() > 0 {
            assert!(Instant::now() < deadline, "the calls did not all start");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // One more call is refused at once, saying why; a listing is served all the same.
        let refused = bridge.daemon(Lane::Call, |_| Ok(())).await;
        let message = refused.expect_err("busy").message;
        assert!(message.contains("busy: 64 calls"), "{message}");
        assert_eq!(bridge.daemon(Lane::Quick, |_| Ok(7)).await.ok(), Some(7));
        drop(held);
        for call in waiting {
            assert!(call.await.expect("joined").is_ok());
        }
        assert!(bridge.daemon(Lane::Call, |_| Ok(())).await.is_ok());
    }
}
