//! The plugin runtime: wasmtime, the WIT bindings, manifests and policy, limits, capabilities,
//! the compiled-artifact cache, and the calls themselves.

pub mod bindings;
pub mod cache;
pub mod call;
pub mod capabilities;
pub mod context;
pub mod effects;
pub mod engine;
pub mod error;
pub mod inspect;
pub mod limits;
pub mod loader;
pub mod manifest;
pub mod pins;
pub mod plugin;
pub mod policy;
pub mod share;
pub mod state;
mod stubs;
pub mod tools;

use std::path::PathBuf;

use wasmtime::Engine;
use wasmtime::component::{HasSelf, Linker};

pub use bindings::types;
pub use call::LiveGate;
pub use capabilities::Grants;
pub use error::{
    ConfigError, Limit, LoadError, PluginError, PluginId, SetupError, ToolFailure, chain,
};
pub use limits::Limits;
pub use loader::LoadReport;
pub use manifest::{Kind, Manifest};
pub use plugin::{Origin, Plugin, PluginSource};
pub use policy::Policy;

use state::{GateData, HostCommon, ToolData};

/// How to build a [`Runtime`].
#[derive(Clone)]
pub struct RuntimeConfig {
    /// Where compiled components are cached; `None` compiles every time.
    pub cache_dir: Option<PathBuf>,
    /// Try the pooling allocator (falls back to on-demand when unavailable).
    pub pooling: bool,
    /// How calls end at their deadline. [`Deadlines::Hard`] unless measuring.
    pub deadlines: Deadlines,
    /// The `passepartout` executable granted programs start through (`passepartout __confine`,
    /// [`capabilities::confine`]); by default this process's own executable.
    pub trampoline: Option<PathBuf>,
    /// Told of each compile (a cache miss), for a person waiting at a terminal.
    pub progress: Option<cache::Progress>,
    /// The daemon's own files and directories, which no grant may hold or be inside (a mount
    /// of one is refused at load and reported by the audit). By default
    /// [`capabilities::fs::default_protected`]; [`crate::agent::Places`] adds the places it
    /// was given elsewhere; the runtime adds the cache and the trampoline.
    pub protected: capabilities::fs::Protected,
}

/// How a call into a plugin is held to its deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Deadlines {
    /// Every call is a future dropped at its deadline, with its Store, even while the guest
    /// waits in a host call (a WASI sleep, a stream, an HTTP request). The default.
    #[default]
    Hard,
    /// Synchronous calls interrupted by epochs: a guest spinning in its own code stops at the
    /// deadline, one blocked in a host call does not. Kept only to measure what
    /// [`Deadlines::Hard`] costs (`benches/deadlines.rs`); never what the CLI or daemon use.
    Epoch,
}

impl Deadlines {
    /// What a call's deadline stops in this mode, as the audit says it.
    pub fn enforced(self) -> &'static str {
        match self {
            Deadlines::Hard => {
                "the call's deadline still stops them, blocking host calls included (each call \
                 is a future dropped at its deadline, with its Store)"
            }
            Deadlines::Epoch => {
                "the call's deadline stops a guest computing in its own code, but not one \
                 blocked in a host call"
            }
        }
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            cache_dir: crate::dirs::cache_dir(),
            pooling: true,
            deadlines: Deadlines::Hard,
            trampoline: capabilities::confine::own_executable(),
            progress: None,
            protected: capabilities::fs::Protected {
                hidden: capabilities::fs::default_protected(),
                unwritable: Vec::new(),
            },
        }
    }
}

/// The plugin host: one engine, its epoch ticker, the artifact cache and the base linkers.
/// Load plugins with [`Runtime::load`] or [`Runtime::load_all`]; each [`Plugin`] is then called
/// directly, from any thread.
pub struct Runtime {
    engine: Engine,
    pooling: bool,
    trampoline: Option<std::sync::Arc<PathBuf>>,
    deadlines: Deadlines,
    cache: cache::ArtifactCache,
    gate_linker: Linker<GateData>,
    tool_linker: Linker<ToolData>,
    ticker: std::sync::Arc<engine::EpochTicker>,
    memory: Option<std::sync::Arc<crate::memory::Memory>>,
    /// The tools' share of the instance pool, shared by every plugin this runtime loads.
    share: std::sync::Arc<share::Share>,
    /// What no grant may expose ([`RuntimeConfig::protected`], and the cache directory).
    protected: std::sync::Arc<capabilities::fs::Protected>,
}

impl Runtime {
    /// Build the engine (probing the pooling allocator), start the epoch ticker and prepare the
    /// linkers: gates get only our `host` interface; tools and skills get it and WASI p2.
    ///
    /// # Errors
    /// The engine cannot be created, or the linkers cannot be built (a wasmtime bug).
    pub fn new(config: RuntimeConfig) -> anyhow::Result<Runtime> {
        let hard = config.deadlines == Deadlines::Hard;
        // The cache holds native code this process loads and runs, and every granted program
        // starts through the trampoline before it is confined: a plugin that could write
        // either (or rename a file over the trampoline) would run its own code outside every
        // limit.
        let mut protected = config.protected;
        protected.hidden.extend(config.cache_dir.clone());
        protected.unwritable.extend(config.trampoline.clone());
        let protected = std::sync::Arc::new(protected);
        let (engine, pooling) = engine::build(config.pooling)?;
        let cache =
            cache::ArtifactCache::new(config.cache_dir, &engine).with_progress(config.progress);

        let mut gate_linker = Linker::<GateData>::new(&engine);
        add_host::<GateData>(&mut gate_linker, |d| &mut d.common)?;
        bindings::action_context_api::add_to_linker::<GateData, HasSelf<GateData>>(
            &mut gate_linker,
            |d| d,
        )
        .map_err(|e| anyhow::anyhow!("linking the action-context interface: {e}"))?;
        capabilities::gate_io::add(&mut gate_linker, hard)
            .map_err(|e| anyhow::anyhow!("linking the gates' stderr: {e}"))?;

        let mut tool_linker = Linker::<ToolData>::new(&engine);
        add_host::<ToolData>(&mut tool_linker, |d| &mut d.common)?;
        if hard {
            wasmtime_wasi::p2::add_to_linker_async(&mut tool_linker)
                .and_then(|()| capabilities::disk::shadow(&mut tool_linker))
        } else {
            wasmtime_wasi::p2::add_to_linker_sync(&mut tool_linker)
        }
        .map_err(|e| anyhow::anyhow!("linking WASI: {e}"))?;
        bindings::action_context_api::add_to_linker::<ToolData, HasSelf<ToolData>>(
            &mut tool_linker,
            |d| d,
        )
        .map_err(|e| anyhow::anyhow!("linking the action-context interface: {e}"))?;

        let ticker = std::sync::Arc::new(engine::EpochTicker::start(&engine));
        Ok(Runtime {
            engine,
            pooling,
            deadlines: config.deadlines,
            trampoline: config.trampoline.map(std::sync::Arc::new),
            cache,
            gate_linker,
            tool_linker,
            ticker,
            memory: None,
            share: std::sync::Arc::default(),
            protected,
        })
    }

    /// Give plugins granted `memory` this store (before loading them). Without one, a memory
    /// grant is refused at load.
    pub fn set_memory(&mut self, memory: std::sync::Arc<crate::memory::Memory>) {
        self.memory = Some(memory);
    }

    /// The tool/skill linker for a plugin with `grants`: the base one (WASI p2 and our `host`),
    /// plus `wasi:http`, `process` and `memory` only when granted, so that a plugin importing
    /// one without a grant cannot even be linked.
    fn linker_for(&self, grants: &Grants) -> anyhow::Result<Linker<ToolData>> {
        use capabilities::{Factor, memory, net, process};
        let mut linker = self.tool_linker.clone();
        if net::Network.granted(grants) {
            net::link(&mut linker, self.deadlines == Deadlines::Hard)
                .map_err(|e| anyhow::anyhow!("linking wasi:http: {e}"))?;
        }
        if process::Process.granted(grants) {
            process::link(&mut linker, |d: &mut ToolData| &mut d.process)
                .map_err(|e| anyhow::anyhow!("linking the process interface: {e}"))?;
        }
        if memory::MemoryFactor.granted(grants) {
            memory::link(&mut linker, |d: &mut ToolData| &mut d.memory)
                .map_err(|e| anyhow::anyhow!("linking the memory interface: {e}"))?;
        }
        Ok(linker)
    }

    /// How calls' deadlines are kept.
    pub fn deadlines(&self) -> Deadlines {
        self.deadlines
    }

    /// Whether instances come from the pooling allocator.
    pub fn pooling(&self) -> bool {
        self.pooling
    }

    /// The daemon's own files and directories, which no grant may hold or be inside.
    pub fn protected(&self) -> &capabilities::fs::Protected {
        &self.protected
    }

    /// Compile (or load from the cache) `bytes` and read its imports and exports, without
    /// instantiating it. Returns the interfaces and the component's sha256.
    ///
    /// # Errors
    /// The bytes are not a valid component.
    pub fn inspect(&self, bytes: &[u8]) -> wasmtime::Result<(inspect::Interfaces, String)> {
        let compiled = self.cache.load(
            &self.engine,
            bytes,
            crate::builtin::sha256(bytes),
            "a plugin",
        )?;
        Ok((
            inspect::interfaces(&self.engine, &compiled.component),
            compiled.sha256,
        ))
    }

    /// The compiled-artifact cache directory, if caching.
    pub fn cache_dir(&self) -> Option<&std::path::Path> {
        self.cache.dir()
    }

    /// The compiled-artifact cache (to prune or clear it).
    pub fn cache(&self) -> &cache::ArtifactCache {
        &self.cache
    }
}

fn add_host<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut HostCommon,
) -> anyhow::Result<()> {
    bindings::types::add_to_linker::<T, HasSelf<HostCommon>>(linker, get)
        .map_err(|e| anyhow::anyhow!("linking the types interface: {e}"))?;
    bindings::host_api::add_to_linker::<T, HasSelf<HostCommon>>(linker, get)
        .map_err(|e| anyhow::anyhow!("linking the host interface: {e}"))?;
    Ok(())
}
