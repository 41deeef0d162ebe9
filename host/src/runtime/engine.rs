//! The wasmtime engine: one for every plugin, with fuel and epoch interruption on, the pooling
//! allocator when the machine allows it, and the epoch ticker thread that drives deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::limits::MAX_MEMORY_MIB;

/// The most stack a guest may use before it traps with a stack overflow.
const WASM_STACK: usize = 1 << 20;
/// The stack of the fiber an async call runs on: the guest's stack plus room for the host
/// functions it calls (wasmtime requires it to exceed [`WASM_STACK`]).
const ASYNC_STACK: usize = WASM_STACK + (1 << 20);

/// How often the ticker advances the epoch: the granularity of every deadline.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Build the engine. With `pooling`, try the pooling allocator first and fall back to on-demand
/// allocation when the machine refuses its reservation (as Spin and wasmCloud do).
///
/// Returns the engine and whether it pools.
///
/// # Errors
/// Only when even the on-demand engine cannot be built (an unsupported CPU).
pub fn build(pooling: bool) -> anyhow::Result<(Engine, bool)> {
    if pooling {
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(super::share::POOL as u32)
            .total_core_instances(256)
            .total_memories(128)
            .total_tables(128)
            .max_memory_size((MAX_MEMORY_MIB << 20) as usize)
            // Reset small touched regions with memset instead of madvise on slot reuse.
            .linear_memory_keep_resident(128 << 10)
            .table_keep_resident(16 << 10)
            // One fiber stack per live instance (async calls run on them).
            .total_stacks(super::share::POOL as u32);
        let mut config = base_config();
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        match Engine::new(&config) {
            Ok(engine) => return Ok((engine, true)),
            Err(e) => tracing::warn!(
                "the pooling allocator is not available here ({e}); allocating instances on demand"
            ),
        }
    }
    let engine = Engine::new(&base_config())
        .map_err(|e| anyhow::anyhow!("cannot create the WebAssembly engine: {e}"))?;
    Ok((engine, false))
}

fn base_config() -> Config {
    let mut config = Config::new();
    // Calls under hard deadlines run on fibers ([`super::Deadlines::Hard`]): the fiber's stack
    // holds the wasm stack (below) plus the host calls made from it.
    config.async_stack_size(ASYNC_STACK);
    // Fuel makes a gate's budget deterministic; epochs bound wall-clock time for every call.
    config.consume_fuel(true);
    config.epoch_interruption(true);
    config.wasm_component_model(true);
    config.max_wasm_stack(WASM_STACK);
    config
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped.
pub struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    /// Start ticking `engine`.
    pub fn start(engine: &Engine) -> EpochTicker {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.clone();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("passepartout-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .ok();
        if thread.is_none() {
            tracing::error!("could not start the epoch ticker: plugin deadlines will not fire");
        }
        EpochTicker { stop, thread }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The epoch deadline, in ticks, for `timeout`.
pub fn ticks(timeout: Duration) -> u64 {
    (timeout.as_millis().div_ceil(EPOCH_TICK.as_millis()) as u64).max(1)
}
