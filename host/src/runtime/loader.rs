//! Finding plugins: the first-party ones built into the binary, and one folder per plugin in
//! the plugin directory (`<dir>/<name>/plugin.toml` beside its component).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::error::LoadError;
use super::pins::Pins;
use super::plugin::{Origin, Plugin, PluginSource};
use super::policy::Policy;
use super::{Kind, Runtime};

/// A plugin that did not load and may be a gate (its manifest says so, or its kind cannot be
/// read). While one is missing, verify refuses every action: a gate that is not there must
/// never count as a gate that passed. The operator fixes it, or disables it explicitly with
/// `[plugins.NAME] enabled = false` in `policy.toml`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MissingGate {
    /// The plugin's name: its manifest's, else its folder's.
    pub name: String,
    /// Its version, when its manifest could be read.
    pub version: Option<String>,
    /// Why it did not load.
    pub why: String,
}

/// What loading a set of plugins gave: those that loaded, and why the others did not.
pub struct LoadReport {
    /// Loaded plugins, by name.
    pub plugins: Vec<Plugin>,
    /// One error per plugin (or file) that could not be loaded.
    pub errors: Vec<LoadError>,
    /// Plugins not loaded because they need a capability the policy does not grant
    /// ([`LoadError::NotGranted`]): the expected state of a plugin nobody enabled.
    pub disabled: Vec<LoadError>,
    /// Plugins that failed to load and may be gates: verify refuses while any is listed.
    pub missing_gates: Vec<MissingGate>,
    /// The plugin set: a hash of what loaded (names, versions, component hashes, priorities),
    /// what did not, and the policy. Every journaled verdict names it.
    pub set: String,
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
            problem: None,
        })
        .collect()
}

/// Read every `<dir>/*/plugin.toml` and its component, each with its pin from `pins` (by the
/// manifest's name). A missing directory has no plugins. A folder (or a directory) that cannot
/// be read is still returned, as a source whose `problem` says why: loading it fails, and since
/// its kind may be a gate, verify then refuses until the operator fixes or disables it.
pub fn dir_sources(dir: &Path, pins: &Pins) -> Vec<PluginSource> {
    let mut sources = Vec::new();
    let unreadable = |folder: &Path, manifest: String, message: String| PluginSource {
        origin: Origin::Dir(folder.to_owned()),
        manifest_path: folder.join("plugin.toml"),
        manifest: Cow::Owned(manifest),
        component: Cow::Borrowed(&[]),
        pin: None,
        problem: Some(message),
    };
    // ambient authority: the operator's plugin directory.
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return sources,
        Err(e) => {
            sources.push(unreadable(
                dir,
                String::new(),
                format!("cannot read the plugin directory: {e}"),
            ));
            return sources;
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
    let mut named = std::collections::BTreeSet::new();
    for folder in folders {
        let manifest_path = folder.join("plugin.toml");
        let text = match read_manifest(&manifest_path) {
            Ok(t) => t,
            Err(e) => {
                sources.push(unreadable(
                    &folder,
                    String::new(),
                    format!("cannot read: {e} (every plugin folder needs a plugin.toml)"),
                ));
                continue;
            }
        };
        let table = toml::from_str::<toml::Table>(&text).ok();
        let component_name = table
            .as_ref()
            .and_then(|t| t.get("component"))
            .and_then(|c| c.as_str())
            .unwrap_or("plugin.wasm")
            .to_owned();
        let name = table
            .as_ref()
            .and_then(|t| t.get("name"))
            .and_then(|n| n.as_str());
        named.extend(name.map(str::to_owned));
        let pin = name.and_then(|n| pins.plugins.get(n)).cloned();
        if component_name.contains(['/', '\\']) || component_name.starts_with('.') {
            sources.push(unreadable(
                &folder,
                text,
                format!("component {component_name:?}: give a file name beside plugin.toml"),
            ));
            continue;
        }
        let component_path = folder.join(&component_name);
        match read_plugin_file(&component_path, MAX_COMPONENT_BYTES) {
            Ok(bytes) => sources.push(PluginSource {
                origin: Origin::Dir(folder.clone()),
                manifest_path,
                manifest: Cow::Owned(text),
                component: Cow::Owned(bytes),
                pin,
                problem: None,
            }),
            Err(e) => sources.push(unreadable(
                &folder,
                text,
                format!(
                    "cannot read the component {}: {e}",
                    component_path.display()
                ),
            )),
        }
    }
    // An installed plugin no folder names any more (its folder removed, or its plugin.toml
    // renamed): what it was is unknown, so it counts as a gate that did not load.
    for name in pins.plugins.keys().filter(|n| !named.contains(*n)) {
        sources.push(unreadable(
            &dir.join(name),
            String::new(),
            format!(
                "{name} is installed (pinned in pins.toml) but no plugin folder holds it: its \
                 folder was removed or its plugin.toml names another plugin. Reinstall it \
                 (`passepartout plugin install`), or remove it (`passepartout plugin remove {name}`)"
            ),
        ));
    }
    sources
}

/// The largest `plugin.toml` read.
pub const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// The largest component read (the largest first-party one, `pii` in Python, is ~18 MiB).
pub const MAX_COMPONENT_BYTES: u64 = 256 << 20;

/// Read a plugin's file, `limit` bytes at most: a regular file (a symbolic link to one is
/// followed), opened without waiting, so that a FIFO, a device (`/dev/zero`) or a huge
/// sparse file in a plugin folder is an error naming it rather than a load that never ends
/// or takes all memory.
///
/// # Errors
/// It cannot be opened or read, is not a regular file, or is over `limit`.
pub fn read_plugin_file(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut options = std::fs::File::options();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    let meta = file.metadata()?;
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    if !meta.is_file() {
        return Err(refuse(
            "not a regular file (a FIFO, a device or a directory): make it a plain file".into(),
        ));
    }
    let too_big = |size: u64| {
        refuse(format!(
            "{size} bytes or more, over the limit of {limit} bytes a plugin's file may have"
        ))
    };
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // It may grow while read: never more than the limit.
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big(bytes.len() as u64));
    }
    Ok(bytes)
}

/// A plugin's `plugin.toml` as text ([`read_plugin_file`]).
///
/// # Errors
/// As [`read_plugin_file`], or it is not UTF-8.
pub fn read_manifest(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_plugin_file(path, MAX_MANIFEST_BYTES)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// A short hash naming a plugin set: what loaded, what did not and why, and the policy.
fn set_hash(
    plugins: &[Plugin],
    errors: &[LoadError],
    disabled: &[LoadError],
    policy: &Policy,
) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for p in plugins {
        h.update(format!(
            "plugin {} {} {} {}\n",
            p.id.name, p.id.version, p.sha256, p.priority
        ));
    }
    for e in errors.iter().chain(disabled) {
        h.update(format!("not loaded {e}\n"));
    }
    h.update(toml::to_string(policy).unwrap_or_default());
    hex::encode(&h.finalize()[..8])
}

/// The first tool of `plugin` that another plugin already offers (or a first-party one
/// reserves), with the name of that plugin.
fn taken_tool<'a>(
    plugin: &'a Plugin,
    offered: &'a BTreeMap<String, String>,
) -> Option<(&'a str, &'a str)> {
    plugin.tools.iter().find_map(|t| {
        let owner = offered.get(&t.name)?;
        // A first-party plugin offers its own reserved names.
        (*owner != plugin.id.name || plugin.origin != Origin::Builtin)
            .then_some((t.name.as_str(), owner.as_str()))
    })
}

/// The error for `plugin`, which offers `tool` that plugin `owner` (first-party) already
/// offers or reserves.
fn tool_taken_error(plugin: &Plugin, tool: &str, owner: &str) -> LoadError {
    let reserved = if super::tools::reserved_by(tool) == Some(owner) {
        " (the first-party plugins' tool names are reserved even when they are disabled)"
    } else {
        ""
    };
    LoadError::Invalid {
        plugin: plugin.id.clone(),
        message: format!(
            "offers the tool {tool:?}, which plugin {owner:?} already offers{reserved}; rename \
             the tool, or offer it under another name in policy.toml: \
             [plugins.{name}.tool_aliases] {tool} = \"{name}-{tool}\"",
            name = plugin.id.name
        ),
    }
}

/// The error for `plugin`, not loaded because plugin `other` offers its tool `tool` too.
fn tool_shared_error(plugin: &Plugin, tool: &str, other: &str) -> LoadError {
    LoadError::Invalid {
        plugin: plugin.id.clone(),
        message: format!(
            "offers the tool {tool:?}, which plugin {other:?} offers too, so neither is loaded: \
             which kept it would depend only on the order of their folders' names. Remove one, \
             or offer the tool under another name in policy.toml: \
             [plugins.{name}.tool_aliases] {tool} = \"{name}-{tool}\"",
            name = plugin.id.name
        ),
    }
}

/// Whether a plugin that failed to load may be a gate, and its name and version: from its
/// manifest when it parses, else from the TOML's `kinds` and `name` when those can be read,
/// else its folder's name (and then it may be a gate).
fn missing_gate(source: &PluginSource, why: &LoadError) -> Option<MissingGate> {
    let table = toml::from_str::<toml::Table>(&source.manifest).ok();
    let field = |key: &str| {
        table
            .as_ref()
            .and_then(|t| t.get(key))
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let kinds = table
        .as_ref()
        .and_then(|t| t.get("kinds"))
        .and_then(|k| k.as_array())
        .map(|k| {
            k.iter()
                .map(|v| v.as_str().unwrap_or("?"))
                .collect::<Vec<_>>()
        });
    // Not a gate only when every entry reads as a kind that is not one (`Gate`, `gates`, a
    // number all may have meant one), and never for a changed manifest: its kinds are the
    // changer's word, and what it was installed as is unknown.
    let may_be_gate = matches!(why, LoadError::Tampered { .. })
        || match &kinds {
            Some(k) if !k.is_empty() => !k.iter().all(|k| *k == "tool" || *k == "skill"),
            _ => true,
        };
    if !may_be_gate {
        return None;
    }
    // What a manifest that did not parse says is kept only where it passes the manifest's own
    // rules, and a folder's name is shown on one line: the name is printed on lines of its own
    // ("error: gate NAME did not load"), where a line break would start a forged one.
    let folder = match &source.origin {
        Origin::Dir(p) | Origin::Candidate(p) => p
            .file_name()
            .map(|n| crate::terminal::one_line(&n.to_string_lossy()).into_owned()),
        Origin::Builtin => None,
    };
    Some(MissingGate {
        name: field("name")
            .filter(|n| super::manifest::name_ok(n))
            .or(folder)
            .unwrap_or_else(|| "?".into()),
        version: field("version").filter(|v| version_shaped(v)),
        why: why.to_string(),
    })
}

/// Whether `version` is made of what a semver version is made of (ASCII letters, digits, `.`,
/// `-`, `+`), at most 64 of them: nothing that breaks a line or hides.
fn version_shaped(version: &str) -> bool {
    (1..=64).contains(&version.len())
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
}

impl Runtime {
    /// Load every source against `policy`. A plugin that fails does not stop the others; two
    /// plugins with one name are both refused after the first (the first keeps its place).
    /// Two plugins offering one tool (after the policy's aliases) are both refused: which
    /// loads first is only the order of their folders' names, and a plugin copied in later
    /// must not take a tool from one the operator trusted with it. A tool a first-party plugin
    /// offers or reserves stays its own: only the other plugin is refused.
    pub fn load_all(&self, sources: &[PluginSource], policy: &Policy) -> LoadReport {
        let mut plugins: Vec<Plugin> = Vec::new();
        let mut errors = Vec::new();
        let mut disabled = Vec::new();
        let mut missing_gates = Vec::new();
        // The first-party plugins' names, and their tools' names, are theirs even when they
        // are disabled or not loaded.
        let mut seen: BTreeMap<String, String> = BTreeMap::new();
        let first_party: Vec<String> = crate::builtin::BUILTIN
            .iter()
            .filter_map(|b| super::manifest::Manifest::parse(b.manifest).ok())
            .map(|m| m.name)
            .collect();
        let mut loaded_sha: BTreeMap<String, String> = BTreeMap::new();
        // The source each loaded plugin came from, by name.
        let mut owned_by: BTreeMap<String, &PluginSource> = BTreeMap::new();
        let mut offered: BTreeMap<String, String> = super::tools::RESERVED
            .iter()
            .map(|(plugin, tool)| ((*tool).to_owned(), (*plugin).to_owned()))
            .collect();
        // The other plugins' tools, by name: who offers each.
        let mut shared: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for source in sources {
            let error = match self.load(source, policy) {
                Ok(plugin) => {
                    let first = seen.get(&plugin.id.name).cloned().or_else(|| {
                        (plugin.origin != Origin::Builtin && first_party.contains(&plugin.id.name))
                            .then(|| "a first-party plugin (built in)".to_owned())
                    });
                    if let Some(first) = first {
                        LoadError::Duplicate {
                            name: plugin.id.name.clone(),
                            first,
                            second: plugin.origin.to_string(),
                        }
                    } else if let Some((tool, owner)) = taken_tool(&plugin, &offered) {
                        tool_taken_error(&plugin, tool, owner)
                    } else {
                        owned_by.insert(plugin.id.name.clone(), source);
                        seen.insert(plugin.id.name.clone(), plugin.origin.to_string());
                        loaded_sha.insert(plugin.id.name.clone(), plugin.sha256.clone());
                        for t in &plugin.tools {
                            if plugin.origin == Origin::Builtin {
                                offered.insert(t.name.clone(), plugin.id.name.clone());
                            } else {
                                shared
                                    .entry(t.name.clone())
                                    .or_default()
                                    .push(plugin.id.name.clone());
                            }
                        }
                        plugins.push(plugin);
                        continue;
                    }
                }
                // The operator turned it off: not missing.
                Err(e @ LoadError::DisabledByPolicy { .. }) => {
                    disabled.push(e);
                    continue;
                }
                Err(e) => e,
            };
            // A duplicate's name is held by the plugin that loaded first; if that one is not
            // the same component, the gate that lost the name is missing.
            let same_as_winner = |name: &str| {
                loaded_sha
                    .get(name)
                    .is_some_and(|sha| *sha == super::pins::sha256(&source.component))
            };
            let missing = match &error {
                LoadError::Duplicate { name, .. } if same_as_winner(name) => None,
                _ => missing_gate(source, &error),
            }
            .filter(|m| !policy.disabled(&m.name));
            if let Some(m) = missing {
                missing_gates.push(m);
            }
            match error {
                e @ LoadError::NotGranted { .. } => disabled.push(e),
                e => errors.push(e),
            }
        }
        // Two plugins (not first-party) offering one tool are both refused, whatever the
        // order they loaded in, and so is every other plugin sharing a tool with either.
        let mut clash: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
        for (tool, owners) in shared.iter().filter(|(_, o)| o.len() > 1) {
            for owner in owners {
                let other = owners.iter().find(|o| *o != owner).unwrap_or(owner);
                clash.entry(owner).or_insert((tool, other));
            }
        }
        if !clash.is_empty() {
            let (refused, kept): (Vec<Plugin>, Vec<Plugin>) = std::mem::take(&mut plugins)
                .into_iter()
                .partition(|p| clash.contains_key(p.id.name.as_str()));
            plugins = kept;
            for p in refused {
                let Some((tool, other)) = clash.get(p.id.name.as_str()) else {
                    continue;
                };
                let error = tool_shared_error(&p, tool, other);
                if let Some(m) = owned_by
                    .get(&p.id.name)
                    .and_then(|s| missing_gate(s, &error))
                    .filter(|m| !policy.disabled(&m.name))
                {
                    missing_gates.push(m);
                }
                errors.push(error);
            }
        }
        let set = set_hash(&plugins, &errors, &disabled, policy);
        LoadReport {
            plugins,
            errors,
            disabled,
            missing_gates,
            set,
        }
    }
}

impl LoadReport {
    /// Take out every skill whose `depends_on` cannot be met in this set (a name that is not a
    /// loaded skill, a cycle, or behind either) and list it as that plugin's load error (a
    /// missing gate too, if it is also a gate): left in, it would keep the whole set from
    /// running. For a whole set only: a plugin audited alone would miss every dependency.
    pub fn drop_unordered_skills(&mut self, policy: &Policy) {
        let dropped = unordered_skills(&mut self.plugins);
        if dropped.is_empty() {
            return;
        }
        for (plugin, why) in dropped {
            if plugin.is(Kind::Gate) && !policy.disabled(&plugin.id.name) {
                self.missing_gates.push(MissingGate {
                    name: plugin.id.name.clone(),
                    version: Some(plugin.id.version.clone()),
                    why: why.clone(),
                });
            }
            self.errors.push(LoadError::Invalid {
                plugin: plugin.id.clone(),
                message: why,
            });
        }
        self.set = set_hash(&self.plugins, &self.errors, &self.disabled, policy);
    }
}

/// Take out of `plugins` every skill whose `depends_on` cannot be met: a name that is not a
/// loaded skill, a cycle, or a skill taken out for either. Returns each with why.
fn unordered_skills(plugins: &mut Vec<Plugin>) -> Vec<(Plugin, String)> {
    let skills: BTreeMap<String, Vec<String>> = plugins
        .iter()
        .filter(|p| p.is(Kind::Skill))
        .map(|p| (p.id.name.clone(), p.manifest.depends_on.clone()))
        .collect();
    // Kahn's order: a skill is met once every skill it depends on is.
    let mut met: BTreeSet<&str> = BTreeSet::new();
    loop {
        let next: Vec<&str> = skills
            .iter()
            .filter(|(name, deps)| {
                !met.contains(name.as_str()) && deps.iter().all(|d| met.contains(d.as_str()))
            })
            .map(|(name, _)| name.as_str())
            .collect();
        if next.is_empty() {
            break;
        }
        met.extend(next);
    }
    let why = |deps: &[String]| -> String {
        let unmet: Vec<&str> = deps
            .iter()
            .map(String::as_str)
            .filter(|d| !met.contains(d))
            .collect();
        let (gone, waiting): (Vec<&str>, Vec<&str>) =
            unmet.iter().partition(|d| !skills.contains_key(**d));
        if let Some(d) = gone.first() {
            format!(
                "depends_on names {d:?}, which is not a loaded skill: install and grant it, or \
                 remove it from depends_on in plugin.toml"
            )
        } else {
            format!(
                "depends_on waits on {}, which cannot run: skills run in dependency order, so \
                 a cycle (or a skill behind one, or behind a missing skill) never starts; \
                 break the cycle in depends_on",
                waiting.join(", ")
            )
        }
    };
    let reasons: BTreeMap<String, String> = skills
        .iter()
        .filter(|(name, _)| !met.contains(name.as_str()))
        .map(|(name, deps)| (name.clone(), why(deps)))
        .collect();
    let (out, kept): (Vec<Plugin>, Vec<Plugin>) = std::mem::take(plugins)
        .into_iter()
        .partition(|p| reasons.contains_key(&p.id.name));
    *plugins = kept;
    out.into_iter()
        .map(|p| {
            let why = reasons.get(&p.id.name).cloned().unwrap_or_default();
            (p, why)
        })
        .collect()
}
