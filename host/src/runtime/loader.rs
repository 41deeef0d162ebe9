//! Finding plugins: the first-party ones built into the binary, and one folder per plugin in
//! the plugin directory (`<dir>/<name>/plugin.toml` beside its component).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use super::Runtime;
use super::error::LoadError;
use super::pins::Pins;
use super::plugin::{Origin, Plugin, PluginSource};
use super::policy::Policy;

/// What loading a set of plugins gave: those that loaded, and why the others did not.
pub struct LoadReport {
    /// Loaded plugins, by name.
    pub plugins: Vec<Plugin>,
    /// One error per plugin (or file) that could not be loaded.
    pub errors: Vec<LoadError>,
    /// Plugins not loaded because they need a capability the policy does not grant
    /// ([`LoadError::NotGranted`]): the expected state of a plugin nobody enabled.
    pub disabled: Vec<LoadError>,
}

/// The first-party plugins built into this binary.
pub fn builtin_sources() -> Vec<PluginSource> {
    crate::builtin::BUILTIN
        .iter()
        .map(|b| PluginSource {
            origin: Origin::Builtin,
            manifest_path: Path::new("<built in>").join(b.dir).join("plugin.toml"),
            manifest: Cow::Borrowed(b.manifest),
            component: Cow::Borrowed(b.component),
            pin: None,
        })
        .collect()
}

/// Read every `<dir>/*/plugin.toml` and its component, each with its pin from `pins` (by the
/// manifest's name). A missing directory has no plugins. Folders that cannot be read become
/// errors in the second list; reading goes on.
pub fn dir_sources(dir: &Path, pins: &Pins) -> (Vec<PluginSource>, Vec<LoadError>) {
    let mut sources = Vec::new();
    let mut errors = Vec::new();
    // ambient authority: the operator's plugin directory.
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (sources, errors),
        Err(e) => {
            errors.push(LoadError::Config {
                path: dir.to_owned(),
                message: format!("cannot read the plugin directory: {e}"),
            });
            return (sources, errors);
        }
    };
    // Dot-folders are install's staging and set-aside copies, never plugins.
    let hidden = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
    };
    let mut folders: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !hidden(p))
        .collect();
    folders.sort();
    for folder in folders {
        let manifest_path = folder.join("plugin.toml");
        let config_err = |message: String| LoadError::Config {
            path: manifest_path.clone(),
            message,
        };
        let text = match std::fs::read_to_string(&manifest_path) {
            Ok(t) => t,
            Err(e) => {
                errors.push(config_err(format!(
                    "cannot read: {e} (every plugin folder needs a plugin.toml)"
                )));
                continue;
            }
        };
        let (component_name, pin) = match toml::from_str::<toml::Table>(&text) {
            Ok(t) => (
                t.get("component")
                    .and_then(|c| c.as_str())
                    .unwrap_or("plugin.wasm")
                    .to_owned(),
                t.get("name")
                    .and_then(|n| n.as_str())
                    .and_then(|n| pins.plugins.get(n))
                    .cloned(),
            ),
            Err(e) => {
                errors.push(config_err(e.to_string()));
                continue;
            }
        };
        if component_name.contains(['/', '\\']) || component_name.starts_with('.') {
            errors.push(config_err(format!(
                "component {component_name:?}: give a file name beside plugin.toml"
            )));
            continue;
        }
        let component_path = folder.join(&component_name);
        match std::fs::read(&component_path) {
            Ok(bytes) => sources.push(PluginSource {
                origin: Origin::Dir(folder.clone()),
                manifest_path,
                manifest: Cow::Owned(text),
                component: Cow::Owned(bytes),
                pin,
            }),
            Err(e) => errors.push(LoadError::Config {
                path: component_path,
                message: format!("cannot read the component: {e}"),
            }),
        }
    }
    (sources, errors)
}

impl Runtime {
    /// Load every source against `policy`. A plugin that fails does not stop the others; two
    /// plugins with one name are both refused after the first (the first keeps its place).
    pub fn load_all(&self, sources: &[PluginSource], policy: &Policy) -> LoadReport {
        let mut plugins: Vec<Plugin> = Vec::new();
        let mut errors = Vec::new();
        let mut disabled = Vec::new();
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        for source in sources {
            match self.load(source, policy) {
                Ok(plugin) => {
                    if let Some(first) = seen.get(&plugin.id.name) {
                        errors.push(LoadError::Duplicate {
                            name: plugin.id.name.clone(),
                            first: first.clone(),
                            second: plugin.origin.to_string(),
                        });
                        continue;
                    }
                    seen.insert(plugin.id.name.clone(), plugin.origin.to_string());
                    plugins.push(plugin);
                }
                Err(e @ LoadError::NotGranted { .. }) => disabled.push(e),
                Err(e) => errors.push(e),
            }
        }
        LoadReport {
            plugins,
            errors,
            disabled,
        }
    }
}
