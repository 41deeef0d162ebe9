//! What each call's Store holds: the plugin's identity, its memory cap, what it logged, and (for
//! tools and skills) its WASI context built from its grants.

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::bindings::{host_api, types};
use super::error::PluginId;

/// Longest log line kept from a plugin.
const MAX_LOG_LINE: usize = 4096;
/// Most log lines kept per call.
const MAX_LOG_LINES: u32 = 100;
/// How much of a tool's stderr is kept (a panic message without the SDK's hook lands there).
pub const STDERR_CAPACITY: usize = 64 * 1024;
/// Most resources (open files, streams, pollables, HTTP requests) one tool or skill call holds
/// at once; past it the call traps. Each open file is one of the daemon's file descriptors, so
/// that a call cannot take the ones it needs for its clients, its journal and other calls
/// (wasmtime's default allows a million).
pub const MAX_RESOURCES: usize = 1024;
/// Most resources one gate call holds at once: the few its language's runtime opens to print a
/// panic (stderr, a stream, a pollable). A gate has no capability to open more, but each one
/// is host memory, and wasmtime's default allows a million.
pub const MAX_GATE_RESOURCES: usize = 64;

/// State every call has, whatever its role.
pub struct HostCommon {
    pub(crate) plugin: PluginId,
    pub(crate) limiter: MemoryCap,
    log_lines: u32,
    pub(crate) panic: Option<String>,
    /// The plugin's configuration, as JSON (see [`host_api::Host::config`]).
    pub(crate) config: std::sync::Arc<str>,
    /// What the call wrote through WASI, against its disk limit.
    pub(crate) disk: super::capabilities::disk::DiskMeter,
}

impl HostCommon {
    pub(crate) fn new(
        plugin: PluginId,
        memory_cap: u64,
        config: std::sync::Arc<str>,
        disk_cap: u64,
        footprint: super::share::Footprint,
    ) -> HostCommon {
        HostCommon {
            plugin,
            config,
            disk: super::capabilities::disk::DiskMeter::new(disk_cap),
            limiter: MemoryCap {
                cap: usize::try_from(memory_cap).unwrap_or(usize::MAX),
                total: 0,
                hit: false,
                footprint,
            },
            log_lines: 0,
            panic: None,
        }
    }
}

impl HostCommon {
    /// Forget what the previous call of a reused instance logged, hit or said in a panic (its
    /// memory stays, and so does its count against the cap).
    pub(crate) fn reset_call(&mut self) {
        self.log_lines = 0;
        self.limiter.hit = false;
        self.panic = None;
    }

    /// The memory cap, in bytes.
    pub(crate) fn limiter_cap(&self) -> u64 {
        self.limiter.cap as u64
    }
}

impl types::Host for HostCommon {}

impl host_api::Host for HostCommon {
    fn config(&mut self) -> String {
        self.config.to_string()
    }

    fn log(&mut self, level: types::LogLevel, message: String) {
        if self.log_lines >= MAX_LOG_LINES {
            return;
        }
        self.log_lines += 1;
        let mut message = message;
        if message.len() > MAX_LOG_LINE {
            let mut cut = MAX_LOG_LINE;
            while !message.is_char_boundary(cut) {
                cut -= 1;
            }
            message.truncate(cut);
            message.push_str(" [cut]");
        }
        // One line, escaped: a plugin's `\n` or `\r` must not start a log line of its own
        // (a forged "plugin loaded" or "approved" entry), nor its escapes move the cursor.
        let shown = crate::terminal::one_line(&message);
        let p = &self.plugin;
        match level {
            types::LogLevel::Debug => {
                tracing::debug!(plugin = %p.name, version = %p.version, "{shown}")
            }
            types::LogLevel::Info => {
                tracing::info!(plugin = %p.name, version = %p.version, "{shown}")
            }
            types::LogLevel::Warn => {
                tracing::warn!(plugin = %p.name, version = %p.version, "{shown}")
            }
            types::LogLevel::Error => {
                tracing::error!(plugin = %p.name, version = %p.version, "{shown}");
                // The SDK's panic hook says `panicked: ...` just before the instance aborts.
                if let Some(rest) = message.strip_prefix("panicked: ") {
                    self.panic = Some(rest.to_owned());
                }
            }
        }
    }
}

/// The memory cap, remembering whether a plugin ran into it (so that the abort that follows a
/// refused allocation is reported as the memory limit, not as a bare trap).
pub struct MemoryCap {
    cap: usize,
    /// Bytes of every linear memory in the Store together: the cap is for the plugin, not
    /// per memory (a component may have several).
    total: usize,
    pub(crate) hit: bool,
    /// What the plugin was counted at in the instance pool ([`super::share`]): its store may
    /// create no more core instances, memories or tables than that. The counts are wasmtime's
    /// own ([`super::inspect::footprint`]); should one ever fall short, the instantiation fails
    /// rather than take pool room nobody counted, which would starve the gates.
    footprint: super::share::Footprint,
}

/// Most linear memories one call's Store may create.
const MAX_MEMORIES: usize = 8;

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let total = self.total.saturating_sub(current).saturating_add(desired);
        let ok = total <= self.cap;
        if ok {
            self.total = total;
        }
        self.hit |= !ok;
        Ok(ok)
    }

    fn memories(&self) -> usize {
        self.footprint.memories.min(MAX_MEMORIES)
    }

    fn instances(&self) -> usize {
        self.footprint.core_instances
    }

    fn tables(&self) -> usize {
        self.footprint.tables
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _max: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// Store data for a gate call: no capability at all. Its only WASI is an empty environment and
/// a captured stderr ([`super::capabilities::gate_io`]), made on first use, so that a panic
/// printed by a language's own runtime (Rust's std hook reads `RUST_BACKTRACE`, then writes
/// to stderr) reaches the error instead of being lost.
pub struct GateData {
    pub(crate) common: HostCommon,
    /// What `action-context` answers: the tool and effects of the action under check.
    pub(crate) context: std::sync::Arc<super::effects::ActionContext>,
    /// The empty WASI context, its table and stderr, once the gate asks for one of them.
    pub(crate) io: Option<GateIo>,
}

/// What a gate's WASI calls see (see [`GateData`]).
pub struct GateIo {
    wasi: WasiCtx,
    table: ResourceTable,
    stderr: MemoryOutputPipe,
}

impl GateData {
    fn io(&mut self) -> &mut GateIo {
        self.io.get_or_insert_with(|| {
            let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
            let mut b = wasmtime_wasi::WasiCtxBuilder::new();
            b.stderr(stderr.clone());
            let mut table = ResourceTable::new();
            table.set_max_capacity(MAX_GATE_RESOURCES);
            GateIo {
                wasi: b.build(),
                table,
                stderr,
            }
        })
    }
}

impl WasiView for GateData {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        let io = self.io();
        WasiCtxView {
            ctx: &mut io.wasi,
            table: &mut io.table,
        }
    }
}

/// Store data for a tool or skill call: WASI built from the plugin's grants.
pub struct ToolData {
    pub(crate) common: HostCommon,
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) stderr: MemoryOutputPipe,
    /// The programs it may run, where, and until when.
    pub(crate) process: super::capabilities::process::ProcessCall,
    /// The memory store and the access granted.
    pub(crate) memory: super::capabilities::memory::MemoryCall,
    /// wasi:http state (linked only when hosts are granted).
    pub(crate) http: wasmtime_wasi_http::WasiHttpCtx,
    /// The allow-list every outgoing request is checked against.
    pub(crate) net: super::capabilities::net::NetHooks,
}

impl wasmtime_wasi_http::WasiHttpView for ToolData {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.net,
        }
    }
}

impl WasiView for ToolData {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// Access to the common part of either kind of store data.
pub trait CallData: Send + 'static {
    /// The common state.
    fn common(&mut self) -> &mut HostCommon;
    /// What the plugin wrote to stderr, if it had one.
    fn stderr(&self) -> Option<String> {
        None
    }
}

impl CallData for GateData {
    fn common(&mut self) -> &mut HostCommon {
        &mut self.common
    }
    fn stderr(&self) -> Option<String> {
        let io = self.io.as_ref()?;
        Some(String::from_utf8_lossy(&io.stderr.contents()).into_owned())
    }
}

impl CallData for ToolData {
    fn common(&mut self) -> &mut HostCommon {
        &mut self.common
    }
    fn stderr(&self) -> Option<String> {
        let bytes = self.stderr.contents();
        (!bytes.is_empty()).then(|| String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::share::Footprint;
    use wasmtime::component::{Component, Linker};
    use wasmtime::{Engine, Store};

    fn limited(footprint: Footprint) -> MemoryCap {
        MemoryCap {
            cap: 1 << 20,
            total: 0,
            hit: false,
            footprint,
        }
    }

    #[test]
    fn a_plugins_log_message_stays_on_its_own_line() {
        // A `\n` would start a line of the plugin's making in the daemon's log (a forged
        // "plugin loaded" or "approved"), an escape would move the cursor of whoever reads it.
        let ((), text) = crate::logged::logged(|| {
            let mut common = HostCommon::new(
                PluginId {
                    name: "forger".into(),
                    version: "1.0.0".into(),
                },
                1 << 20,
                std::sync::Arc::from("{}"),
                0,
                Footprint::default(),
            );
            host_api::Host::log(
                &mut common,
                types::LogLevel::Warn,
                "first\n WARN passepartout: approved everything\r\u{1b}[2J".into(),
            );
        });
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains(r"first\n WARN passepartout: approved everything\r\x1b[2J"),
            "{text}"
        );
    }

    #[test]
    fn a_store_makes_no_more_core_instances_than_its_plugin_was_counted_at() {
        // A nested component instantiated twice: its one core instance is made twice. The
        // sections count it once; counted at one, the pool would hold room nobody reserved
        // (enough such calls at once and the gates find none: every action refused).
        let bytes = wat::parse_str(
            r#"(component
                (component $c (core module $m) (core instance (instantiate $m)))
                (instance (instantiate $c))
                (instance (instantiate $c)))"#,
        )
        .expect("the text parses");
        let engine = Engine::default();
        let component = Component::new(&engine, &bytes).expect("a component");
        let counted = crate::runtime::inspect::footprint(&component, &bytes);
        assert_eq!(counted.core_instances, 2, "counted as made: {counted:?}");
        let linker = Linker::<MemoryCap>::new(&engine);
        let mut store = Store::new(
            &engine,
            limited(Footprint {
                core_instances: 1,
                ..counted
            }),
        );
        store.limiter(|cap| cap);
        let err = linker
            .instantiate(&mut store, &component)
            .expect_err("a second core instance is refused");
        assert!(
            format!("{err:#}").contains("instance count too high"),
            "{err:#}"
        );
        // Counted right, it is made.
        let mut store = Store::new(&engine, limited(counted));
        store.limiter(|cap| cap);
        linker
            .instantiate(&mut store, &component)
            .expect("two core instances, as counted");
    }
}
