//! `passepartout plugin install | remove | update`: copy a plugin into the plugin directory and
//! pin its sha256, so that a component changed afterwards is refused at load.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::runtime::manifest::Manifest;
use crate::runtime::pins::{Pins, record};
use crate::runtime::plugin::{Origin, PluginSource};

/// Why an install, removal or update failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The plugin to install could not be read.
    #[error("{path}: {source}")]
    Read {
        /// What was read.
        path: PathBuf,
        /// Why it failed.
        #[source]
        source: ReadError,
    },
    /// Installing would replace a plugin (use update) or the plugin is not installed.
    #[error("{0}")]
    State(String),
    /// The plugin directory or pins file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// What.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Why a plugin's files or the pins could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be read.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The manifest is not one.
    #[error(transparent)]
    Manifest(#[from] crate::runtime::manifest::ManifestError),
    /// The pins file cannot be used.
    #[error(transparent)]
    Pins(#[from] crate::runtime::pins::PinsError),
}

/// Read a plugin from `path`: a folder holding `plugin.toml` and its component, or the
/// `plugin.toml` itself.
///
/// # Errors
/// The manifest or component cannot be read or the manifest is invalid.
pub fn read_source(path: &Path) -> Result<(PluginSource, Manifest), InstallError> {
    let manifest_path = if path.is_dir() {
        path.join("plugin.toml")
    } else {
        path.to_owned()
    };
    let read_err = |p: &Path, source: ReadError| InstallError::Read {
        path: p.to_owned(),
        source,
    };
    let text = crate::runtime::loader::read_manifest(&manifest_path)
        .map_err(|e| read_err(&manifest_path, e.into()))?;
    let manifest = Manifest::parse(&text).map_err(|e| read_err(&manifest_path, e.into()))?;
    let folder = manifest_path.parent().unwrap_or(Path::new(".")).to_owned();
    let component_path = folder.join(&manifest.component);
    let bytes = crate::runtime::loader::read_plugin_file(
        &component_path,
        crate::runtime::loader::MAX_COMPONENT_BYTES,
    )
    .map_err(|e| read_err(&component_path, e.into()))?;
    let source = PluginSource {
        origin: Origin::Candidate(folder),
        manifest_path,
        manifest: Cow::Owned(text),
        component: Cow::Owned(bytes),
        pin: None,
        problem: None,
    };
    Ok((source, manifest))
}

/// Copy `source` into `plugin_dir/<name>/` and pin its sha256 in `pins_file`. With `replace`,
/// an installed plugin of that name is replaced (update); without, it is an error.
///
/// # Errors
/// Already installed (without `replace`), not installed (with it), or a write failed.
pub fn install(
    source: &PluginSource,
    manifest: &Manifest,
    plugin_dir: &Path,
    pins_file: &Path,
    replace: bool,
) -> Result<PathBuf, InstallError> {
    let first_party = crate::builtin::BUILTIN
        .iter()
        .filter_map(|b| Manifest::parse(b.manifest).ok())
        .any(|m| m.name == manifest.name);
    if first_party {
        return Err(InstallError::State(format!(
            "{0:?} is the name of a first-party plugin, which is built in: rename the plugin \
             (its plugin.toml `name`) to install it beside it",
            manifest.name
        )));
    }
    let target = plugin_dir.join(&manifest.name);
    match (target.exists(), replace) {
        (true, false) => {
            return Err(InstallError::State(format!(
                "{} is already installed at {}; use `passepartout plugin update {} PATH`",
                manifest.name,
                target.display(),
                manifest.name
            )));
        }
        (false, true) => {
            return Err(InstallError::State(format!(
                "{} is not installed; use `passepartout plugin install PATH`",
                manifest.name
            )));
        }
        _ => {}
    }
    let write_err = |path: &Path| {
        let path = path.to_owned();
        move |source| InstallError::Write { path, source }
    };
    // Stage beside the target, then swap, so a failed copy never leaves half a plugin.
    let staging = plugin_dir.join(format!(".staging-{}", manifest.name));
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(write_err(&staging))?;
    std::fs::write(staging.join("plugin.toml"), source.manifest.as_bytes())
        .map_err(write_err(&staging))?;
    std::fs::write(staging.join(&manifest.component), &source.component)
        .map_err(write_err(&staging))?;
    let mut pins = Pins::load(pins_file).map_err(|e| InstallError::Read {
        path: pins_file.to_owned(),
        source: e.into(),
    })?;
    pins.plugins.insert(
        manifest.name.clone(),
        record(&source.manifest, &source.component),
    );
    // Swap: the old copy is set aside, not deleted, until the new one and its pin are in place.
    let old = plugin_dir.join(format!(".old-{}", manifest.name));
    if replace {
        let _ = std::fs::remove_dir_all(&old);
        std::fs::rename(&target, &old).map_err(write_err(&target))?;
    }
    if let Err(e) = std::fs::rename(&staging, &target) {
        if replace {
            let _ = std::fs::rename(&old, &target);
        }
        return Err(write_err(&target)(e));
    }
    pins.save(pins_file).map_err(write_err(pins_file))?;
    let _ = std::fs::remove_dir_all(&old);
    Ok(target)
}

/// Remove the installed plugin `name` and its pin.
///
/// # Errors
/// Not installed, or it cannot be removed.
pub fn remove(name: &str, plugin_dir: &Path, pins_file: &Path) -> Result<(), InstallError> {
    let target = plugin_dir.join(name);
    if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') || !target.is_dir() {
        return Err(InstallError::State(format!(
            "no plugin named {name:?} is installed in {}",
            plugin_dir.display()
        )));
    }
    std::fs::remove_dir_all(&target).map_err(|source| InstallError::Write {
        path: target.clone(),
        source,
    })?;
    let mut pins = Pins::load(pins_file).map_err(|e| InstallError::Read {
        path: pins_file.to_owned(),
        source: e.into(),
    })?;
    pins.plugins.remove(name);
    pins.save(pins_file).map_err(|source| InstallError::Write {
        path: pins_file.to_owned(),
        source,
    })
}
