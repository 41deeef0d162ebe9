//! The metabolic pipeline: Perceive → Reason → Act, repeated while Act produces feedback.
//!
//! - [`reason`]: user input, chat messages, the output of a tool the model called, and events
//!   a skill takes up go to the model; its answer is parsed as data into an [`Action`],
//!   verified by every gate, retried up to 3 times with the rejection fed back. Direct
//!   requests skip the model, never the gates.
//! - [`act`]: approval suspends the action under a token; otherwise a last-mile verify, then the
//!   actuator (explicit target, else the signal's source, else the default), and feedback.
//! - [`metabolism`]: the loop, its depth limit, interrupt and error recovery.
//!
//! Every proposal, gate verdict, approval decision and tool result goes into the [`Journal`].

pub mod act;
pub mod actuators;
pub mod cycle;
pub mod error;
mod logs;
pub mod metabolism;
pub mod provider;
pub mod reason;
pub mod skills;
pub mod turn;

#[cfg(test)]
mod proptests;

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::gates::GateCheck;
use crate::journal::Journal;
use crate::runtime::{Kind, Plugin};
use crate::signal::{Action, GateTrace};

pub use actuators::Actuator;
pub use error::{JournalWriteError, PipelineError, Recovery};
pub use provider::{
    OnProgress, Progress, Provider, ProviderReply, ProviderRequest, ToolSchema, ToolTurn,
};
pub use turn::{Answer, Origin, Turn};

/// Settings of the pipeline, with the seed's defaults.
#[derive(Clone, Debug)]
pub struct PipelineConfig {
    /// The assistant's name in the prompt's IDENTITY (`PASSEPARTOUT_ASSISTANT`, seed: `MEMEX_ASSISTANT`; default `Agent`).
    pub assistant_name: String,
    /// Standing mandates, written into IDENTITY before anything else.
    pub mandates: Vec<String>,
    /// Where an action goes with no target and no source (seed: `DEFAULT_ACTUATOR`, `cli`).
    pub default_actuator: String,
    /// Actuators whose result is not fed back (seed: `SILENT_ACTUATORS`).
    pub silent_actuators: Vec<String>,
    /// Signals deeper than this are dropped (seed: 10).
    pub max_depth: u32,
    /// Attempts the model gets when gates reject its proposal (seed: 3).
    pub attempts: u32,
    /// How long a suspended action waits for approval.
    pub approval_expiry: Duration,
    /// The largest reply the daemon sends (`[daemon] max_frame`): the approvals that wait
    /// are kept to what one reply can list ([`crate::approvals::Approvals::within`]).
    pub reply_frame: usize,
    /// What to do with a failed cycle (seed: re-inject a loop-error event).
    pub recovery: Recovery,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            assistant_name: "Agent".into(),
            mandates: Vec::new(),
            default_actuator: "cli".into(),
            silent_actuators: vec!["cli".into(), "system-message".into(), "emacs".into()],
            max_depth: 10,
            attempts: 3,
            approval_expiry: crate::approvals::DEFAULT_EXPIRY,
            reply_frame: crate::daemon::protocol::MAX_FRAME,
            recovery: Recovery::Reinject,
        }
    }
}

impl PipelineConfig {
    /// The defaults, overridden by `[pipeline]` of `passepartout.toml`, then by
    /// `PASSEPARTOUT_ASSISTANT`, `PASSEPARTOUT_DEFAULT_ACTUATOR`, `PASSEPARTOUT_SILENT_ACTUATORS`
    /// (comma-separated) and `PASSEPARTOUT_APPROVAL_EXPIRY_SECS` ([`crate::settings`]; the
    /// seed's names are aliases). `max_depth` and `attempts` are clamped to 1..=100 and 1..=10.
    /// `reply_frame` is `[daemon] max_frame` ([`crate::settings::DaemonSection::frame`]).
    pub fn from_settings(settings: &crate::settings::ConfigFile) -> PipelineConfig {
        let mut c = PipelineConfig {
            reply_frame: settings.daemon.frame(),
            ..PipelineConfig::default()
        };
        let file = &settings.pipeline;
        use crate::settings;
        let lower = |s: &str| s.trim().to_lowercase();
        // A blank value in the file is no value, as a blank variable is.
        let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
        if let Some(name) = settings::ASSISTANT.get().or_else(|| given(&file.assistant)) {
            c.assistant_name = name;
        }
        c.mandates.clone_from(&file.mandates);
        if let Some(target) = settings::DEFAULT_ACTUATOR
            .get()
            .or_else(|| given(&file.default_actuator))
        {
            c.default_actuator = lower(&target);
        }
        if let Some(secs) = settings::APPROVAL_EXPIRY_SECS
            .parse()
            .or(file.approval_expiry_secs)
        {
            c.approval_expiry = Duration::from_secs(secs);
        }
        // Set but empty: no actuator is silent.
        let silent = match settings::SILENT_ACTUATORS.get_even_blank() {
            Some(list) => Some(list.split(',').map(lower).collect::<Vec<_>>()),
            None => file
                .silent_actuators
                .as_ref()
                .map(|l| l.iter().map(|s| lower(s)).collect()),
        };
        if let Some(silent) = silent {
            c.silent_actuators = silent.into_iter().filter(|s| !s.is_empty()).collect();
        }
        let bounded = |key: &str, v: u32, lo: u32, hi: u32| {
            let b = v.clamp(lo, hi);
            if b != v {
                tracing::warn!(
                    "passepartout.toml: [pipeline] {key} = {v} is outside {lo}..={hi}; using {b}"
                );
            }
            b
        };
        if let Some(depth) = file.max_depth {
            c.max_depth = bounded("max_depth", depth, 1, 100);
        }
        if let Some(attempts) = file.attempts {
            c.attempts = bounded("attempts", attempts, 1, 10);
        }
        if let Some(recovery) = &file.recovery {
            c.recovery = recovery.clone();
        }
        c
    }
}

/// What happened to one signal in one round of the loop.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Step {
    /// The signal's depth.
    pub depth: u32,
    /// Its sensor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// The action proposed, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Action>,
    /// The gates' trace for the last verification of this step.
    pub trace: GateTrace,
    /// How it ended.
    pub outcome: StepOutcome,
}

/// How a step ended.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum StepOutcome {
    /// Nothing to do (not a signal Reason handles, or no proposal).
    Nothing,
    /// An actuator ran the action.
    Ran {
        /// The actuator.
        target: String,
        /// Its result, formatted as the seed does.
        result: String,
    },
    /// The tool failed (its own error, or a limit).
    ToolFailed {
        /// The tool.
        tool: String,
        /// The error, naming the plugin.
        message: String,
    },
    /// A gate rejected the action (after every retry, for the model).
    Rejected {
        /// The gate.
        gate: String,
        /// Its reason.
        reason: String,
        /// Proposals the model made.
        attempts: u32,
    },
    /// Suspended until a person approves.
    Suspended {
        /// The approval token.
        token: String,
        /// Why the gates asked.
        reasons: Vec<String>,
    },
    /// The action cannot be performed as given (an unknown tool, arguments that do not match
    /// its schema, a target with no actuator): nothing ran.
    Invalid {
        /// What is wrong with it, naming the field.
        reason: String,
    },
    /// The cycle failed; see recovery.
    Failed {
        /// The error.
        error: String,
    },
    /// The signal was dropped (too deep, interrupted).
    Dropped {
        /// Why.
        why: String,
    },
}

/// Everything that happened while processing one signal and its feedback.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Report {
    /// Each round, in order.
    pub steps: Vec<Step>,
    /// The memory headline the request was about (an `ask` with a `focus`), as it stood when
    /// the request began: the seeds' foveal line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
}

/// A memory headline a request is about ([`crate::signal::Meta::focus`]), as a person reads it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Focus {
    /// Its `ID`.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its TODO keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub todo: Option<String>,
}

impl Report {
    /// The last step's outcome.
    pub fn last(&self) -> Option<&StepOutcome> {
        self.steps.last().map(|s| &s.outcome)
    }
}

/// The pipeline: plugins, gates, the model, actuators, journal and settings.
pub struct Agent {
    plugins: Vec<Arc<Plugin>>,
    /// The plugin set's hash ([`crate::runtime::LoadReport::set`]); empty for a pipeline not
    /// built from a load report.
    plugin_set: String,
    /// Gates that did not load (they refuse every action).
    missing_gates: Vec<String>,
    catalog: crate::runtime::effects::Catalog,
    gates: Vec<Arc<dyn GateCheck>>,
    skills: Vec<Arc<Plugin>>,
    provider: Option<Box<dyn Provider>>,
    actuators: BTreeMap<String, Box<dyn Actuator>>,
    journal: Journal,
    config: PipelineConfig,
    interrupt: Arc<AtomicBool>,
    logs: Mutex<logs::Logs>,
    memory: Option<Arc<crate::memory::Memory>>,
    /// The MCP servers' tools offered beside the plugins' (gateway mode).
    gateway: Option<crate::gateway::Offer>,
    /// Where each gate's verdict goes as a walk makes it (the daemon's live traces).
    gate_events: Option<tokio::sync::broadcast::Sender<crate::gates::LiveVerdict>>,
    /// Where a streamed answer's progress goes (the daemon: to the request it answers).
    progress: Option<ProgressSink>,
    /// The plugins that did not load, and why.
    not_loaded: Vec<NotLoaded>,
    /// Set when a reload replaced this agent: where the agent in force is kept. Turns still
    /// running on this one go on under that one, round by round and action by action. (A
    /// handle to the place, not to the next agent: a chain of replaced agents would keep
    /// every plugin set the daemon ever loaded.)
    replaced: std::sync::OnceLock<InForce>,
}

/// A plugin that did not load: disabled (it needs a grant the policy does not give, or the
/// policy disables it) or failed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NotLoaded {
    /// The plugin (or the file, when no plugin could be named).
    pub plugin: String,
    /// Whether it is disabled on purpose (else it failed).
    pub disabled: bool,
    /// Why, as the loader said it.
    pub why: String,
}

/// Where the agent in force is kept (the daemon's swap): each agent a reload replaced holds it,
/// and follows it.
pub type InForce = Arc<std::sync::RwLock<Arc<Agent>>>;

/// Where the progress of a streamed answer goes, with the signal's meta it answers (the
/// daemon routes it to the asking request by its session).
pub type ProgressSink = Arc<dyn Fn(&crate::signal::Meta, &Progress) + Send + Sync>;

/// The longest line the LOGS section keeps, in bytes (and the cut's mark): a line may quote a
/// model's tool name, a provider's error or a gate's reason, and every later prompt of every
/// session carries it.
const LOG_LINE_BYTES: usize = 512;

/// `text` cut to its first `max` bytes at a character boundary, `…` marking the cut; whole
/// when it fits.
fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    std::borrow::Cow::Owned(format!("{}…", &text[..cut]))
}

impl Agent {
    /// A pipeline over `plugins`: their gates verify, their tools run through the `tool`
    /// actuator, their skills shape prompts (ordered by their dependencies).
    ///
    /// # Errors
    /// [`PipelineError::Pipeline`] when skill dependencies name a missing skill or form a cycle.
    pub fn new(
        plugins: Vec<Plugin>,
        journal: Journal,
        config: PipelineConfig,
    ) -> Result<Agent, PipelineError> {
        let plugins: Vec<Arc<Plugin>> = plugins.into_iter().map(Arc::new).collect();
        let catalog = crate::runtime::effects::Catalog::new(plugins.iter().map(|p| p.as_ref()));
        let gates = plugins
            .iter()
            .filter(|p| p.is(Kind::Gate))
            .map(|p| p.clone() as Arc<dyn GateCheck>)
            .collect();
        let skills = skills::order(&plugins)?;
        let mut actuators: BTreeMap<String, Box<dyn Actuator>> = BTreeMap::new();
        actuators.insert(
            "tool".into(),
            Box::new(actuators::ToolActuator::new(&plugins)),
        );
        let mut p = Agent {
            plugins,
            plugin_set: String::new(),
            missing_gates: Vec::new(),
            catalog,
            gates,
            skills,
            provider: None,
            actuators,
            journal,
            config,
            interrupt: Arc::new(AtomicBool::new(false)),
            logs: Mutex::new(logs::Logs::default()),
            memory: None,
            gateway: None,
            gate_events: None,
            progress: None,
            not_loaded: Vec::new(),
            replaced: std::sync::OnceLock::new(),
        };
        p.sort_gates();
        Ok(p)
    }

    /// A pipeline over what `report` loaded, with every gate that failed to load standing in
    /// as a gate that refuses everything ([`crate::gates::Unloaded`]): this is how the CLI
    /// and the daemon build theirs, so a missing gate is never a skipped gate.
    ///
    /// # Errors
    /// As [`Agent::new`].
    pub fn from_report(
        report: crate::runtime::LoadReport,
        journal: Journal,
        config: PipelineConfig,
    ) -> Result<Agent, PipelineError> {
        let mut p = Agent::new(report.plugins, journal, config)?;
        p.plugin_set = report.set;
        let not_loaded = |disabled: bool| {
            move |e: &crate::runtime::LoadError| NotLoaded {
                plugin: e.plugin_name().unwrap_or("(a plugin file)").to_owned(),
                disabled: disabled
                    || matches!(e, crate::runtime::LoadError::DisabledByPolicy { .. }),
                why: e.to_string(),
            }
        };
        p.not_loaded = report.disabled.iter().map(not_loaded(true)).collect();
        p.not_loaded
            .extend(report.errors.iter().map(not_loaded(false)));
        p.missing_gates = report
            .missing_gates
            .iter()
            .map(|m| m.name.clone())
            .collect();
        for missing in &report.missing_gates {
            p.gates
                .push(Arc::new(crate::gates::Unloaded::new(missing)) as Arc<dyn GateCheck>);
        }
        p.sort_gates();
        Ok(p)
    }

    fn sort_gates(&mut self) {
        self.gates
            .sort_by(|a, b| crate::gates::walk_order(a.as_ref(), b.as_ref()));
    }

    /// The plugins that did not load, and why.
    pub fn not_loaded(&self) -> &[NotLoaded] {
        &self.not_loaded
    }

    /// Use `provider` for Reason. Without one, user input gets a clear error and direct
    /// requests keep working.
    pub fn with_provider(mut self, provider: Box<dyn Provider>) -> Agent {
        self.provider = Some(provider);
        self
    }

    /// Each MCP server's status (gateway mode); none without a gateway.
    pub fn mcp_servers(&self) -> Vec<crate::gateway::ServerStatus> {
        self.gateway
            .as_ref()
            .map_or_else(Vec::new, crate::gateway::Offer::status)
    }

    /// What is wrong with `policy.toml`'s effect mappings of MCP server tools (gateway mode).
    pub fn mcp_problems(&self) -> Vec<String> {
        self.gateway
            .as_ref()
            .map_or_else(Vec::new, crate::gateway::Offer::problems)
    }

    /// A hash of the tools offered now (names, descriptions, schemas): what a client watches to
    /// know when to list them again.
    pub fn tools_set(&self) -> String {
        use sha2::Digest as _;
        let mut h = sha2::Sha256::new();
        for t in self.tool_schemas() {
            h.update(t.name.as_bytes());
            h.update([0]);
            h.update(t.description.as_bytes());
            h.update([0]);
            h.update(t.parameters.to_string().as_bytes());
            h.update([0]);
        }
        hex::encode(&h.finalize()[..8])
    }

    /// Offer the tools of `gateway`'s MCP servers beside the plugins' (named so as to take no
    /// plugin tool's name), behind the same gates; gates see them as opaque unless `policy`
    /// (`[mcp.NAME]` of `policy.toml`) maps their arguments to effects.
    pub fn with_gateway(
        mut self,
        gateway: Arc<crate::gateway::Gateway>,
        policy: std::collections::BTreeMap<String, crate::runtime::policy::McpServerPolicy>,
    ) -> Agent {
        let taken = self.catalog.plugin_tools().map(str::to_owned).collect();
        let offer = crate::gateway::Offer::new(gateway, taken, policy);
        self.catalog = std::mem::take(&mut self.catalog).with_external(Arc::new(offer.clone()));
        self.actuators.insert(
            "tool".into(),
            Box::new(actuators::ToolActuator::new(&self.plugins).with_gateway(offer.clone())),
        );
        self.gateway = Some(offer);
        self
    }

    /// Send each gate's verdict to `sender` as a walk makes it (the daemon's `traces`
    /// subscriptions).
    pub fn with_gate_events(
        mut self,
        sender: tokio::sync::broadcast::Sender<crate::gates::LiveVerdict>,
    ) -> Agent {
        self.gate_events = Some(sender);
        self
    }

    /// Stream the model's answers, and send their progress to `sink` as they come.
    pub fn with_progress(mut self, sink: ProgressSink) -> Agent {
        self.progress = Some(sink);
        self
    }

    /// Where a walk on behalf of `signal` sends its verdicts, if anyone may follow.
    pub(crate) fn tap(
        &self,
        signal: &crate::signal::Signal,
        last_mile: bool,
    ) -> Option<crate::gates::Tap> {
        self.gate_events.as_ref().map(|sender| crate::gates::Tap {
            sender: sender.clone(),
            client: signal.meta.client.clone(),
            session: signal.meta.session.clone(),
            last_mile,
        })
    }

    /// Use `memory`: its awareness outline goes into the prompt's CONTEXT, a snapshot is taken
    /// before every tool that is not read-only, and a cycle that fails after one rolls back
    /// to it.
    pub fn with_memory(mut self, memory: Arc<crate::memory::Memory>) -> Agent {
        self.memory = Some(memory);
        self
    }

    /// What was spent against the model's budgets, with `session`'s tokens when `Some`
    /// (none without a model). May read the spend log.
    pub fn spend(
        &self,
        session: Option<Option<&str>>,
    ) -> Option<crate::providers::budget::SpendStatus> {
        self.provider.as_ref().and_then(|p| p.spend(session))
    }

    /// Each model provider and its circuit breaker's state (none without a model).
    pub fn provider_health(&self) -> Vec<crate::providers::breaker::ProviderHealth> {
        self.provider.as_ref().map_or_else(Vec::new, |p| p.health())
    }

    /// The memory store, if any.
    pub fn memory(&self) -> Option<&Arc<crate::memory::Memory>> {
        self.memory.as_ref()
    }

    /// Add (or replace) the actuator `name`.
    pub fn with_actuator(mut self, name: &str, actuator: Box<dyn Actuator>) -> Agent {
        self.actuators.insert(name.to_owned(), actuator);
        self
    }

    /// Add a gate that is not a plugin (tests at the trait boundary).
    pub fn with_gate(mut self, gate: Arc<dyn GateCheck>) -> Agent {
        self.gates.push(gate);
        self.sort_gates();
        self
    }

    /// The plugins.
    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The settings.
    pub fn config(&self) -> &PipelineConfig {
        &self.config
    }

    /// Set to stop the loop before its next round (SIGINT, SIGTERM).
    pub fn interrupt_flag(&self) -> Arc<AtomicBool> {
        self.interrupt.clone()
    }

    /// The plugin set's hash: every journaled verdict names it.
    pub fn plugin_set(&self) -> &str {
        &self.plugin_set
    }

    /// Gates that did not load; every action is refused while any is listed.
    pub fn missing_gates(&self) -> &[String] {
        &self.missing_gates
    }

    /// Use `other`'s interrupt flag, so that one stop request reaches both (a reload swaps
    /// pipelines while loops run on the old one).
    pub fn share_interrupt(&mut self, other: &Agent) {
        self.interrupt = other.interrupt.clone();
    }

    /// Mark this agent replaced (a reload): `in_force` holds the agent that replaced it, or
    /// whatever replaced that since. A turn running on this one verifies and runs its next
    /// action, and takes its next round, on the agent in force then. Only the first call
    /// counts; an agent is replaced once.
    pub fn supersede(&self, in_force: InForce) {
        let _ = self.replaced.set(in_force);
    }

    /// The agent in force now, if a reload replaced this one (and it is another).
    pub fn successor(&self) -> Option<Arc<Agent>> {
        let now = self
            .replaced
            .get()?
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        (!std::ptr::eq(Arc::as_ptr(&now), self)).then_some(now)
    }

    /// Every loaded tool by the name it is offered under, with its plugin and effects.
    pub fn catalog(&self) -> &crate::runtime::effects::Catalog {
        &self.catalog
    }

    /// Verify `action` (from `signal`) with every gate, in order ([`crate::gates::verify`]).
    pub async fn verify(
        &self,
        action: &Action,
        signal: &crate::signal::Signal,
    ) -> crate::gates::Verification {
        crate::gates::verify(&self.gates(), &self.catalog, action, signal).await
    }

    /// The gates, in walk order.
    pub fn gates(&self) -> Vec<&dyn GateCheck> {
        self.gates.iter().map(|g| g.as_ref()).collect()
    }

    /// Append to the journal; a journal that cannot be written is logged, never silently.
    pub(crate) fn record(&self, kind: &str, body: serde_json::Value) {
        if let Err(e) = crate::blocking::in_place(|| self.journal.append(kind, &body)) {
            tracing::error!("cannot write the journal ({kind}): {e}");
        }
    }

    /// Commit the records `cycle` holds, in one group ([`Journal::append_all_async`]; see
    /// [`cycle::Cycle::pending`]). A failure is logged, and returned for the caller to refuse
    /// what depends on it (running an action, giving out a result).
    ///
    /// # Errors
    /// Why the journal refused the write, for the caller's message.
    pub(crate) async fn flush(&self, cycle: &mut cycle::Cycle) -> Result<(), JournalWriteError> {
        let pending = std::mem::take(&mut cycle.pending);
        if pending.is_empty() {
            return Ok(());
        }
        let records: Vec<(&str, &serde_json::Value)> =
            pending.iter().map(|(kind, body)| (*kind, body)).collect();
        self.journal
            .append_all_async(&records)
            .await
            .map(|_| ())
            .map_err(|source| {
                tracing::error!(
                    "cannot write the journal ({} records): {source}",
                    records.len()
                );
                JournalWriteError { source }
            })
    }

    /// Remember a line for the LOGS section of the prompts that answer signals from
    /// `whose` client session ([`logs`]), cut to [`LOG_LINE_BYTES`] (whatever it quotes, the
    /// section stays [`logs::LOG_LINES`] short lines).
    pub(crate) fn log(&self, whose: &crate::signal::Meta, mut line: String) {
        if line.len() > LOG_LINE_BYTES {
            // A copy of the start: the long line's allocation is not kept behind it.
            line = clip(&line, LOG_LINE_BYTES).into_owned();
        }
        tracing::info!("{line}");
        self.logs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(logs::scope(whose), line);
    }

    /// The lines [`Agent::log`] kept for `whose` client session.
    pub(crate) fn recent_logs(&self, whose: &crate::signal::Meta) -> Vec<String> {
        self.logs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .recent(logs::scope(whose))
    }
}

#[cfg(test)]
mod tests {
    use super::logs::LOG_LINES;
    use super::{Agent, LOG_LINE_BYTES, PipelineConfig};
    use crate::journal::Journal;
    use crate::signal::{Meta, Signal};

    /// The cut's mark.
    const MARK: &str = "…";

    fn agent() -> Agent {
        Agent::new(
            Vec::new(),
            Journal::in_memory().expect("journal"),
            PipelineConfig::default(),
        )
        .expect("agent")
    }

    #[test]
    fn a_long_log_line_is_cut_at_a_char_boundary_and_marked() {
        let agent = agent();
        // 100 KiB of three-byte characters after one ASCII byte: no cut at 512 falls on a
        // character boundary by chance.
        let long = format!("x{}", "€".repeat(100 * 1024 / 3));
        agent.log(&Meta::default(), long.clone());
        let logs = agent.recent_logs(&Meta::default());
        let kept = logs.last().expect("the line is kept");
        let text = kept.strip_suffix(MARK).expect("the cut is marked");
        assert!(text.len() <= LOG_LINE_BYTES, "{} bytes", text.len());
        assert!(text.len() > LOG_LINE_BYTES - 3, "no more than a char short");
        assert!(long.starts_with(text), "the start of the line, whole chars");
        agent.log(&Meta::default(), "short".to_owned());
        assert_eq!(
            agent
                .recent_logs(&Meta::default())
                .last()
                .map(String::as_str),
            Some("short")
        );
    }

    #[test]
    fn the_logs_in_every_prompt_stay_bounded_whatever_a_line_quotes() {
        let agent = agent();
        for i in 0..LOG_LINES + 5 {
            agent.log(
                &Meta::default(),
                format!("gate g rejected tool {}{i}", "n".repeat(1 << 20)),
            );
        }
        let logs = agent.recent_logs(&Meta::default());
        assert_eq!(logs.len(), LOG_LINES);
        assert!(
            logs.iter().all(|l| l.len() <= LOG_LINE_BYTES + MARK.len()),
            "{:?}",
            logs.iter().map(String::len).collect::<Vec<_>>()
        );
        let signal = Signal::event("user-input", Some("hello"), Some("cli"));
        let system = agent.prompt(&signal, None, None).system;
        assert!(
            system.len() <= LOG_LINES * (LOG_LINE_BYTES + MARK.len() + 1) + 4096,
            "a system prompt of {} bytes",
            system.len()
        );
    }

    #[test]
    fn one_client_sessions_lines_never_reach_anothers_prompt() {
        let agent = agent();
        let a = Meta {
            client: Some("boot:1".into()),
            ..Meta::default()
        };
        agent.log(&a, "gate g rejected tool x: SECRET-A".into());
        let mut signal = Signal::event("user-input", Some("hello"), Some("cli"));
        signal.meta.client = Some("boot:2".into());
        assert!(
            !agent
                .prompt(&signal, None, None)
                .system
                .contains("SECRET-A")
        );
        signal.meta.client = None;
        assert!(
            !agent
                .prompt(&signal, None, None)
                .system
                .contains("SECRET-A")
        );
        signal.meta.client = Some("boot:1".into());
        assert!(
            agent
                .prompt(&signal, None, None)
                .system
                .contains("SECRET-A")
        );
    }

    #[test]
    fn the_heartbeats_share_one_scope_of_their_own() {
        let agent = agent();
        let client = Meta {
            source: Some("client".into()),
            client: Some("boot:1".into()),
            ..Meta::default()
        };
        agent.log(&client, "gate g rejected tool x: SECRET-A".into());
        // Each heartbeat is a budget session of its own, yet one scope for the logs: the next
        // beat's model sees what the last one's proposal came to.
        let beat = |n: u32| Meta {
            source: Some("daemon".into()),
            client: Some(format!("boot:heartbeat:{n}")),
            ..Meta::default()
        };
        agent.log(&beat(1), "gate g rejected tool gardener: not now".into());
        let mut next = Signal::event("heartbeat", None, Some("daemon"));
        next.meta = beat(2);
        let system = agent.prompt(&next, None, None).system;
        assert!(system.contains("not now") && !system.contains("SECRET-A"));
    }
}
