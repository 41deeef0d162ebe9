//! The wasmtime engine: one for every plugin, with fuel and epoch interruption on, the pooling
//! allocator when the machine allows it, and the epoch ticker thread that drives deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

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
        // Linux 6.7+ first (see [`pool`]); then the plain pool; then on demand.
        for page_scan in [true, false] {
            let mut config = base_config();
            config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool(page_scan)));
            match Engine::new(&config) {
                Ok(engine) => return Ok((engine, true)),
                Err(e) if page_scan => {
                    tracing::debug!("pooling without PAGEMAP_SCAN: {e}");
                }
                Err(e) => tracing::warn!(
                    "the pooling allocator is not available here ({e}); allocating instances on demand"
                ),
            }
        }
    }
    let engine = Engine::new(&base_config())
        .map_err(|e| anyhow::anyhow!("cannot create the WebAssembly engine: {e}"))?;
    Ok((engine, false))
}

/// The pooling allocator's settings.
///
/// With `page_scan`, a reused memory slot has the pages the last instance dirtied found with
/// Linux's `PAGEMAP_SCAN` (6.7+) and copied back from the module's memory image, up to 1 MiB,
/// instead of being unmapped: the next instance does not fault them in again. Measured on the
/// Python gate (pii): 186 -> 106 page faults and 1.25 -> 0.96 ms per fresh-instance call with
/// wasmtime 48 as published, which keeps the first 32 regions a scan reports; with the scan
/// continued past them (vendor/README.md) ~0 faults and 0.53 ms (0.19 ms with the rest of the
/// patch). 1 MiB holds pii's ~110 scattered pages, and at most 128 MiB stays resident across the
/// 128 memory slots; shell-guard 25 -> 12 µs. Without the scan wasmtime resets the first
/// `keep_resident` bytes of every memory on every reuse whether touched or not, so the budget
/// stays small there.
fn pool(page_scan: bool) -> PoolingAllocationConfig {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(super::share::POOL as u32)
        .total_core_instances(256)
        .total_memories(128)
        .total_tables(128)
        .max_memory_size((MAX_MEMORY_MIB << 20) as usize)
        // One fiber stack per live instance (async calls run on them).
        .total_stacks(super::share::POOL as u32);
    if page_scan {
        pool.pagemap_scan(Enabled::Yes)
            .linear_memory_keep_resident(1 << 20)
            .table_keep_resident(256 << 10);
    } else {
        pool.pagemap_scan(Enabled::No)
            .linear_memory_keep_resident(128 << 10)
            .table_keep_resident(16 << 10);
    }
    pool
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
    // A gate gives the same verdict for the same input on any machine (and verdicts are
    // memoised on that): nothing a guest computes may depend on the CPU. Two things would:
    // the bits of a NaN that float arithmetic returns (x86 and AArch64 propagate payloads
    // differently; a guest can branch on them with `i32.reinterpret_f32`), and the relaxed
    // SIMD instructions, which by default take each platform's fastest lowering (x86's
    // `cvttps2dq` gives i32::MIN for a NaN where AArch64 gives 0). Canonical NaNs put a check
    // after every float operation, so float-heavy guests run somewhat slower (NOTES-wasmtime.md
    // has no measurement of it; our gates do little float work). Either setting changes the
    // engine's compatibility hash: cached artifacts are compiled once again, under a new key.
    config.cranelift_nan_canonicalization(true);
    config.relaxed_simd_deterministic(true);
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

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::{Instance, Module, Store};

    /// A NaN carrying a payload. Float arithmetic on x86 (and AArch64) hands it back quieted
    /// with its payload kept (0x7fe0_0001); canonicalized, every NaN is this one.
    const PAYLOAD_NAN: u32 = 0x7fa0_0001;
    const CANONICAL_NAN: u32 = 0x7fc0_0000;

    #[test]
    fn a_guest_computes_the_same_bits_on_any_cpu() {
        // Both results are what x86 and AArch64 agree on only with the two settings: without
        // `cranelift_nan_canonicalization` x86 returns 0x7fe0_0001, and without
        // `relaxed_simd_deterministic` x86 truncates a NaN to i32::MIN (AArch64: 0).
        let engine = Engine::new(&base_config()).expect("engine");
        let wasm = wat::parse_str(
            r#"(module
                (func (export "add") (param i32) (result i32)
                    (i32.reinterpret_f32
                        (f32.add (f32.reinterpret_i32 (local.get 0)) (f32.const 1))))
                (func (export "trunc") (param i32) (result i32)
                    (i32x4.extract_lane 0
                        (i32x4.relaxed_trunc_f32x4_s
                            (f32x4.splat (f32.reinterpret_i32 (local.get 0)))))))"#,
        )
        .expect("the text parses");
        let module = Module::new(&engine, &wasm).expect("compiles");
        let mut store = Store::new(&engine, ());
        store.set_fuel(1_000_000).expect("fuel");
        store.set_epoch_deadline(1_000);
        let instance = Instance::new(&mut store, &module, &[]).expect("instance");
        let add = instance
            .get_typed_func::<u32, u32>(&mut store, "add")
            .expect("add");
        let trunc = instance
            .get_typed_func::<u32, i32>(&mut store, "trunc")
            .expect("trunc");
        let sum = add.call(&mut store, PAYLOAD_NAN).expect("add");
        assert_eq!(sum, CANONICAL_NAN, "NaN + 1 gave {sum:#x}");
        let truncated = trunc.call(&mut store, CANONICAL_NAN).expect("trunc");
        assert_eq!(truncated, 0, "relaxed trunc of a NaN gave {truncated:#x}");
    }
}
