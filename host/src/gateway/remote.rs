//! A remote MCP server (`url` in `[mcp.servers.NAME]`): rmcp's streamable HTTP client, over a
//! connection the daemon makes under http-fetch's rules. No redirect is followed and no proxy
//! used; every address the URL's name resolves to must be public (not loopback, private,
//! link-local, metadata...) unless the operator lists it in `addresses`; an address written in
//! the URL itself is granted by being written there. The connection goes to the addresses just
//! checked (no second lookup a DNS rebinding could change); with `https` the certificate must
//! still match the name.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::bounded_http::Bounded;
use crate::runtime::capabilities::net::is_restricted;
use crate::settings::McpServerConfig;

/// How long connecting may take.
const CONNECT: Duration = Duration::from_secs(10);

/// A remote server's URL, read.
#[derive(Debug, PartialEq)]
pub struct Endpoint {
    /// As written.
    pub url: String,
    /// The host: a name, or an address written in the URL.
    pub host: url::Host<String>,
    /// The port, given or the scheme's.
    pub port: u16,
    /// Whether it is `https`.
    pub https: bool,
}

/// What is wrong with a remote server's `url`. Each names the URL.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// It is not a URL.
    #[error("`url` {url:?}: {source}")]
    Parse {
        /// The URL as written.
        url: String,
        /// Why it does not parse.
        #[source]
        source: url::ParseError,
    },
    /// Its scheme is neither `http` nor `https`.
    #[error("`url` {url:?}: the scheme is {scheme}; use http or https")]
    Scheme {
        /// The URL as written.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// It carries a user or a password.
    #[error("`url` {url:?}: no user or password in the URL; put a token in `bearer_file`")]
    Credentials {
        /// The URL as written.
        url: String,
    },
    /// It names no host.
    #[error("`url` {url:?} names no host")]
    NoHost {
        /// The URL as written.
        url: String,
    },
    /// It names no port, and its scheme has none by default.
    #[error("`url` {url:?} names no port")]
    NoPort {
        /// The URL as written.
        url: String,
    },
}

/// Why a remote server's name gave no address to connect to.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    /// The lookup did not finish in time.
    #[error("looking up {name} took over {within:?}")]
    Slow {
        /// The name.
        name: String,
        /// How long it was given.
        within: Duration,
    },
    /// The lookup failed.
    #[error("cannot look up {name}: {source}")]
    Lookup {
        /// The name.
        name: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The name has no address.
    #[error("{name} resolves to no address")]
    Nothing {
        /// The name.
        name: String,
    },
    /// The name leads somewhere a remote server may not be.
    #[error(
        "{name} resolves to {ip}, a loopback, private, link-local or otherwise restricted \
         address: a remote server must be public, unless the operator lists that address in \
         `addresses` (or writes it in `url`)"
    )]
    Restricted {
        /// The name.
        name: String,
        /// The restricted address it resolves to.
        ip: IpAddr,
    },
}

/// Why no transport to a remote MCP server could be made.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The server's configuration names no URL.
    #[error("no `url`")]
    NoUrl,
    /// The URL is not usable.
    #[error(transparent)]
    Endpoint(#[from] EndpointError),
    /// Its name gives no address it may be reached at.
    #[error(transparent)]
    Address(#[from] AddressError),
    /// No HTTP client could be built.
    #[error("cannot build an HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The token file cannot be read.
    #[error("`bearer_file` {}: {source}", path.display())]
    Bearer {
        /// The file.
        path: std::path::PathBuf,
        /// Why it cannot be read.
        #[source]
        source: std::io::Error,
    },
}

/// Read `url`: `http` or `https`, with a host, no user or password.
///
/// # Errors
/// What is wrong with it ([`EndpointError`]).
pub fn endpoint(url: &str) -> Result<Endpoint, EndpointError> {
    let parsed = reqwest::Url::parse(url).map_err(|source| EndpointError::Parse {
        url: url.to_owned(),
        source,
    })?;
    let https = match parsed.scheme() {
        "https" => true,
        "http" => false,
        other => {
            return Err(EndpointError::Scheme {
                url: url.to_owned(),
                scheme: other.to_owned(),
            });
        }
    };
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(EndpointError::Credentials {
            url: url.to_owned(),
        });
    }
    let host = parsed
        .host()
        .ok_or_else(|| EndpointError::NoHost {
            url: url.to_owned(),
        })?
        .to_owned();
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| EndpointError::NoPort {
            url: url.to_owned(),
        })?;
    Ok(Endpoint {
        url: url.to_owned(),
        host,
        port,
        https,
    })
}

impl Endpoint {
    /// The address written in the URL, if it names one.
    fn address(&self) -> Option<IpAddr> {
        match &self.host {
            url::Host::Ipv4(ip) => Some(IpAddr::V4(*ip)),
            url::Host::Ipv6(ip) => Some(IpAddr::V6(*ip)),
            url::Host::Domain(_) => None,
        }
    }

    /// Whether a token sent to it crosses no network in the clear: `https`, or an address
    /// on this machine.
    pub fn private_channel(&self) -> bool {
        self.https || self.address().is_some_and(|ip| ip.is_loopback())
    }
}

/// The addresses to connect to for `endpoint`: an address written in the URL as it is; a
/// name's, each checked.
///
/// # Errors
/// The name does not resolve, or resolves to a restricted address not in `allowed`
/// ([`AddressError`]).
pub async fn addresses(
    endpoint: &Endpoint,
    allowed: &[IpAddr],
) -> Result<Vec<SocketAddr>, AddressError> {
    if let Some(ip) = endpoint.address() {
        return Ok(vec![SocketAddr::new(ip, endpoint.port)]);
    }
    let name = endpoint.host.to_string();
    let found: Vec<SocketAddr> = tokio::time::timeout(
        CONNECT,
        tokio::net::lookup_host((name.as_str(), endpoint.port)),
    )
    .await
    .map_err(|_| AddressError::Slow {
        name: name.clone(),
        within: CONNECT,
    })?
    .map_err(|source| AddressError::Lookup {
        name: name.clone(),
        source,
    })?
    .collect();
    if found.is_empty() {
        return Err(AddressError::Nothing { name });
    }
    if let Some(bad) = found
        .iter()
        .find(|a| is_restricted(a.ip()) && !allowed.contains(&a.ip()))
    {
        return Err(AddressError::Restricted { name, ip: bad.ip() });
    }
    Ok(found)
}

/// A transport to the remote server `config` names.
///
/// # Errors
/// The URL is not usable, its name resolves where it may not go, the token cannot be read,
/// or no HTTP client can be built ([`TransportError`]).
pub async fn transport(
    config: &McpServerConfig,
) -> Result<StreamableHttpClientTransport<Bounded>, TransportError> {
    let url = config.url.as_deref().ok_or(TransportError::NoUrl)?;
    let endpoint = endpoint(url)?;
    let addrs = addresses(&endpoint, &config.addresses).await?;
    let mut builder = crate::tls::client_builder()
        .user_agent(concat!("passepartout/", env!("CARGO_PKG_VERSION")))
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .connect_timeout(CONNECT);
    if let url::Host::Domain(name) = &endpoint.host {
        builder = builder.resolve_to_addrs(name, &addrs);
    }
    let client = builder.build().map_err(TransportError::Client)?;
    let mut transport = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(file) = &config.bearer_file {
        // ambient authority: the operator's token file for this server.
        let token = std::fs::read_to_string(file).map_err(|source| TransportError::Bearer {
            path: file.clone(),
            source,
        })?;
        transport = transport.auth_header(token.trim());
    }
    // A POST outlives the call that made it by a little, so that the call's own timeout is
    // what the caller sees, and rmcp's worker is free again right after.
    // (The handshake and each listing get 30 s.)
    let deadline = config.call_timeout().max(Duration::from_secs(30)) + Duration::from_secs(5);
    Ok(StreamableHttpClientTransport::with_client(
        Bounded::new(client, deadline),
        transport,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_strictly() {
        let e = endpoint("https://tools.example.com/mcp").expect("https");
        assert_eq!((e.port, e.https), (443, true));
        assert!(e.private_channel());
        let e = endpoint("http://127.0.0.1:9000/mcp").expect("loopback http");
        assert!(e.private_channel());
        let e = endpoint("http://tools.example.com/mcp").expect("plain http");
        assert!(
            !e.private_channel(),
            "a token over plain http to another host"
        );
        assert!(endpoint("ftp://example.com/").is_err());
        assert!(endpoint("http://user:pw@example.com/").is_err());
        assert!(endpoint("not a url").is_err());
    }

    #[tokio::test]
    async fn a_name_that_resolves_to_a_restricted_address_is_refused_unless_listed() {
        let named = endpoint("http://localhost:9/mcp").expect("url");
        let refused = addresses(&named, &[]).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.to_string().contains("restricted address")),
            "{refused:?}"
        );
        let loopback: Vec<IpAddr> =
            vec!["127.0.0.1".parse().expect("ip"), "::1".parse().expect("ip")];
        assert!(addresses(&named, &loopback).await.is_ok());
        // An address written in the URL is the operator's grant of it.
        let written = endpoint("http://127.0.0.1:9/mcp").expect("url");
        assert_eq!(
            addresses(&written, &[]).await.expect("granted"),
            vec!["127.0.0.1:9".parse::<SocketAddr>().expect("addr")]
        );
    }
}
