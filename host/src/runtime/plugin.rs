//! A loaded plugin: its manifest, effective limits and grants, compiled component and one
//! `InstancePre` per role. Calls are in [`super::call`].

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::Linker;

use super::Runtime;
use super::bindings::{gate, hard, skill, tool, types};
use super::capabilities::Grants;
use super::error::{ConfigError, LoadError, PluginId};
use super::limits::Limits;
use super::manifest::{Kind, Manifest};
use super::policy::Policy;
use super::state::{GateData, ToolData};

/// The WIT package version this host links.
pub const WIT_VERSION: &str = "0.1.1";

/// The WIT package versions whose components this host loads: every 0.1 release up to its
/// own (0.1.0 components lack only `action-context`, which they cannot call).
pub const SUPPORTED_WIT_VERSIONS: &[&str] = &["0.1.0", "0.1.1"];

/// Whether a component built against `passepartout:plugin@version` loads here.
pub fn wit_supported(version: &str) -> bool {
    SUPPORTED_WIT_VERSIONS.contains(&version)
}

/// Where a plugin came from.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "kind", content = "path", rename_all = "snake_case")]
pub enum Origin {
    /// Built into the `passepartout` binary (the first-party plugins).
    Builtin,
    /// A folder in the plugin directory.
    Dir(PathBuf),
    /// A plugin about to be installed or compared (`plugin install`, `audit diff`).
    Candidate(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Builtin => write!(f, "built in"),
            Origin::Dir(p) | Origin::Candidate(p) => write!(f, "{}", p.display()),
        }
    }
}

/// A plugin not yet loaded: its manifest text and component bytes.
#[derive(Clone)]
pub struct PluginSource {
    /// Where it came from.
    pub origin: Origin,
    /// The manifest's path, for error messages.
    pub manifest_path: PathBuf,
    /// The manifest, as TOML.
    pub manifest: Cow<'static, str>,
    /// The component's bytes.
    pub component: Cow<'static, [u8]>,
    /// The pin recorded at install ([`super::pins::fingerprint`]), if any; a plugin that no
    /// longer matches is refused.
    pub pin: Option<String>,
    /// Why the source could not be read (an unreadable manifest, component or folder): loading
    /// it fails with this.
    pub problem: Option<String>,
}

/// A loaded plugin, ready to call.
pub struct Plugin {
    /// Name and version.
    pub id: PluginId,
    /// The manifest as written.
    pub manifest: Manifest,
    /// Priority (the policy's, else the manifest's).
    pub priority: i32,
    /// The limits it runs under.
    pub limits: Limits,
    /// Its configuration (manifest `[config]` with the policy's keys over it), as JSON.
    pub config: std::sync::Arc<str>,
    /// The memory store and access its tool and skill calls get, when granted.
    pub(crate) memory: Option<super::capabilities::memory::MemoryCtx>,
    /// What its tool and skill calls can reach.
    pub grants: Grants,
    /// Where it came from.
    pub origin: Origin,
    /// sha256 of the component.
    pub sha256: String,
    /// Whether the compiled component came from the on-disk cache.
    pub from_cache: bool,
    /// The gate's own description, when it is a gate.
    pub gate_info: Option<types::GateInfo>,
    /// The tools it offers, when it is a tool, under the names they are offered by (a
    /// policy alias replaces the plugin's own name).
    pub tools: Vec<types::ToolInfo>,
    /// Offered name -> the plugin's own name, for tools offered under a policy alias.
    pub tool_aliases: std::collections::BTreeMap<String, String>,
    /// Offered name -> where its arguments' effects come from (its schema's `x-effect`).
    pub effect_specs: std::collections::BTreeMap<String, super::effects::EffectSpec>,
    /// The skill's description, when it is a skill.
    pub skill_info: Option<types::SkillInfo>,
    /// Calls made, failures and time spent, since load.
    pub telemetry: Telemetry,
    pub(crate) engine: Engine,
    /// Keeps the epoch ticker running while this plugin lives, even after its Runtime is
    /// dropped: without ticks, deadlines would never fire.
    _ticker: std::sync::Arc<super::engine::EpochTicker>,
    /// The tools' share of the instance pool ([`super::share`]).
    pub(crate) share: std::sync::Arc<super::share::Share>,
    /// What one of its instances holds in the pool (core instances, memories, tables).
    pub footprint: super::share::Footprint,
    /// The executable its programs start through (see [`super::capabilities::confine`]).
    pub(crate) trampoline: Option<std::sync::Arc<PathBuf>>,
    pub(crate) gate: Option<gate::GatePluginPre<GateData>>,
    pub(crate) tool: Option<tool::ToolPluginPre<ToolData>>,
    pub(crate) skill: Option<skill::SkillPluginPre<ToolData>>,
    /// The same roles with async exports, when calls have hard deadlines (else `None`).
    pub(crate) hard: Option<HardRoles>,
}

/// A plugin's roles, prepared for async calls ([`super::Deadlines::Hard`]).
pub(crate) struct HardRoles {
    pub(crate) gate: Option<hard::gate::GatePluginPre<GateData>>,
    pub(crate) tool: Option<hard::tool::ToolPluginPre<ToolData>>,
    pub(crate) skill: Option<hard::skill::SkillPluginPre<ToolData>>,
}

impl HardRoles {
    /// The async-export view of the same prepared instances.
    fn of(
        gate: &Option<gate::GatePluginPre<GateData>>,
        tool: &Option<tool::ToolPluginPre<ToolData>>,
        skill: &Option<skill::SkillPluginPre<ToolData>>,
    ) -> wasmtime::Result<HardRoles> {
        Ok(HardRoles {
            gate: gate
                .as_ref()
                .map(|p| hard::gate::GatePluginPre::new(p.instance_pre().clone()))
                .transpose()?,
            tool: tool
                .as_ref()
                .map(|p| hard::tool::ToolPluginPre::new(p.instance_pre().clone()))
                .transpose()?,
            skill: skill
                .as_ref()
                .map(|p| hard::skill::SkillPluginPre::new(p.instance_pre().clone()))
                .transpose()?,
        })
    }
}

/// Counters of a plugin's calls (gate checks, tool calls, skill triggers and prompts).
#[derive(Debug, Default)]
pub struct Telemetry {
    executions: AtomicU64,
    failures: AtomicU64,
    total_micros: AtomicU64,
    fuel: AtomicU64,
    last_error: std::sync::Mutex<Option<String>>,
}

/// A snapshot of [`Telemetry`], as `passepartout plugins --json` prints it.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct TelemetrySnapshot {
    /// Calls made.
    pub executions: u64,
    /// Calls that failed (trap, limit, tool error).
    pub failures: u64,
    /// Time spent in calls, microseconds.
    pub total_micros: u64,
    /// Fuel the gate checks and tool calls used (instantiation included).
    #[serde(default)]
    pub fuel: u64,
    /// The last failure, as its error says it (at most 500 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// The most of a failure's text kept as a plugin's last error.
const LAST_ERROR_CHARS: usize = 500;

impl Telemetry {
    /// Count one call that started at `start` and ended as `result`.
    pub fn record<T, E: std::fmt::Display>(&self, start: Instant, result: &Result<T, E>) {
        self.executions.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = result {
            self.failures.fetch_add(1, Ordering::Relaxed);
            let said: String = e.to_string().chars().take(LAST_ERROR_CHARS).collect();
            *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(said);
        }
        let micros = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.total_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Count `used` units of fuel.
    pub fn fuel(&self, used: u64) {
        // Saturating: a sum that would wrap says "very much", not "little".
        let _ = self
            .fuel
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                Some(f.saturating_add(used))
            });
    }

    /// The counters now.
    pub fn snapshot(&self) -> TelemetrySnapshot {
        TelemetrySnapshot {
            executions: self.executions.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            total_micros: self.total_micros.load(Ordering::Relaxed),
            fuel: self.fuel.load(Ordering::Relaxed),
            last_error: self
                .last_error
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        }
    }
}

impl Plugin {
    /// Whether the plugin takes `kind`.
    pub fn is(&self, kind: Kind) -> bool {
        self.manifest.kinds.contains(&kind)
    }
}

/// What a plugin is loaded for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Purpose {
    /// To be called: only what the policy grants is linked, and a plugin it turns off is
    /// refused.
    Run,
    /// Only to read the tools it would offer once granted ([`Runtime::offered_tools`]).
    Describe,
}

impl Runtime {
    /// Load one plugin: parse and check its manifest, resolve its limits and grants against
    /// `policy`, compile (or load from the cache), check its exports, link each role, and ask
    /// each role to describe itself.
    ///
    /// # Errors
    /// A [`LoadError`] naming the plugin (or the manifest file) and what to fix.
    pub fn load(&self, source: &PluginSource, policy: &Policy) -> Result<Plugin, LoadError> {
        self.load_for(source, policy, Purpose::Run)
    }

    /// The names `source`'s tools would be offered under (after the policy's aliases) once
    /// the policy grants what it imports and does not turn it off: read as [`Runtime::load`]
    /// reads them, but with `wasi:http`, `process` and `memory` linked whether granted or
    /// not. Nothing of the plugin runs but `describe`, which runs as it always does, holding
    /// no capability at all (no mount, variable, host, program or memory), and the plugin is
    /// dropped after. For `plugin install` and `update`: a tool a plugin would take from an
    /// installed one must be seen before anyone grants it.
    ///
    /// # Errors
    /// As [`Runtime::load`], but for a missing grant or `enabled = false`.
    pub fn offered_tools(
        &self,
        source: &PluginSource,
        policy: &Policy,
    ) -> Result<Vec<String>, LoadError> {
        let plugin = self.load_for(source, policy, Purpose::Describe)?;
        Ok(plugin.tools.iter().map(|t| t.name.clone()).collect())
    }

    /// The tools' linker with every interface that is linked only when granted linked all
    /// the same, for [`Purpose::Describe`]: its stores grant nothing, so a call through one
    /// is denied as it is for a granted plugin's `describe`.
    fn describe_linker(&self) -> anyhow::Result<Linker<ToolData>> {
        use super::capabilities::{memory, net, process};
        let mut linker = self.tool_linker.clone();
        net::link(&mut linker, self.deadlines == super::Deadlines::Hard)
            .map_err(|e| anyhow::anyhow!("linking wasi:http: {e}"))?;
        process::link(&mut linker, |d: &mut ToolData| &mut d.process)
            .map_err(|e| anyhow::anyhow!("linking the process interface: {e}"))?;
        memory::link(&mut linker, |d: &mut ToolData| &mut d.memory)
            .map_err(|e| anyhow::anyhow!("linking the memory interface: {e}"))?;
        Ok(linker)
    }

    fn load_for(
        &self,
        source: &PluginSource,
        policy: &Policy,
        purpose: Purpose,
    ) -> Result<Plugin, LoadError> {
        if let Some(problem) = &source.problem {
            return Err(LoadError::Config {
                path: source.manifest_path.clone(),
                source: Box::new(ConfigError::Problem(problem.clone())),
            });
        }
        let manifest = Manifest::parse(&source.manifest).map_err(|e| LoadError::Config {
            path: source.manifest_path.clone(),
            source: Box::new(e.into()),
        })?;
        let id = PluginId {
            name: manifest.name.clone(),
            version: manifest.version.clone(),
        };
        let invalid = |message: String| LoadError::Invalid {
            plugin: id.clone(),
            message,
        };
        let component_err = |message: String| LoadError::Component {
            plugin: id.clone(),
            message,
        };
        // First: nothing a changed manifest says (its kinds, asks, limits) is acted on, nor
        // decides how its failure counts.
        if let Some(pin) = &source.pin
            && let Err((what, found)) = super::pins::check(pin, &source.manifest, &source.component)
        {
            return Err(LoadError::Tampered {
                plugin: id,
                what,
                pinned: pin.clone(),
                found,
            });
        }
        if purpose == Purpose::Run && policy.disabled(&manifest.name) {
            return Err(LoadError::DisabledByPolicy { plugin: id });
        }
        let entry = policy.for_plugin(&manifest.name);
        let builtin = source.origin == Origin::Builtin;
        let granted = super::limits::granted(&manifest.name, builtin, &entry.limits);
        let mut limits =
            Limits::resolve(&manifest.kinds, &manifest.limits, &granted).map_err(invalid)?;
        limits.seed_timeouts = builtin;
        let grants = Grants::resolve(
            &id,
            &manifest.kinds,
            &manifest.capabilities,
            entry,
            &self.protected,
        )?;

        let sha256 = crate::builtin::sha256(&source.component);
        let compiled = self
            .cache
            .load(&self.engine, &source.component, sha256, &manifest.name)
            .map_err(|e| component_err(not_a_component(&source.component, &e)))?;
        let component = compiled.component;
        check_exports(&self.engine, &component, &manifest.kinds).map_err(invalid)?;
        let footprint = super::inspect::footprint(&component, &source.component);
        let roles = [
            (Kind::Gate, super::share::Role::Gate),
            (Kind::Tool, super::share::Role::Tool),
            (Kind::Skill, super::share::Role::Tool),
        ];
        for (kind, role) in roles {
            if manifest.kinds.contains(&kind) {
                super::share::Share::fits(role, footprint).map_err(component_err)?;
            }
        }

        let link_err = |e: wasmtime::Error| {
            component_err(format!(
                "cannot be linked: {e:#}. It imports an interface this host does not provide to \
                 its role; `passepartout plugins` lists what each plugin is granted"
            ))
        };
        let gate_pre = if manifest.kinds.contains(&Kind::Gate) {
            let mut linker: Linker<GateData> = self.gate_linker.clone();
            // Everything but our host interface traps: a gate holds no capability at all.
            super::stubs::define_foreign_imports_as_traps(&mut linker, &self.engine, &component)
                .map_err(link_err)?;
            let pre = linker.instantiate_pre(&component).map_err(link_err)?;
            Some(gate::GatePluginPre::new(pre).map_err(link_err)?)
        } else {
            None
        };
        // Tools and skills get WASI (denying all but their grants, per call) and our host
        // interface. An import beyond those is refused here, at link time. (Not stubbed with
        // `define_unknown_imports_as_traps`: that shadows the semver-compatible WASI instances,
        // so a guest built against wasi@0.2.6 would find its calls trapping.)
        if purpose == Purpose::Run {
            check_granted(
                &id,
                &super::inspect::interfaces(&self.engine, &component).imports,
                &grants,
            )?;
        }
        let memory = match grants.memory {
            super::manifest::MemoryAccess::None => None,
            access => Some(super::capabilities::memory::MemoryCtx {
                store: self
                    .memory
                    .clone()
                    .ok_or_else(|| LoadError::Unenforceable {
                        plugin: id.clone(),
                        grant: format!("memory access {access:?}"),
                        why: "this runtime was started without a memory store".into(),
                    })?,
                access,
            }),
        };
        let tool_linker = &match purpose {
            Purpose::Run => self.linker_for(&grants),
            Purpose::Describe => self.describe_linker(),
        }
        .map_err(|e| component_err(format!("cannot link its grants: {e}")))?;
        let tool_pre = if manifest.kinds.contains(&Kind::Tool) {
            let pre = tool_linker.instantiate_pre(&component).map_err(link_err)?;
            Some(tool::ToolPluginPre::new(pre).map_err(link_err)?)
        } else {
            None
        };
        let skill_pre = if manifest.kinds.contains(&Kind::Skill) {
            let pre = tool_linker.instantiate_pre(&component).map_err(link_err)?;
            Some(skill::SkillPluginPre::new(pre).map_err(link_err)?)
        } else {
            None
        };

        let config = config_json(&manifest.config, &entry.config).map_err(invalid)?;
        let mut plugin = Plugin {
            id: id.clone(),
            config,
            memory,
            priority: entry.priority.unwrap_or(manifest.priority),
            manifest,
            limits,
            grants,
            origin: source.origin.clone(),
            sha256: compiled.sha256,
            from_cache: compiled.from_cache,
            gate_info: None,
            tools: Vec::new(),
            tool_aliases: Default::default(),
            effect_specs: Default::default(),
            skill_info: None,
            telemetry: Telemetry::default(),
            engine: self.engine.clone(),
            _ticker: self.ticker.clone(),
            share: self.share.clone(),
            footprint,
            trampoline: self.trampoline.clone(),
            hard: (self.deadlines == super::Deadlines::Hard)
                .then(|| HardRoles::of(&gate_pre, &tool_pre, &skill_pre))
                .transpose()
                .map_err(link_err)?,
            gate: gate_pre,
            tool: tool_pre,
            skill: skill_pre,
        };
        let describe_err =
            |e: super::error::PluginError| component_err(format!("describe failed: {e}"));
        if plugin.gate.is_some() {
            let info = plugin.describe_gate().map_err(describe_err)?;
            check_description(&info.description).map_err(invalid)?;
            plugin.gate_info = Some(info);
        }
        if plugin.tool.is_some() {
            let mut tools = plugin.describe_tools().map_err(describe_err)?;
            super::tools::check(&tools).map_err(invalid)?;
            plugin.tool_aliases =
                super::tools::alias(&mut tools, &entry.tool_aliases).map_err(invalid)?;
            for t in &tools {
                let schema = serde_json::from_str(&t.parameters).unwrap_or_default();
                let spec = super::effects::EffectSpec::from_schema(&schema)
                    .map_err(|why| invalid(format!("tool {:?}: {why}", t.name)))?;
                plugin.effect_specs.insert(t.name.clone(), spec);
            }
            plugin.tools = tools;
        }
        if plugin.skill.is_some() {
            let info = plugin.describe_skill().map_err(describe_err)?;
            check_description(&info.description).map_err(invalid)?;
            plugin.skill_info = Some(info);
        }
        Ok(plugin)
    }
}

/// A gate's or a skill's description is held to a tool's cap ([`super::tools::MAX_DESCRIPTION`]):
/// one sentence, kept for as long as the plugin is loaded.
///
/// # Errors
/// Its length and the cap, when it is longer.
fn check_description(description: &str) -> Result<(), String> {
    let max = super::tools::MAX_DESCRIPTION;
    if description.len() > max {
        return Err(format!(
            "describe gave a description of {} bytes; at most {max}",
            description.len()
        ));
    }
    Ok(())
}

/// Why `bytes` did not compile, in words that say what to do: an empty file, something that
/// is not WebAssembly, a core module where a component is needed, or a component cut short.
fn not_a_component(bytes: &[u8], err: &wasmtime::Error) -> String {
    const MAGIC: &[u8] = b"\0asm";
    // The 4 bytes after the magic: a core module's version, or a component's version + layer.
    const CORE_MODULE: [u8; 4] = [1, 0, 0, 0];
    const COMPONENT: [u8; 4] = [0x0d, 0, 1, 0];
    match bytes {
        [] => "the component file is empty (0 bytes): rebuild it, or copy it again".into(),
        b if !b.starts_with(MAGIC) => format!(
            "is not WebAssembly ({} bytes without the \\0asm header): point `component` in \
             plugin.toml at the .wasm the build produced",
            b.len()
        ),
        b if b.get(4..8) == Some(&CORE_MODULE[..]) => "is a core WebAssembly module, not a \
             component: build it for wasm32-wasip2 (rustc makes a component), or wrap it with \
             `wasm-tools component new`"
            .into(),
        b if b.get(4..8) == Some(&COMPONENT[..])
            && format!("{err:#}").contains("unexpected end") =>
        {
            format!(
                "is a WebAssembly component cut short ({} bytes): copy it again",
                b.len()
            )
        }
        _ => format!("does not compile as a WebAssembly component: {err:#}"),
    }
}

/// A component importing `process`, `memory` or `wasi:http` without the matching grant is
/// disabled, with what to grant; the linker would refuse it anyway, less clearly.
fn check_granted(id: &PluginId, imports: &[String], grants: &Grants) -> Result<(), LoadError> {
    match super::capabilities::factor::not_granted(imports, grants, &id.name) {
        None => Ok(()),
        Some(missing) => Err(LoadError::NotGranted {
            plugin: id.clone(),
            capability: missing.capability.into(),
            hint: missing.hint,
        }),
    }
}

/// The manifest's `[config]` with every key of the policy's laid over it, as a JSON object.
pub(crate) fn config_json(
    manifest: &toml::Table,
    policy: &toml::Table,
) -> Result<std::sync::Arc<str>, String> {
    let mut merged = manifest.clone();
    for (k, v) in policy {
        merged.insert(k.clone(), v.clone());
    }
    serde_json::to_string(&merged)
        .map(std::sync::Arc::from)
        .map_err(|e| format!("[config] cannot be turned into JSON: {e}"))
}

/// The component must export exactly the roles its manifest lists, at a WIT version we link.
fn check_exports(
    engine: &Engine,
    component: &wasmtime::component::Component,
    kinds: &[Kind],
) -> Result<(), String> {
    check_export_names(
        &super::inspect::interfaces(engine, component).exports,
        kinds,
    )
}

/// The component's exports must be exactly the roles its manifest lists, at the WIT version
/// this host links. Shared with the audit.
///
/// # Errors
/// What does not match, and what to do.
pub(crate) fn check_export_names(exports: &[String], kinds: &[Kind]) -> Result<(), String> {
    for name in exports {
        if let Some(rest) = name.strip_prefix("passepartout:plugin/")
            && let Some((_, version)) = rest.split_once('@')
            && !wit_supported(version)
        {
            return Err(format!(
                "exports {name}, built against passepartout:plugin@{version}; this host links \
                 @{} (and loads {}). Rebuild it with a matching passepartout-sdk, or upgrade \
                 passepartout if the plugin is newer.",
                WIT_VERSION,
                SUPPORTED_WIT_VERSIONS.join(", ")
            ));
        }
    }
    let exported = |kind: Kind| {
        exports.iter().any(|e| {
            e.split_once('@')
                .is_some_and(|(name, v)| name == kind.interface() && wit_supported(v))
        })
    };
    let all = [Kind::Gate, Kind::Tool, Kind::Skill];
    if let Some(kind) = all.into_iter().find(|k| kinds.contains(k) && !exported(*k)) {
        return Err(format!(
            "plugin.toml lists kind {kind:?} but the component does not export {} (it exports: {})",
            kind.interface(),
            if exports.is_empty() {
                "nothing".to_owned()
            } else {
                exports.join(", ")
            }
        ));
    }
    if let Some(kind) = all.into_iter().find(|k| !kinds.contains(k) && exported(*k)) {
        return Err(format!(
            "the component exports {} but plugin.toml does not list {kind:?} in kinds",
            kind.interface()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_a_component_is_named() {
        let err = wasmtime::Error::msg("unexpected end-of-file (at offset 0x9)");
        assert!(not_a_component(b"", &err).contains("empty"));
        assert!(not_a_component(b"garbage", &err).contains("is not WebAssembly"));
        let core = b"\0asm\x01\0\0\0";
        assert!(not_a_component(core, &err).contains("core WebAssembly module"));
        let cut = b"\0asm\x0d\0\x01\0\x01";
        assert!(not_a_component(cut, &err).contains("cut short"));
    }

    #[test]
    fn every_0_1_release_up_to_ours_loads_and_nothing_newer() {
        let gate = |v: &str| vec![format!("passepartout:plugin/gate@{v}")];
        assert!(check_export_names(&gate("0.1.0"), &[Kind::Gate]).is_ok());
        assert!(check_export_names(&gate("0.1.1"), &[Kind::Gate]).is_ok());
        for newer in ["0.1.9", "0.2.0", "1.0.0"] {
            let err = check_export_names(&gate(newer), &[Kind::Gate]).expect_err(newer);
            assert!(
                err.contains(newer) && err.contains("upgrade passepartout"),
                "{err}"
            );
        }
    }
}
