//! TLS for every outbound HTTPS client (model providers, embeddings, remote MCP servers):
//! rustls with ring, trusting the Mozilla roots built into the binary (webpki-roots), never the
//! machine's certificate store: a host without a CA bundle still works, and a CA added on the
//! machine (or named by `SSL_CERT_FILE`) is not trusted for the daemon's own calls.

use std::sync::{Arc, OnceLock};

/// The one TLS configuration, built once; none if rustls refused it.
fn config() -> Option<Arc<rustls::ClientConfig>> {
    static CONFIG: OnceLock<Option<Arc<rustls::ClientConfig>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map(|b| Arc::new(b.with_root_certificates(roots).with_no_client_auth()))
                .inspect_err(|e| tracing::error!("TLS cannot be configured: {e}"))
                .ok()
        })
        .clone()
}

/// A reqwest client builder using that TLS configuration (if rustls refused it, building the
/// client fails with an error, never a panic).
pub fn client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match config() {
        Some(c) => builder.tls_backend_preconfigured((*c).clone()),
        // An unknown backend: `build()` says so.
        None => builder.tls_backend_preconfigured(()),
    }
}
