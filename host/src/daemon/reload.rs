//! Reloading the plugin set while the daemon runs: on a `reload` request (which `plugin
//! install`, `update` and `remove` send), on SIGHUP, and when the plugin directory, the policy or
//! the pins change on disk.
//!
//! A new set is loaded and checked beside the running one, then swapped in atomically: a request
//! already running finishes on the set it started with, the next one (and the tool list the
//! model is offered with it) uses the new set. A set that fails to load (a policy that does not
//! parse, say) leaves the old one running and says why: in the log, in `status`, in the reply.
//! A gate that fails to load is not a failed set: it is in the new set as a missing gate, which
//! refuses every action until it is fixed or disabled (fail closed).

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde::Serialize;

use crate::pipeline::{Agent, InForce};

/// What the daemon reloads from. Implemented by the CLI's daemon command, which knows the
/// plugin directory, the policy and the pins.
pub trait Reload: Send + Sync {
    /// Load the plugin set anew and build the pipeline around it.
    ///
    /// # Errors
    /// Why the set cannot be loaded (the policy does not parse, the directory is unreadable),
    /// with its causes; the running set stays.
    fn load(&self) -> anyhow::Result<Agent>;

    /// A cheap fingerprint of the files the set comes from (names, sizes, modification times):
    /// when it changes, the daemon reloads.
    fn fingerprint(&self) -> String;
}

/// How a reload went.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct Reloaded {
    /// Whether the running set changed.
    pub changed: bool,
    /// The plugin set now running (a hash of the loaded plugins and the policy).
    pub set: String,
    /// Plugins loaded.
    pub plugins: usize,
    /// Gates that did not load (every action is refused while any is listed).
    pub missing_gates: Vec<String>,
}

/// What `status` shows of reloads.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct ReloadStatus {
    /// Reloads that loaded a new set and swapped it in.
    pub reloads: u64,
    /// Why the last attempt failed, if it did (the old set kept running).
    pub last_error: Option<String>,
    /// The fingerprint of the files the last attempt loaded from (not shown).
    #[serde(skip)]
    attempted: Option<String>,
    /// What the last attempt failed with (not shown): set and cleared with `last_error`, so
    /// that an attempt answered again keeps its causes.
    #[serde(skip)]
    cause: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

/// Why a reload left the running plugin set in place.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The daemon was started without a [`Reload`]: there is nothing to reload from.
    #[error("this daemon was started without a plugin set to reload")]
    NotReloadable,
    /// The new set did not load (in this attempt, or in the last one from the same files).
    #[error("the new plugin set did not load, so the running one stays: {why}")]
    NotLoaded {
        /// The whole chain of causes, on one line (what `status` shows as `last_error`).
        why: String,
        /// What [`Reload::load`] failed with.
        #[source]
        source: Arc<dyn std::error::Error + Send + Sync>,
    },
    /// The files the set comes from changed while each of [`LOAD_TRIES`] loads read them
    /// (they are being written: a plugin installed, an editor saving): a set read from files
    /// half written is not swapped in.
    #[error(
        "the plugin files changed while they were read ({tries} times in a row), so the running set stays: reload again once they are written"
    )]
    Changing {
        /// How many loads were made.
        tries: usize,
    },
    /// The thread the reload ran on ended without an answer (it panicked, or the runtime is
    /// shutting down).
    #[error("the reload failed inside the daemon: {source}")]
    Crashed {
        /// What joining that thread said.
        #[source]
        source: tokio::task::JoinError,
    },
}

/// How many times one reload loads the set while the files change under it, before it gives
/// up ([`ReloadError::Changing`]).
pub const LOAD_TRIES: usize = 3;

/// The running pipeline, swappable.
pub struct Swap {
    /// The agent in force, shared with every agent it replaced (they follow it).
    current: InForce,
    reload: Option<Box<dyn Reload>>,
    /// One reload at a time.
    busy: Mutex<()>,
    /// One thread for reloads at a time: the others wait for it without one.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// Kept apart from `busy`, so that `status` never waits for a reload.
    status: Mutex<ReloadStatus>,
    /// False while the first set is still loading (the daemon listens before it loads).
    ready: tokio::sync::watch::Sender<bool>,
}

impl Swap {
    /// `pipeline`, reloadable through `reload` when given.
    pub fn new(pipeline: Arc<Agent>, reload: Option<Box<dyn Reload>>) -> Swap {
        let attempted = reload.as_ref().map(|r| r.fingerprint());
        Swap {
            current: Arc::new(RwLock::new(pipeline)),
            reload,
            busy: Mutex::new(()),
            turn: Arc::default(),
            status: Mutex::new(ReloadStatus {
                attempted,
                ..ReloadStatus::default()
            }),
            ready: tokio::sync::watch::Sender::new(true),
        }
    }

    /// A swap whose set is still to be loaded: `placeholder` (which should refuse every
    /// action, see [`Loading`]) serves until the first [`Swap::reload_off_thread`] ends.
    pub fn loading(placeholder: Arc<Agent>, reload: Box<dyn Reload>) -> Swap {
        Swap {
            current: Arc::new(RwLock::new(placeholder)),
            reload: Some(reload),
            busy: Mutex::new(()),
            turn: Arc::default(),
            status: Mutex::new(ReloadStatus::default()),
            ready: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Whether the first set has been loaded (or failed to).
    pub fn ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// The pipeline to start a request on: the current one once the first set is loaded,
    /// waiting up to `patience` for it (then the placeholder, which refuses).
    pub async fn current_when_ready(&self, patience: Duration) -> Arc<Agent> {
        let mut ready = self.ready.subscribe();
        let _ = tokio::time::timeout(patience, ready.wait_for(|ready| *ready)).await;
        self.current()
    }

    fn mark_ready(&self) {
        self.ready.send_replace(true);
    }

    /// The pipeline requests start on now.
    pub fn current(&self) -> Arc<Agent> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What `status` shows.
    pub fn status(&self) -> ReloadStatus {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The fingerprint of the files the set comes from, or `None` when not reloadable.
    pub fn fingerprint(&self) -> Option<String> {
        self.reload.as_ref().map(|r| r.fingerprint())
    }

    /// Load the set anew and swap it in, on a thread of its own off the async workers (it
    /// compiles plugins). `always`: load even when the files the set comes from did not
    /// change since the last attempt; otherwise (what a client's `reload` request does, so
    /// that no client can keep the daemon busy reloading) that attempt's answer is given
    /// again. One such thread at a time: however many ask at once (every client may send
    /// `reload`), the others wait their turn without holding a thread of the blocking pool
    /// the journal's readers and the approvals share.
    ///
    /// # Errors
    /// [`ReloadError::NotLoaded`] with why the new set could not be loaded (the running one
    /// stays); [`ReloadError::NotReloadable`] when there is nothing to reload from;
    /// [`ReloadError::Crashed`] when the reload's thread gave no answer.
    pub async fn reload_off_thread(
        self: &Arc<Self>,
        why: &'static str,
        always: bool,
    ) -> Result<Reloaded, ReloadError> {
        // Held by the thread until it ends, even when the request that asked is dropped.
        let turn = self.turn.clone().lock_owned().await;
        let swap = self.clone();
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            swap.reload_if(why, always)
        })
        .await
        .unwrap_or_else(|source| Err(ReloadError::Crashed { source }))
    }

    fn running(&self, changed: bool) -> Reloaded {
        let running = self.current();
        Reloaded {
            changed,
            set: running.plugin_set().to_owned(),
            plugins: running.plugins().len(),
            missing_gates: running.missing_gates().to_vec(),
        }
    }

    fn reload_if(&self, why: &str, always: bool) -> Result<Reloaded, ReloadError> {
        let Some(reload) = &self.reload else {
            return Err(ReloadError::NotReloadable);
        };
        let _one_at_a_time = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        let mut fingerprint = reload.fingerprint();
        {
            let status = self.status.lock().unwrap_or_else(|p| p.into_inner());
            if !always && status.attempted.as_deref() == Some(fingerprint.as_str()) {
                return match (&status.last_error, &status.cause) {
                    (Some(why), Some(source)) => Err(ReloadError::NotLoaded {
                        why: why.clone(),
                        source: source.clone(),
                    }),
                    _ => Ok(self.running(false)),
                };
            }
        }
        // The first load, at start, is not a reload.
        let first = !self.ready();
        // The files may change while they are read (a plugin being installed): a set is
        // swapped in only when they were the same after its load as before it.
        let mut loaded = None;
        for _ in 0..LOAD_TRIES {
            let attempt = reload.load();
            let after = reload.fingerprint();
            if after == fingerprint {
                loaded = Some(attempt);
                break;
            }
            fingerprint = after;
        }
        // Requests waiting for the first set go on, on whatever this attempt leaves.
        let _ready = ReadyOnDrop(self);
        let mut status = self.status.lock().unwrap_or_else(|p| p.into_inner());
        let Some(loaded) = loaded else {
            let error = ReloadError::Changing { tries: LOAD_TRIES };
            tracing::warn!("reload ({why}): {error}");
            // Not an answer to give again: the next attempt loads, whatever the files are then
            // (the watcher's next look sees them changed, and reloads).
            status.attempted = None;
            status.last_error = Some(error.to_string());
            status.cause = None;
            return Err(error);
        };
        status.attempted = Some(fingerprint);
        let mut fresh = match loaded {
            Ok(p) => p,
            Err(e) => {
                // The whole chain: what failed, and why.
                let chain = crate::runtime::chain(e.as_ref());
                tracing::error!("reload ({why}) failed; the running plugin set stays: {chain}");
                let source: Arc<dyn std::error::Error + Send + Sync> =
                    Arc::from(Box::<dyn std::error::Error + Send + Sync>::from(e));
                status.last_error = Some(chain.clone());
                status.cause = Some(source.clone());
                return Err(ReloadError::NotLoaded { why: chain, source });
            }
        };
        status.last_error = None;
        status.cause = None;
        let running = self.current();
        // Swapped even when the plugin set is the same: the providers' configuration may
        // have changed.
        let changed = fresh.plugin_set() != running.plugin_set();
        fresh.share_interrupt(&running);
        {
            // In force and followed in one step: no turn on the old set sees the new one in
            // force without seeing its own set replaced.
            let mut in_force = self.current.write().unwrap_or_else(|p| p.into_inner());
            *in_force = Arc::new(fresh);
            // Turns running on the old set go on under the new one from their next action.
            running.supersede(self.current.clone());
        }
        if !first {
            status.reloads += 1;
        }
        let outcome = self.running(changed);
        tracing::info!(
            set = %outcome.set,
            plugins = outcome.plugins,
            changed,
            "reloaded the plugin set ({why})"
        );
        for g in &outcome.missing_gates {
            tracing::error!(
                "gate {g} did not load: every action is refused until it is fixed or disabled"
            );
        }
        Ok(outcome)
    }
}

/// Marks the swap ready when dropped (after the new set is in place, or the failure noted).
struct ReadyOnDrop<'a>(&'a Swap);

impl Drop for ReadyOnDrop<'_> {
    fn drop(&mut self) {
        self.0.mark_ready();
    }
}

/// Stands in for the plugin set while the daemon loads it at start, so that it can listen at
/// once: it refuses every action (requests wait for the set first, up to a limit).
#[derive(Debug)]
pub struct Loading;

#[async_trait::async_trait]
impl crate::gates::GateCheck for Loading {
    fn name(&self) -> &str {
        "plugin-set"
    }
    fn version(&self) -> &str {
        env!("CARGO_PKG_VERSION")
    }
    fn priority(&self) -> i32 {
        i32::MAX
    }
    async fn check(
        &self,
        _action: &crate::runtime::types::Action,
        _signal: &crate::runtime::types::SignalView,
        _context: &Arc<crate::runtime::effects::ActionContext>,
    ) -> Result<crate::runtime::types::Verdict, crate::runtime::PluginError> {
        Ok(crate::runtime::types::Verdict::Reject(
            "the daemon has not loaded its plugins (still loading, or they failed to load: \
             `passepartout status` says which); nothing runs until they are in place"
                .into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::journal::Journal;
    use crate::pipeline::PipelineConfig;

    /// An empty plugin set.
    fn empty() -> anyhow::Result<Agent> {
        let journal = Journal::in_memory().map_err(|e| anyhow::anyhow!("journal: {e}"))?;
        Agent::new(Vec::new(), journal, PipelineConfig::default())
            .map_err(|e| anyhow::anyhow!("agent: {e}"))
    }

    /// Files that are written while each of the first `settles_after` loads reads them.
    struct Written {
        loads: Arc<AtomicUsize>,
        settles_after: usize,
    }

    impl Reload for Written {
        fn load(&self) -> anyhow::Result<Agent> {
            self.loads.fetch_add(1, Ordering::SeqCst);
            empty()
        }

        fn fingerprint(&self) -> String {
            self.loads
                .load(Ordering::SeqCst)
                .min(self.settles_after)
                .to_string()
        }
    }

    /// A swap over `Written` files, and the count of its loads.
    fn swap(settles_after: usize) -> (Swap, Arc<AtomicUsize>) {
        let loads = Arc::new(AtomicUsize::new(0));
        let reload = Written {
            loads: loads.clone(),
            settles_after,
        };
        let running = Arc::new(empty().expect("an empty set"));
        (Swap::new(running, Some(Box::new(reload))), loads)
    }

    #[test]
    fn a_set_read_while_its_files_change_is_not_swapped_in() {
        let (swap, loads) = swap(usize::MAX);
        let running = swap.current();
        let err = swap
            .reload_if("test", true)
            .expect_err("the files kept changing");
        assert!(
            matches!(err, ReloadError::Changing { tries: LOAD_TRIES }),
            "{err}"
        );
        assert!(
            Arc::ptr_eq(&running, &swap.current()),
            "a set read from files half written was swapped in"
        );
        assert_eq!(loads.load(Ordering::SeqCst), LOAD_TRIES);
        let status = swap.status();
        assert_eq!(status.reloads, 0);
        assert!(
            status
                .last_error
                .is_some_and(|e| e.contains("changed while they were read")),
            "status says why"
        );
    }

    #[test]
    fn a_set_read_again_once_its_files_are_written_is_swapped_in() {
        // Changed while the first load read them, the same across the second.
        let (swap, loads) = swap(1);
        let running = swap.current();
        let reloaded = swap.reload_if("test", true).expect("reloaded");
        assert!(!reloaded.changed, "the same (empty) set");
        assert!(!Arc::ptr_eq(&running, &swap.current()), "swapped in");
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        let status = swap.status();
        assert_eq!((status.reloads, status.last_error), (1, None));
    }
}
