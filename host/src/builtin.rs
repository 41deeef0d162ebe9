//! The first-party plugins, compiled from `plugins/` by the build script and embedded here so
//! that a fresh install has them with no setup.

/// One embedded plugin.
pub struct Builtin {
    /// Its folder under `plugins/`.
    pub dir: &'static str,
    /// Its `plugin.toml`.
    pub manifest: &'static str,
    /// Its component.
    pub component: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));
