//! Pins: a sha256 over each installed plugin's manifest and component, recorded at install in
//! `pins.toml` beside the operator's policy. A plugin whose manifest or component changed
//! since is refused at load.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The pins file: plugin name → sha256 of its component (hex).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Pins {
    /// By plugin name: [`fingerprint`] of its manifest and component.
    #[serde(default)]
    pub plugins: BTreeMap<String, String>,
}

/// Why the pins file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PinsError {
    /// It exists and cannot be read.
    #[error(transparent)]
    Read(#[from] std::io::Error),
    /// It is not a pins file (with line and column).
    #[error(transparent)]
    Parse(#[from] toml::de::Error),
}

impl Pins {
    /// Read `path`; a missing file has no pins.
    ///
    /// # Errors
    /// A [`PinsError`]: the file exists but cannot be read or parsed.
    pub fn load(path: &Path) -> Result<Pins, PinsError> {
        // ambient authority: the operator's own pins file.
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(toml::from_str(&text)?),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Pins::default()),
            Err(e) => Err(e.into()),
        }
    }

    /// Write to `path` (atomically: a temporary file, then rename).
    ///
    /// # Errors
    /// The directory or file cannot be written.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = toml::to_string(self).map_err(std::io::Error::other)?;
        let tmp: PathBuf = path.with_extension("toml.tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }
}

/// sha256 of `bytes`, hex.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The pin `install` records: the [`fingerprint`], then each file's own sha256
/// (`FINGERPRINT manifest:SHA component:SHA`), so that a mismatch can say which file changed.
pub fn record(manifest: &str, component: &[u8]) -> String {
    format!(
        "{} manifest:{} component:{}",
        fingerprint(manifest, component),
        sha256(manifest.as_bytes()),
        sha256(component)
    )
}

/// Check `pin` against the files now. A pin from before per-file hashes (the fingerprint
/// alone) still checks; it only cannot say which file changed.
///
/// # Errors
/// What changed (`"plugin.toml"`, `"the component"`, both, or either when the pin cannot
/// tell), with the fingerprint found.
pub fn check(pin: &str, manifest: &str, component: &[u8]) -> Result<(), (String, String)> {
    let found = fingerprint(manifest, component);
    let mut parts = pin.split_whitespace();
    if parts.next() == Some(found.as_str()) {
        return Ok(());
    }
    let part = |name: &str| {
        pin.split_whitespace()
            .find_map(|p| p.strip_prefix(name))
            .map(str::to_owned)
    };
    let what = match (part("manifest:"), part("component:")) {
        (Some(m), Some(c)) => {
            let manifest_changed = m != sha256(manifest.as_bytes());
            let component_changed = c != sha256(component);
            match (manifest_changed, component_changed) {
                (true, true) => "plugin.toml and its component",
                (true, false) => "plugin.toml",
                (false, true) => "its component",
                // The pin's own fingerprint does not match its parts: the pin was edited.
                (false, false) => "its pin in pins.toml",
            }
        }
        _ => "plugin.toml or its component",
    };
    Err((what.to_owned(), found))
}

/// What a pin records: sha256 over the manifest and the component (each length-prefixed), so
/// that widening a manifest after install breaks the pin as surely as swapping the component.
pub fn fingerprint(manifest: &str, component: &[u8]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for part in [manifest.as_bytes(), component] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part);
    }
    hex::encode(h.finalize())
}
