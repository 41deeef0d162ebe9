//! The `net` capability: outbound HTTP through `wasi:http`, linked only for plugins granted at
//! least one host. Every request (and so every redirect hop, which the guest must make as a new
//! request) is checked here before a connection is made:
//!
//! - its host must be granted: `example.org`, `example.org:8443`, `*.example.org`, or an
//!   address `127.0.0.1:8080` / `[::1]:8080` / `10.0.0.5`;
//! - every address the name resolves to must be public: loopback, private, link-local (and so
//!   the cloud metadata address 169.254.169.254), unique-local, CGNAT, multicast, unspecified
//!   and documentation ranges are refused unless the grant names that very address.
//!
//! For `http` the connection goes to the address that was checked (no second lookup a DNS
//! rebinding could change). For `https` the TLS library connects by name, so a name is
//! resolved twice; the certificate must still match the name.

use std::net::{IpAddr, SocketAddr};

use http::uri::Scheme;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use crate::runtime::manifest::CapabilityRequest;
use crate::runtime::policy::PluginPolicy;

/// The network capability ([`super::Factor`]).
pub struct Network;

impl super::Factor for Network {
    fn name(&self) -> &'static str {
        "network"
    }
    fn what(&self) -> &'static str {
        "outbound HTTP (wasi:http)"
    }
    fn owns(&self, interface: &str) -> bool {
        interface.starts_with("wasi:sockets/") || interface.starts_with("wasi:http/")
    }
    fn linked_only_when_granted(&self, interface: &str) -> bool {
        // Sockets are linked for every tool and disabled in its WASI context instead.
        interface.starts_with("wasi:http/")
    }
    fn asked(&self, asked: &CapabilityRequest) -> bool {
        !asked.net.is_empty()
    }
    fn resolve(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &mut super::Grants,
    ) -> Result<(), super::GrantRefused> {
        // A manifest asking for "*" takes whatever hosts the operator grants.
        grants.net = if asked.net.iter().any(|h| h == "*") {
            policy.net.clone()
        } else {
            super::intersect(&asked.net, &policy.net)
        };
        Ok(())
    }
    fn granted(&self, grants: &super::Grants) -> bool {
        !grants.net.is_empty()
    }
    fn unenforceable(&self, grants: &super::Grants) -> Option<(String, &'static str)> {
        let bad = grants.net.iter().find(|h| !is_valid_grant(h))?;
        Some((
            format!("network access to {bad:?}"),
            "not a host, host:port, *.domain or IP address the HTTP allow-list can match",
        ))
    }
    fn grant_hint(&self, plugin: &str) -> String {
        format!("grant hosts under [plugins.{plugin}]: net = [\"example.org\"]")
    }
    fn sides(
        &self,
        asked: &CapabilityRequest,
        policy: &PluginPolicy,
        grants: &super::Grants,
    ) -> super::Sides {
        let mut sides = super::Sides::listed(&asked.net, &policy.net, grants.net.clone());
        if asked.net.iter().any(|h| h == "*") {
            // "*" takes every host granted: none of them is without effect.
            sides.undeclared.clear();
        }
        sides
    }
    fn enforced(&self, grants: &super::Grants) -> String {
        if grants.net.is_empty() {
            return "sockets and name lookup are disabled in the WASI context; wasi:http is not \
                    linked"
                .into();
        }
        format!(
            "wasi:http linked; every request (each redirect hop too) must go to {}, within the \
             call's deadline; loopback, private, link-local and metadata addresses refused \
             unless granted by address; sockets and name lookup disabled",
            grants.net.join(", ")
        )
    }
}

/// Link `wasi:http` (only for plugins granted a host): as futures when calls have hard
/// deadlines, else blocking.
///
/// # Errors
/// The interface cannot be added (a wasmtime bug).
pub fn link<T: wasmtime_wasi_http::WasiHttpView + 'static>(
    linker: &mut wasmtime::component::Linker<T>,
    hard: bool,
) -> wasmtime::Result<()> {
    if hard {
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)
    } else {
        wasmtime_wasi_http::p2::add_only_http_to_linker_sync(linker)
    }
}

/// Checks every outgoing request of one call against the plugin's grants.
pub struct NetHooks {
    /// The granted hosts, as written in the policy.
    pub grants: Vec<String>,
    /// When the tool call's own deadline passes: no request outlives it (the epoch deadline
    /// cannot interrupt the host while it waits on the network).
    pub deadline: std::time::Instant,
}

/// One grant, parsed.
#[derive(Debug, PartialEq, Eq)]
struct Grant {
    host: String,
    port: Option<u16>,
    ip: Option<IpAddr>,
}

fn parse_grant(text: &str) -> Option<Grant> {
    let text = text.trim().to_ascii_lowercase();
    if let Ok(sa) = text.parse::<SocketAddr>() {
        return Some(Grant {
            host: sa.ip().to_string(),
            port: Some(sa.port()),
            ip: Some(sa.ip()),
        });
    }
    let bare = text.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Some(Grant {
            host: ip.to_string(),
            port: None,
            ip: Some(ip),
        });
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((h, p)) => (h.to_owned(), Some(p.parse().ok()?)),
        None => (text.clone(), None),
    };
    (!host.is_empty()).then_some(Grant {
        host,
        port,
        ip: None,
    })
}

impl Grant {
    fn covers(&self, host: &str, port: u16) -> bool {
        let host_ok = match self.host.strip_prefix("*.") {
            Some(domain) => host.ends_with(&format!(".{domain}")),
            None => self.host == host,
        };
        host_ok && self.port.is_none_or(|p| p == port)
    }
}

/// The port the grant `text` names (`host:port`, `v4:port`, `[v6]:port`), if it names one: a
/// bare host or address (an IPv6 one included, whose last group is no port) names none.
pub fn grant_port(text: &str) -> Option<u16> {
    parse_grant(text).and_then(|g| g.port)
}

/// Whether the grant `text` lets a plugin reach a port in `ports` on this machine (the
/// daemon's own): over `wasi:http` when it names a loopback address or `localhost` with one of
/// those ports or none; and, for its granted programs (`programs`), whose network is confined
/// by port only, when it names one of those ports at all.
pub fn reaches_local_port(text: &str, programs: bool, ports: &[u16]) -> bool {
    let Some(g) = parse_grant(text) else {
        return false;
    };
    // `::ffff:127.0.0.1` is 127.0.0.1 over an IPv6 socket.
    let local =
        g.ip.map(|ip| ip.to_canonical())
            .is_some_and(|ip| ip.is_loopback() || ip.is_unspecified())
            || g.host == "localhost"
            || g.host.ends_with(".localhost");
    match g.port {
        Some(p) => ports.contains(&p) && (local || programs),
        None => local,
    }
}

/// Whether a policy's net entry is one the allow-list can match: an address, or a host name
/// of non-empty labels, or `*.` and a domain of at least two labels. `*`, `*.`, `*.com`, a
/// `*` elsewhere or an empty label (`a..b`, `example.org.`) are refused: they would match
/// every host, every host of a top-level domain, or nothing as written.
pub fn is_valid_grant(text: &str) -> bool {
    let Some(g) = parse_grant(text) else {
        return false;
    };
    if g.ip.is_some() {
        return true;
    }
    let labels = |name: &str| name.split('.').all(|l| !l.is_empty() && !l.contains('*'));
    match g.host.strip_prefix("*.") {
        Some(domain) => labels(domain) && domain.contains('.'),
        None => labels(&g.host),
    }
}

/// Whether `ip` is an address outbound requests must not reach unless granted by address.
pub fn is_restricted(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                || (o[0] == 198 && (18..20).contains(&o[1]))
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_restricted(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if let Some(v4) = v6.to_ipv4() {
                // ::a.b.c.d (IPv4-compatible, deprecated) reaches the IPv4 address.
                if s[..6] == [0; 6] && s[6] != 0 {
                    return is_restricted(IpAddr::V4(v4));
                }
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || s[0] == 0x2002
                || (s[0] & 0xffc0) == 0xfec0
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8)
                || (s[0] == 0x64 && s[1] == 0xff9b)
        }
    }
}

/// The checked address to connect to for `host:port`, or why not.
async fn check(grants: &[String], host: &str, port: u16) -> Result<SocketAddr, Error> {
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let parsed: Vec<Grant> = grants.iter().filter_map(|g| parse_grant(g)).collect();
    let literal = host.parse::<IpAddr>().ok();
    let host_key = literal.map_or_else(|| host.clone(), |ip| ip.to_string());
    let Some(grant) = parsed.iter().find(|g| g.covers(&host_key, port)) else {
        tracing::info!("http: {host}:{port} is not a granted host");
        return Err(Error::HttpRequestDenied);
    };
    let addrs: Vec<SocketAddr> = match literal {
        Some(ip) => vec![SocketAddr::new(ip, port)],
        None => tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|_| Error::DnsError {
                rcode: None,
                info_code: None,
            })?
            .collect(),
    };
    let first = *addrs.first().ok_or(Error::DestinationNotFound)?;
    for a in &addrs {
        if is_restricted(a.ip()) && grant.ip != Some(a.ip()) {
            tracing::info!("http: {host} resolves to {}, a restricted address", a.ip());
            return Err(Error::DestinationIpProhibited);
        }
    }
    Ok(first)
}

impl WasiHttpHooks for NetHooks {
    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<
                    (
                        http::Response<WasiBody>,
                        Box<dyn Future<Output = Result<(), Error>> + Send>,
                    ),
                    Error,
                >,
            > + Send,
    > {
        let grants = self.grants.clone();
        let remaining = self
            .deadline
            .saturating_duration_since(std::time::Instant::now());
        let clamp =
            |d: Option<std::time::Duration>| Some(d.map_or(remaining, |d| d.min(remaining)));
        let options = Some(RequestOptions {
            connect_timeout: clamp(options.and_then(|o| o.connect_timeout)),
            first_byte_timeout: clamp(options.and_then(|o| o.first_byte_timeout)),
            between_bytes_timeout: clamp(options.and_then(|o| o.between_bytes_timeout)),
        });
        drop(fut);
        Box::new(async move {
            use http_body_util::BodyExt;
            let uri = request.uri().clone();
            let https = uri.scheme() == Some(&Scheme::HTTPS);
            let host = uri.host().ok_or(Error::HttpRequestUriInvalid)?.to_owned();
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let addr = tokio::time::timeout(remaining, check(&grants, &host, port))
                .await
                .map_err(|_| Error::DnsTimeout)??;
            if !https {
                // Connect to the address just checked; `Host:` still names the host.
                let path = uri.path_and_query().map_or("/", |p| p.as_str());
                *request.uri_mut() = http::Uri::builder()
                    .scheme(Scheme::HTTP)
                    .authority(addr.to_string())
                    .path_and_query(path)
                    .build()
                    .map_err(|_| Error::HttpRequestUriInvalid)?;
            }
            let (res, io) = tokio::time::timeout(
                remaining,
                wasmtime_wasi_http::default_send_request(request, options),
            )
            .await
            .map_err(|_| Error::ConnectionTimeout)??;
            Ok((
                res.map(BodyExt::boxed_unsync),
                Box::new(io) as Box<dyn Future<Output = _> + Send>,
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grants_that_reach_a_local_port() {
        let ports = [9105, 9106];
        for (grant, programs, reaches) in [
            ("127.0.0.1:9105", false, true),
            ("localhost", false, true),
            ("[::1]:9106", false, true),
            ("[::ffff:127.0.0.1]:9105", false, true),
            ("[::ffff:0.0.0.0]:9105", false, true),
            ("127.0.0.1:8080", false, false),
            ("example.org:9105", false, false),
            // Programs are confined by port only: any host with the daemon's port reaches it.
            ("example.org:9105", true, true),
            ("example.org", true, false),
        ] {
            assert_eq!(
                reaches_local_port(grant, programs, &ports),
                reaches,
                "{grant} (programs: {programs})"
            );
        }
    }

    #[test]
    fn restricted_addresses() {
        for a in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "2002:7f00:1::1",
            "fec0::1",
        ] {
            assert!(is_restricted(a.parse().expect("an address")), "{a}");
        }
        for a in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            assert!(!is_restricted(a.parse().expect("an address")), "{a}");
        }
    }

    #[test]
    fn grants_match_host_port_and_wildcards() {
        let g = parse_grant("example.org").expect("parses");
        assert!(g.covers("example.org", 443) && !g.covers("evil.org", 443));
        let g = parse_grant("*.example.org:8443").expect("parses");
        assert!(g.covers("api.example.org", 8443));
        assert!(!g.covers("example.org", 8443) && !g.covers("api.example.org", 443));
        let g = parse_grant("127.0.0.1:8080").expect("parses");
        assert_eq!(g.ip, Some([127, 0, 0, 1].into()));
        assert!(g.covers("127.0.0.1", 8080) && !g.covers("127.0.0.1", 8081));
        assert!(parse_grant("host:notaport").is_none());
    }

    /// `*.` matched every host written with a trailing dot (`http://example.com./`), and
    /// `*.com` every .com host: refused, as `*` is, with what an allow-list can match kept.
    #[test]
    fn grants_that_match_too_much_or_nothing_are_refused() {
        for bad in [
            "*",
            "*.",
            "*.:443",
            "*.com",
            "*.*.org",
            "a.*.org",
            "*",
            "a..b",
            "example.org.",
            ".org",
            "",
            "host:notaport",
        ] {
            assert!(!is_valid_grant(bad), "{bad:?}");
        }
        for good in [
            "example.org",
            "*.example.org",
            "*.example.org:8443",
            "localhost",
            "127.0.0.1:8080",
            "[::1]:80",
            "::1",
        ] {
            assert!(is_valid_grant(good), "{good:?}");
        }
    }
}
