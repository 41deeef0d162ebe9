//! The [`Agent`], assembled in one place: the CLI's one-shot commands (`act`, `ask`,
//! `approve`...), the daemon at boot and on every reload, and the benches all build theirs
//! here, from the same [`Places`], so that what is measured and tested is what users run.
//!
//! An agent is immutable once assembled: plugins, ordered gates (with a refusing stand-in for
//! each gate that failed to load), actuators, the provider cascade, the journal, the memory
//! store and the settings. The daemon swaps a whole new one in on reload
//! ([`crate::daemon::reload`]); a request already running finishes on the one it started with.
//!
//! The steps, each usable alone (the audit reads a [`Setup`] without running a plugin):
//! [`Places::setup`] (runtime, policy, pins, plugin sources, settings) → [`Setup::load`]
//! ([`Loaded`]) → [`Loaded::assemble`] ([`Agent`]).

use std::path::PathBuf;
use std::sync::Arc;

pub use crate::pipeline::Agent;

use crate::journal::Journal;
use crate::memory::Memory;
use crate::pipeline::{Actuator, PipelineConfig, PipelineError, Provider};
use crate::providers::Cascade;
use crate::providers::spend::SpendLog;
use crate::runtime::pins::Pins;
use crate::runtime::{LoadReport, PluginSource, Policy, Runtime, RuntimeConfig, loader};
use crate::settings::{ConfigError, ConfigFile};

/// Why an agent could not be assembled. Each names the file it is about.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `passepartout.toml` cannot be read or parsed.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// There is no data directory and no `--db`.
    #[error("no database path: pass --db FILE (or set XDG_DATA_HOME or HOME)")]
    NoDatabase,
    /// The database (journal, approvals, spend) cannot be opened.
    #[error("cannot open the database {path}")]
    Database {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rusqlite::Error,
    },
    /// The memory store cannot be opened.
    #[error("cannot open the memory store in {path}")]
    Memory {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::memory::MemoryError,
    },
    /// The policy cannot be read or parsed.
    #[error(transparent)]
    Policy(#[from] crate::runtime::LoadError),
    /// The pins file cannot be read.
    #[error("cannot read the pins {path}: {source}")]
    Pins {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::runtime::pins::PinsError,
    },
    /// The WebAssembly engine cannot be set up.
    #[error("cannot set up the plugin runtime")]
    Runtime(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// Skill dependencies name a missing skill or form a cycle.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// A policy file or plugin directory named explicitly (an option or its variable) is not
    /// there: a typo would otherwise mean "nothing granted" or "no plugins", silently.
    #[error(
        "the {what} {path} does not exist (given with --{option} or its environment variable); \
         leave it out to use the default place"
    )]
    Missing {
        /// `policy file` or `plugin directory`.
        what: &'static str,
        /// The option.
        option: &'static str,
        /// The path given.
        path: PathBuf,
    },
}

/// Where an agent's parts come from. Each `None` is the default place ([`crate::dirs`]).
#[derive(Clone, Default)]
pub struct Places {
    /// Third-party plugins, one folder each.
    pub plugins: Option<PathBuf>,
    /// The operator's policy.
    pub policy: Option<PathBuf>,
    /// The compiled-component cache.
    pub cache: Option<PathBuf>,
    /// Compile every plugin, neither reading nor writing the cache.
    pub no_cache: bool,
    /// `passepartout.toml`.
    pub config: Option<PathBuf>,
    /// The database of the journal, approvals, spend and memory.
    pub db: Option<PathBuf>,
    /// Told of each plugin compile (a person waiting at a terminal wants to know).
    pub progress: Option<crate::runtime::cache::Progress>,
    /// More files no grant may reach, beside those the settings name: the token files of the
    /// MCP servers the daemon started with (kept across reloads, and read at each connection
    /// even after `passepartout.toml` stops naming them).
    pub also_protected: Vec<PathBuf>,
}

impl Places {
    /// The plugin directory, if there is one.
    pub fn plugin_dir(&self) -> Option<PathBuf> {
        self.plugins.clone().or_else(crate::dirs::plugin_dir)
    }

    /// The policy file, if there is one.
    pub fn policy_file(&self) -> Option<PathBuf> {
        self.policy.clone().or_else(crate::dirs::policy_file)
    }

    /// `passepartout.toml`, if there is a place for it.
    pub fn config_file(&self) -> Option<PathBuf> {
        self.config.clone().or_else(crate::dirs::config_file)
    }

    /// The operator's approvals of MCP server tools (gateway mode): `mcp-pins.toml` beside
    /// `passepartout.toml`.
    pub fn mcp_pins_file(&self) -> Option<PathBuf> {
        self.config_file()
            .and_then(|c| c.parent().map(|d| d.join("mcp-pins.toml")))
    }

    /// Where the daemon writes what each MCP server offers (gateway mode): `mcp/` beside the
    /// database.
    pub fn mcp_seen_dir(&self) -> Option<PathBuf> {
        self.database()
            .and_then(|d| d.parent().map(|d| d.join("mcp")))
    }

    /// The database file, if there is a place for it.
    pub fn database(&self) -> Option<PathBuf> {
        self.db.clone().or_else(crate::dirs::database)
    }

    /// What no plugin's grant (and no MCP server's directory) may hold or be inside: the
    /// default places ([`crate::runtime::capabilities::fs::default_protected`]) and these
    /// places where they were given elsewhere (the plugin directory, the policy,
    /// `passepartout.toml`, the MCP pins and what MCP servers offered, the database, the
    /// cache), and the token files `settings` names for remote MCP servers; nothing
    /// read-write may hold this executable, which granted programs and MCP servers start
    /// through.
    pub fn protected(&self, settings: &ConfigFile) -> crate::runtime::capabilities::fs::Protected {
        let mut hidden = crate::runtime::capabilities::fs::default_protected();
        hidden.extend(
            settings
                .mcp
                .servers
                .values()
                .filter_map(|s| s.bearer_file.clone())
                .chain(self.also_protected.iter().cloned()),
        );
        hidden.extend(
            [
                self.plugin_dir(),
                self.policy_file(),
                self.config_file(),
                self.mcp_pins_file(),
                self.mcp_seen_dir(),
                self.database(),
                self.cache_dir(),
            ]
            .into_iter()
            .flatten(),
        );
        crate::runtime::capabilities::fs::Protected {
            hidden,
            // ambient authority: where this process's own program is.
            unwritable: std::env::current_exe().into_iter().collect(),
        }
    }

    /// The compiled-component cache, unless disabled.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        if self.no_cache {
            None
        } else {
            self.cache.clone().or_else(crate::dirs::cache_dir)
        }
    }

    /// `passepartout.toml`, or the defaults when there is none.
    ///
    /// # Errors
    /// The file exists and cannot be read or parsed.
    pub fn settings(&self) -> Result<ConfigFile, AgentError> {
        match self.config_file() {
            Some(path) => Ok(ConfigFile::load(&path)?),
            None => Ok(ConfigFile::default()),
        }
    }

    /// The journal in the database (created if missing).
    ///
    /// # Errors
    /// No place for the database, or it cannot be opened.
    pub fn journal(&self) -> Result<Journal, AgentError> {
        let path = self.database().ok_or(AgentError::NoDatabase)?;
        // A passepartout.toml that does not parse must not keep `journal verify` from running:
        // the journal is then opened with the default cap (other commands report the file).
        let cap = match self.settings() {
            Ok(s) => s.journal.max_text_bytes,
            Err(e) => {
                tracing::warn!("{e}; the journal keeps texts of the default length");
                None
            }
        }
        .unwrap_or(crate::journal::DEFAULT_TEXT_CAP);
        Journal::open(&path)
            .map(|j| j.with_text_cap(cap))
            .map_err(|source| AgentError::Database { path, source })
    }

    /// The memory store in the database (created if missing).
    ///
    /// # Errors
    /// No place for the database, or the store cannot be opened.
    pub fn memory(&self, settings: &ConfigFile) -> Result<Arc<Memory>, AgentError> {
        let path = self.database().ok_or(AgentError::NoDatabase)?;
        Memory::open(&path, settings.memory.clone())
            .map(Arc::new)
            .map_err(|source| AgentError::Memory { path, source })
    }

    /// The configured provider cascade, recording spend in the database when there is one.
    ///
    /// # Errors
    /// The database exists but the spend log cannot be opened in it.
    pub fn cascade(&self, settings: &ConfigFile) -> Result<Cascade, AgentError> {
        let mut cascade = Cascade::from_config(&settings.providers());
        if let Some(path) = self.database() {
            let log = SpendLog::open(&path).map_err(|source| AgentError::Database {
                path: path.clone(),
                source,
            })?;
            let log = std::sync::Arc::new(log);
            let today = log.clone();
            cascade = cascade.with_spend_log(
                Box::new(move |r| log.record(r)),
                Box::new(move || {
                    // Unreadable: count it as spent, so that the limit still holds.
                    today.spent_today().unwrap_or_else(|e| {
                        tracing::error!("cannot read today's spend: {e}");
                        f64::INFINITY
                    })
                }),
            );
        }
        Ok(cascade)
    }

    /// Everything before a plugin is loaded: the runtime (pooled, with the cache), the policy,
    /// the pins, the plugin sources (built-in, then the plugin directory's) and the settings.
    /// Plugins granted memory get the store in the database when the database exists;
    /// commands that only look (plugins, verify, audit) must not create one, so they get an
    /// empty store in memory instead.
    ///
    /// # Errors
    /// A file that exists cannot be read or parsed; the engine cannot be set up.
    pub fn setup(&self) -> Result<Setup, AgentError> {
        let settings = self.settings()?;
        let mut runtime = Runtime::new(RuntimeConfig {
            cache_dir: self.cache_dir(),
            pooling: true,
            progress: self.progress.clone(),
            protected: self.protected(&settings),
            ..RuntimeConfig::default()
        })
        .map_err(|e| AgentError::Runtime(e.into()))?;
        let memory = match self.database() {
            Some(db) if db.exists() => self.memory(&settings)?,
            _ => Arc::new(
                Memory::in_memory(settings.memory.clone()).map_err(|source| {
                    AgentError::Memory {
                        path: PathBuf::from(":memory:"),
                        source,
                    }
                })?,
            ),
        };
        runtime.set_memory(memory.clone());
        // Only the default places may be missing (a fresh machine has neither).
        for (given, what, option) in [
            (&self.policy, "policy file", "policy"),
            (&self.plugins, "plugin directory", "plugins"),
        ] {
            if let Some(path) = given.as_ref().filter(|p| !p.exists()) {
                return Err(AgentError::Missing {
                    what,
                    option,
                    path: path.clone(),
                });
            }
        }
        let policy_file = self.policy_file();
        let policy = match &policy_file {
            Some(p) => Policy::load(p)?,
            None => Policy::default(),
        };
        // Pins live beside the default policy, never beside a candidate policy given with
        // --policy.
        let pins_file = crate::dirs::pins_file();
        let pins = match &pins_file {
            Some(p) => Pins::load(p).map_err(|source| AgentError::Pins {
                path: p.clone(),
                source,
            })?,
            None => Pins::default(),
        };
        let plugin_dir = self.plugin_dir();
        let mut sources = loader::builtin_sources();
        if let Some(dir) = &plugin_dir {
            sources.extend(loader::dir_sources(dir, &pins));
        }
        Ok(Setup {
            runtime,
            policy,
            policy_file,
            pins_file,
            plugin_dir,
            sources,
            memory,
            settings,
        })
    }
}

/// What an agent starts from, before any plugin is loaded (the audit reads this without
/// running a plugin).
pub struct Setup {
    /// The plugin runtime.
    pub runtime: Runtime,
    /// The operator's policy.
    pub policy: Policy,
    /// Where it was read from.
    pub policy_file: Option<PathBuf>,
    /// Where the pins are.
    pub pins_file: Option<PathBuf>,
    /// The plugin directory.
    pub plugin_dir: Option<PathBuf>,
    /// Every plugin to load: built-in first.
    pub sources: Vec<PluginSource>,
    /// The memory store plugins granted memory use.
    pub memory: Arc<Memory>,
    /// `passepartout.toml`.
    pub settings: ConfigFile,
}

impl Setup {
    /// Load every source under the policy.
    pub fn load(self) -> Loaded {
        let mut report = self.runtime.load_all(&self.sources, &self.policy);
        report.drop_unordered_skills(&self.policy);
        self.loaded(report)
    }

    /// Load every source, and audit what loaded (each plugin is loaded once).
    pub fn load_audited(self) -> (Loaded, crate::audit::AuditReport) {
        let mut report = self.runtime.load_all(&self.sources, &self.policy);
        report.drop_unordered_skills(&self.policy);
        let audit = crate::audit::audit_loaded(
            &self.runtime,
            &self.sources,
            &self.policy,
            &self.settings,
            &report.plugins,
        );
        (self.loaded(report), audit)
    }

    fn loaded(self, report: LoadReport) -> Loaded {
        for d in &report.disabled {
            tracing::info!("{d}");
        }
        Loaded {
            runtime: self.runtime,
            report,
            plugin_dir: self.plugin_dir,
            policy_file: self.policy_file,
            memory: self.memory,
            settings: self.settings,
            policy: self.policy,
        }
    }
}

/// The plugin set as loaded, with where it came from.
pub struct Loaded {
    /// The plugin runtime.
    pub runtime: Runtime,
    /// What loaded, what did not, and the set's hash.
    pub report: LoadReport,
    /// The plugin directory.
    pub plugin_dir: Option<PathBuf>,
    /// The policy file.
    pub policy_file: Option<PathBuf>,
    /// The memory store.
    pub memory: Arc<Memory>,
    /// `passepartout.toml`.
    pub settings: ConfigFile,
    /// The operator's policy it was loaded under.
    pub policy: Policy,
}

impl Loaded {
    /// Problems worth telling the operator about this set: plugins that did not load, gates
    /// missing (every action is refused while any is), and what `audit` found at medium or
    /// above.
    pub fn problems(&self, audit: &crate::audit::AuditReport) -> Vec<String> {
        let mut problems: Vec<String> = audit
            .plugins
            .iter()
            .flat_map(|p| {
                p.findings
                    .iter()
                    .filter(|f| f.severity >= crate::audit::Severity::Medium)
                    .map(move |f| format!("audit: {} {}: {}", p.name, p.version, f.message))
            })
            .collect();
        problems.extend(self.report.errors.iter().map(ToString::to_string));
        for m in &self.report.missing_gates {
            problems.push(format!(
                "gate {} did not load: every action is refused until it loads or is disabled \
                 with [plugins.{}] enabled = false in policy.toml",
                m.name, m.name
            ));
        }
        problems
    }

    /// The agent over this set: every loaded gate (a gate that failed to load stands in as
    /// one that refuses everything), the tools behind the `tool` actuator, the skills, the
    /// memory store, the pipeline settings of `[pipeline]` and the environment, `provider` for
    /// Reason, and the front end's own `actuators` (the CLI's printer, the daemon's router).
    ///
    /// # Errors
    /// Skill dependencies name a missing skill or form a cycle.
    pub fn assemble(
        self,
        journal: Journal,
        provider: Option<Box<dyn Provider>>,
        actuators: Vec<(&str, Box<dyn Actuator>)>,
    ) -> Result<Agent, AgentError> {
        let config = PipelineConfig::from_settings(&self.settings);
        let mut agent = Agent::from_report(self.report, journal, config)?.with_memory(self.memory);
        if let Some(p) = provider {
            agent = agent.with_provider(p);
        }
        for (name, actuator) in actuators {
            agent = agent.with_actuator(name, actuator);
        }
        Ok(agent)
    }
}
