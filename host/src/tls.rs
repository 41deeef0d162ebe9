//! TLS for every outbound HTTPS client (model providers, embeddings, remote MCP servers):
//! rustls with ring as its crypto provider, installed once for the process before the first
//! client is built (reqwest is built without a provider of its own).

/// Install ring as the process's rustls crypto provider, once.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when another provider is already installed: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder, the crypto provider installed.
pub fn client_builder() -> reqwest::ClientBuilder {
    install();
    reqwest::Client::builder()
}
