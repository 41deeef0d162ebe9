//! MCP's streamable HTTP transport, served by the daemon when `[mcp] http` names an address
//! (docs/mcp.md): rmcp's tower service on hyper connections, at `/mcp`. Every request passes
//! three checks before it reaches the bridge: its bearer token must be the daemon's client key
//! or its approver key (here, in constant time), and, against DNS rebinding, its `Host` must
//! name this server and its `Origin`, when it has one, must be a loopback origin or one the
//! operator listed (rmcp's checks, given the lists made here). A request whose bearer is the
//! approver key is from a client the operator marked as an approver ([`Approver`]). A request
//! naming a protocol version not in [`PROTOCOL_VERSIONS`] is refused before rmcp reads it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use passepartout::daemon::Keys;
use passepartout::daemon::lobby::Lobby;
use passepartout::settings::McpSection;
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::Bridge;

/// The path MCP clients send to.
pub const PATH: &str = "/mcp";

/// Connections served at once. When all are taken, a new one evicts one that has not sent a
/// request with a key yet, or, when every place is a client's, waits for a place.
const MAX_CONNECTIONS: usize = 256;
/// Of those, the places only a client with the approver key takes: clients with the client
/// key alone cannot hold every place, so that a client the operator marked as an approver
/// can still connect.
const APPROVER_PLACES: usize = 16;
/// How long a request's headers may take to arrive (a connection that sends none is closed).
const HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The MCP protocol versions served ([`passepartout::gateway::PROTOCOL_VERSIONS`]). A request
/// whose `MCP-Protocol-Version` names another is refused: from 2026-07-28 on, rmcp keeps what
/// it looked up for each tool name a request names, and never lets it go, so a client could
/// make the daemon hold every name it sends.
pub const PROTOCOL_VERSIONS: &[ProtocolVersion] = passepartout::gateway::PROTOCOL_VERSIONS;

/// Marks a request whose bearer is the approver key: its client's person may be asked to
/// decide an approval (an elicitation, [`super::elicit`]).
#[derive(Clone, Copy, Debug)]
pub struct Approver;

/// Listen where `[mcp] http` says, if it says: a loopback address unless `any_interface`.
///
/// # Errors
/// The address does not parse, is not loopback (and `any_interface` is off), or is taken.
pub fn bind(section: &McpSection) -> anyhow::Result<Option<std::net::TcpListener>> {
    let Some(text) = &section.http else {
        return Ok(None);
    };
    let addr: SocketAddr = text.parse().with_context(|| {
        format!("[mcp] http = {text:?} is not an address: write IP:PORT, e.g. \"127.0.0.1:9120\"")
    })?;
    if !addr.ip().is_loopback() && !section.any_interface {
        anyhow::bail!(
            "[mcp] http = {text:?} is not a loopback address: the MCP transport serves this \
             machine only, unless [mcp] any_interface = true (its traffic is plain HTTP)"
        );
    }
    let listener = std::net::TcpListener::bind(addr)
        .with_context(|| format!("cannot listen on [mcp] http = {text:?}"))?;
    listener.set_nonblocking(true)?;
    Ok(Some(listener))
}

/// The authorities a request's `Host` may name: the loopback names and the address served, at
/// its port, and the operator's `hosts`.
fn hosts(addr: SocketAddr, section: &McpSection) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
        addr.to_string(),
    ];
    hosts.extend(section.hosts.iter().cloned());
    hosts
}

/// The browser origins allowed: the loopback ones at the port served, and the operator's
/// `origins`. Never empty (rmcp reads an empty list as "any origin").
fn origins(addr: SocketAddr, section: &McpSection) -> Vec<String> {
    let port = addr.port();
    let mut origins = vec![
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ];
    origins.extend(section.origins.iter().cloned());
    origins
}

/// Serve MCP on `listener` with `bridge`, each request authenticated with one of `keys` as its
/// bearer, until the runtime stops. A connection that fails ends alone.
pub async fn serve(
    listener: std::net::TcpListener,
    bridge: Bridge,
    keys: Keys,
    section: McpSection,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts(addr, &section))
        .with_allowed_origins(origins(addr, &section));
    let mcp = StreamableHttpService::new(
        move || {
            bridge.session().ok_or_else(|| {
                std::io::Error::other(format!(
                    "every MCP session this key may open is open ({} for either key, {} more \
                     kept for the approver key): close one (a DELETE of its session) or wait \
                     until an idle one ends",
                    super::watch::MAX_SESSIONS - super::watch::APPROVER_SESSIONS,
                    super::watch::APPROVER_SESSIONS
                ))
            })
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let keys = Arc::new(keys);
    let room = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // Connections that have not yet sent a request with a key: when every place is taken, a
    // new connection evicts one of them (a random one, the slow first), so connections that
    // never authenticate cannot keep a client with the key out.
    let lobby = Arc::new(Lobby::new(MAX_CONNECTIONS));
    let places = Arc::new(Places {
        clients: Arc::new(Semaphore::new(MAX_CONNECTIONS - APPROVER_PLACES)),
        approvers: Arc::new(Semaphore::new(APPROVER_PLACES)),
    });
    let mut next: u64 = 0;
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors, a connection reset before accept: the next may work.
                tracing::warn!("MCP over HTTP: cannot accept a connection: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let place = match room.clone().try_acquire_owned() {
            Ok(place) => place,
            Err(_) => {
                // No room: make some at a keyless connection's expense when there is one;
                // when every place is a client's, wait for one to end.
                lobby.evict();
                let Ok(place) = room.clone().acquire_owned().await else {
                    return Ok(());
                };
                place
            }
        };
        next += 1;
        let evicted = lobby.enter(next);
        let seat = Arc::new(Seat {
            conn: next,
            lobby: lobby.clone(),
            places: places.clone(),
            held: std::sync::Mutex::new(None),
        });
        let mcp = mcp.clone();
        let keys = keys.clone();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            let mut mcp = mcp.clone();
            let keys = keys.clone();
            let seat = seat.clone();
            async move {
                if let Some(refused) = admit(&mut request, &keys) {
                    return Ok::<_, Infallible>(refused);
                }
                let approver = request.extensions().get::<Approver>().is_some();
                if let Some(refused) = seat.take(approver) {
                    return Ok(refused);
                }
                // The session a request opens takes a place of its key's kind.
                super::watch::APPROVER
                    .scope(approver, tower_service::Service::call(&mut mcp, request))
                    .await
            }
        });
        tokio::spawn(async move {
            let _place = place;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), service);
            // Fires only on an eviction; once the connection has left the lobby, never.
            let evicted = async {
                if evicted.await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                ended = connection => if let Err(e) = ended {
                    tracing::debug!("MCP over HTTP: the connection from {peer} ended: {e}");
                },
                () = evicted => {
                    tracing::debug!("MCP over HTTP: {peer} evicted before it sent a key");
                }
            }
        });
    }
}

/// The places of authenticated connections: those with the client key take `clients`; those
/// with the approver key take `clients`, or, when none is left, `approvers`.
struct Places {
    clients: Arc<Semaphore>,
    approvers: Arc<Semaphore>,
}

/// One connection's standing: in the lobby until a request of its carries a key, then holding
/// a place of its key's kind for as long as it lasts. Dropped with the connection, it leaves
/// the lobby whatever ended it.
struct Seat {
    conn: u64,
    lobby: Arc<Lobby>,
    places: Arc<Places>,
    held: std::sync::Mutex<Option<OwnedSemaphorePermit>>,
}

impl Seat {
    /// An authenticated request on this connection (`approver`: with the approver key) may
    /// go on (`None`), or is refused: the connection was evicted while the request came, or
    /// every place its key may take is taken.
    fn take(&self, approver: bool) -> Option<Response<BoxBody<Bytes, Infallible>>> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if held.is_some() {
            return None;
        }
        if !self.lobby.leave(self.conn) {
            return Some(plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "closed: too many connections were waiting to send a key; connect again".into(),
            ));
        }
        let place = self
            .places
            .clients
            .clone()
            .try_acquire_owned()
            .ok()
            .or_else(|| {
                approver
                    .then(|| self.places.approvers.clone().try_acquire_owned().ok())
                    .flatten()
            });
        match place {
            Some(place) => {
                *held = Some(place);
                None
            }
            None => Some(plain(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the MCP transport already serves {} clients with the client key, as many \
                     as it takes (its last {APPROVER_PLACES} places are kept for the approver \
                     key); try again later",
                    MAX_CONNECTIONS - APPROVER_PLACES
                ),
            )),
        }
    }
}

impl Drop for Seat {
    fn drop(&mut self) {
        let _ = self.lobby.leave(self.conn);
    }
}

/// Let `request` through (marked [`Approver`] when its bearer is the approver key), or say why
/// not: another path than [`PATH`], no bearer token that is one of `keys`, or a protocol
/// version not served ([`PROTOCOL_VERSIONS`]).
fn admit(
    request: &mut Request<Incoming>,
    keys: &Keys,
) -> Option<Response<BoxBody<Bytes, Infallible>>> {
    if request.uri().path() != PATH {
        return Some(plain(
            StatusCode::NOT_FOUND,
            format!("MCP is served at {PATH}"),
        ));
    }
    let token = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if let Some(token) = token {
        let client = keys.client.is(token.as_bytes());
        let approver = !client
            && keys
                .approver
                .as_ref()
                .is_some_and(|a| a.is(token.as_bytes()));
        if client || approver {
            if let Some(refused) = unserved_version(request.headers()) {
                return Some(refused);
            }
            if approver {
                request.extensions_mut().insert(Approver);
            }
            return None;
        }
    }
    let mut refused = plain(
        StatusCode::UNAUTHORIZED,
        "send `Authorization: Bearer KEY`, KEY being the daemon's client key (the file \
         keys/client.key in Passepartout's data directory, or PASSEPARTOUT_HMAC_SECRET)"
            .into(),
    );
    refused.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static("Bearer realm=\"passepartout\""),
    );
    Some(refused)
}

/// A refusal with 400 when `headers` name a protocol version not served
/// ([`PROTOCOL_VERSIONS`]); none when they name one of them, or none at all.
fn unserved_version(headers: &hyper::HeaderMap) -> Option<Response<BoxBody<Bytes, Infallible>>> {
    let named = headers.get("mcp-protocol-version")?;
    if PROTOCOL_VERSIONS
        .iter()
        .any(|v| named.as_bytes() == v.as_str().as_bytes())
    {
        return None;
    }
    let served: Vec<&str> = PROTOCOL_VERSIONS
        .iter()
        .map(ProtocolVersion::as_str)
        .collect();
    Some(plain(
        StatusCode::BAD_REQUEST,
        format!(
            "MCP-Protocol-Version {:?} is not served: this server speaks {}; connect with \
             `initialize` and send the version it answers",
            String::from_utf8_lossy(named.as_bytes())
                .chars()
                .take(64)
                .collect::<String>(),
            served.join(", ")
        ),
    ))
}

/// A refusal in plain text. It closes the connection: one without the key holds none of the
/// places authenticated clients need by sending a refused request every few seconds.
fn plain(status: StatusCode, text: String) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}
