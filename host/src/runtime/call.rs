//! Calling a plugin: every call in a fresh Store (fresh instance, fresh WASI context), under its
//! fuel, deadline and memory cap; every failure turned into a [`PluginError`] naming the plugin
//! and the limit. A trap poisons only that Store, so the next call simply starts afresh.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;

use super::bindings::{gate, hard, types};
use super::capabilities::{Grants, env, fs, memory, net, process};
use super::effects::ActionContext;
use super::engine::ticks;
use super::error::{PluginError, SetupError, ToolFailure};
use super::manifest::MemoryAccess;
use super::plugin::Plugin;
use super::share::Role;
use super::state::{CallData, GateData, HostCommon, MAX_RESOURCES, STDERR_CAPACITY, ToolData};

/// One call of a role's export, written once for both call modes: from the synchronous `Pre`
/// (`$pre`) or from the async one (`$hard`, a `wasmtime::Result` read only by the async
/// branch), through [`Plugin::invoke_async`]. Used in async functions.
macro_rules! call_both {
    ($plugin:expr, $store:expr, $budget:expr, $pre:expr, $hard:expr,
     $role:ident().$method:ident(store $(, $arg:expr)*)) => {
        $plugin.invoke_async(
            $store,
            $budget,
            |store| {
                $pre.instantiate(&mut *store)?
                    .$role()
                    .$method(store $(, $arg)*)
            },
            async |store| {
                $hard?
                    .instantiate_async(&mut *store)
                    .await?
                    .$role()
                    .$method(store $(, $arg)*)
                    .await
            },
        )
        .await
    };
}

/// One call in a fresh instance, as every call is made: the role's room in the instance pool
/// (waited for as a future), a fresh Store from `$store` (a closure of the [`Budget`]) under
/// `$budget`, then the export through [`call_both!`]. `$pres` gives the role's two views
/// ([`Plugin::gate_pres`] and its siblings). Evaluates to the call's result and the spent
/// Store (whose fuel says what the call used); the room is given back when the call ends.
macro_rules! call_fresh {
    ($plugin:expr, $role:expr, $budget:expr, $store:expr, $pres:expr,
     $iface:ident().$method:ident(store $(, $arg:expr)*)) => {{
        let plugin: &Plugin = $plugin;
        let budget: Budget = $budget;
        let (pre, hard) = $pres?;
        let _room = plugin.room_async($role, budget).await?;
        let mut store = ($store)(budget)?;
        let result = call_both!(
            plugin,
            &mut store,
            budget,
            pre,
            hard,
            $iface().$method(store $(, $arg)*)
        );
        (result, store)
    }};
}

/// Fuel a guest burns between two yields to the async executor (about 1–10 ms of work): far
/// more than a Rust gate's whole call (4–18 k), about ten of a Python gate's.
const YIELD_FUEL: u64 = 1_000_000;

/// Room a call's hostcall budget ([`Budget::hostcall`]) leaves beyond its output cap, for what
/// a guest hands the host on the way: a log line (cut at 4 KiB once copied), one WASI write (at
/// most 64 KiB: what `check-write` allows on a file or on the 64 KiB stderr pipe), and the
/// `size_of` wasmtime counts per element of a list.
const HOSTCALL_SLACK: usize = 128 << 10;

/// The least a tool call may hand the host at once, whatever its output cap: one action's
/// arguments whole (the protocol carries at most [`crate::daemon::protocol::MAX_FRAME`], 16 MiB
/// less a byte), which a tool passes on to a program's stdin, a file or the memory store.
const TOOL_HOSTCALL_FLOOR: usize = 16 << 20;

/// The longest tool name ([`super::tools::valid_name`]).
const TOOL_NAME_BYTES: usize = 64;

/// What a gate's or a skill's `describe` may hand the host: one description at its cap
/// (checked at load, [`super::plugin`]).
const DESCRIBE_INFO_BYTES: usize = super::tools::MAX_DESCRIPTION + HOSTCALL_SLACK;

/// What a tool plugin's `describe` may hand the host: as many tools as a plugin may offer, each
/// at the largest name, description and schema [`super::tools::check`] accepts, counted as
/// wasmtime counts them (a list element's `size_of`, then each string's bytes).
const DESCRIBE_TOOLS_BYTES: usize = super::tools::MAX_TOOLS
    * (std::mem::size_of::<types::ToolInfo>()
        + TOOL_NAME_BYTES
        + super::tools::MAX_DESCRIPTION
        + super::tools::MAX_SCHEMA)
    + HOSTCALL_SLACK;

// What each budget must carry, checked when the host is built: a tool, one action's arguments
// whole; a tool plugin's describe, its tools at every cap of `tools::check` (~4.4 MiB in all);
// every call, one WASI write at the most `check-write` allows (the stderr pipe's 64 KiB).
const _: () = assert!(TOOL_HOSTCALL_FLOOR > crate::daemon::protocol::MAX_FRAME);
const _: () = assert!(
    DESCRIBE_TOOLS_BYTES > super::tools::MAX_TOOLS * super::tools::MAX_SCHEMA
        && DESCRIBE_TOOLS_BYTES < 8 << 20
);
const _: () = assert!(HOSTCALL_SLACK > super::state::STDERR_CAPACITY);

/// What wasmtime says when a guest hands the host more than its store's hostcall budget. Its
/// error type (`HostcallFuelExhausted`, vendor/wasmtime-48.0.8/src/runtime/component/func/
/// options.rs) is private, so its text is all there is to recognise it by; the tests of
/// aliased verdicts (`tests` below) fail should an upgrade reword it.
const HOSTCALL_EXHAUSTED: &str = "fuel allocated for hostcalls has been exhausted";

/// A role's two views: the synchronous `Pre`, and the async one (an error when calls have no
/// hard deadlines, read only then).
type Pres<'a, S, H> = Result<(&'a S, wasmtime::Result<&'a H>), PluginError>;

/// Budget for one call.
#[derive(Clone, Copy)]
struct Budget {
    fuel: Option<u64>,
    timeout: Duration,
    /// Most bytes the host copies out of the guest at once ([`Store::set_hostcall_fuel`]): the
    /// call's result, or what the guest hands one host function. The canonical ABI lets every
    /// string of a result point at the same guest bytes, so a check of the result's size after
    /// the copy comes too late: a 16 MiB gate returning `modify` with five aliased strings had
    /// the host allocate 80 MiB before its 1 MiB output cap refused it.
    hostcall: usize,
    /// The output cap a call that runs out of `hostcall` is refused under; `None` for a load
    /// time call (`describe`), whose budget is its own and no policy's.
    output: Option<usize>,
}

impl Plugin {
    fn not_offered(&self, what: &str) -> PluginError {
        PluginError::NotOffered {
            plugin: self.id.clone(),
            what: what.into(),
        }
    }

    fn setup(&self, source: SetupError) -> PluginError {
        PluginError::Setup {
            plugin: self.id.clone(),
            source,
        }
    }

    fn gate_budget(&self) -> Budget {
        Budget {
            fuel: Some(self.limits.gate_fuel),
            timeout: self.limits.timeout,
            hostcall: self.output_cap().saturating_add(HOSTCALL_SLACK),
            output: Some(self.output_cap()),
        }
    }

    /// The output cap (`limits.max_output_kib`), in bytes.
    fn output_cap(&self) -> usize {
        usize::try_from(self.limits.max_output_bytes).unwrap_or(usize::MAX)
    }

    /// Room in the instance pool for one instance in `role`, waiting for it (blocking the
    /// thread) no longer than the call's own deadline ([`super::share`]).
    fn room(&self, role: Role, budget: Budget) -> Result<super::share::Slot, PluginError> {
        self.share
            .take(
                &self.id.name,
                role,
                self.footprint,
                self.concurrency(),
                budget.timeout,
            )
            .map_err(|why| self.busy(why))
    }

    /// As [`Plugin::room`], waiting as a future (in the epoch-only mode, as the thread: see
    /// [`Plugin::wait`]).
    async fn room_async(
        &self,
        role: Role,
        budget: Budget,
    ) -> Result<super::share::Slot, PluginError> {
        if self.hard.is_none() {
            return self.room(role, budget);
        }
        self.share
            .take_async(
                &self.id.name,
                role,
                self.footprint,
                self.concurrency(),
                budget.timeout,
            )
            .await
            .map_err(|why| self.busy(why))
    }

    fn concurrency(&self) -> usize {
        usize::try_from(self.limits.concurrency).unwrap_or(super::share::PER_PLUGIN)
    }

    fn busy(&self, why: String) -> PluginError {
        PluginError::Busy {
            plugin: self.id.clone(),
            why,
        }
    }

    /// The budget of load-time calls (`describe`): short and the same for every plugin, so that
    /// no manifest or policy can make loading wait on a plugin; `hostcall` is the most its
    /// answer may hold.
    fn describe_budget(hostcall: usize) -> Budget {
        Budget {
            fuel: Some(super::limits::DESCRIBE_FUEL),
            timeout: super::limits::DESCRIBE_TIMEOUT,
            hostcall,
            output: None,
        }
    }

    /// What every call's store holds for the host: who the plugin is, its memory limiter,
    /// its configuration and its disk budget.
    fn common(&self) -> HostCommon {
        HostCommon::new(
            self.id.clone(),
            self.limits.memory_bytes,
            self.config.clone(),
            self.limits.disk_bytes,
            self.footprint,
        )
    }

    fn gate_store(&self, context: &Arc<ActionContext>) -> Result<Store<GateData>, PluginError> {
        self.gate_store_with(context, self.gate_budget())
    }

    fn gate_store_with(
        &self,
        context: &Arc<ActionContext>,
        budget: Budget,
    ) -> Result<Store<GateData>, PluginError> {
        let data = GateData {
            common: self.common(),
            context: context.clone(),
            io: None,
        };
        self.store(data, budget)
    }

    /// A store for a load-time call (`describe`): the plugin's interfaces stay linked, but it
    /// runs with no capability at all (no mount, variable, host, program or memory), whatever
    /// it is granted. A description needs none, and a build being audited or updated must not
    /// act with the grants of the plugin it would replace before anyone consented.
    /// Its clocks are stopped and its randomness fixed ([`super::capabilities::frozen`]): what
    /// it describes follows from the pinned component alone.
    fn bare_tool_store(&self, budget: Budget) -> Result<Store<ToolData>, PluginError> {
        self.tool_store_with(&Grants::default(), None, None, budget, true)
    }

    /// A store for a tool call with the plugin's grants; `writes`: the only memory headlines
    /// the call may write, for a tool that declares its memory writes
    /// ([`super::effects::memory_binding`]).
    fn tool_store(
        &self,
        writes: Option<Vec<String>>,
        budget: Budget,
    ) -> Result<Store<ToolData>, PluginError> {
        self.tool_store_with(&self.grants, self.memory.as_ref(), writes, budget, false)
    }

    /// A store for a tool that says it changes nothing: the plugin's grants made read-only
    /// ([`Grants::read_only`]). Gates pass such a tool without an explanation and no undo
    /// point is taken before it, so its word must hold whatever its code does.
    fn read_only_tool_store(&self, budget: Budget) -> Result<Store<ToolData>, PluginError> {
        let memory = self.memory.as_ref().map(|m| memory::MemoryCtx {
            store: m.store.clone(),
            access: MemoryAccess::Read,
        });
        self.tool_store_with(
            &self.grants.read_only(),
            memory.as_ref(),
            None,
            budget,
            false,
        )
    }

    /// A store for a skill's `triggers` and `prompt`: the plugin's grants made read-only,
    /// as for a read-only tool. No gate sees these calls (they run on every event, before
    /// any action exists), so they may look but change nothing: no write, no program, no
    /// network host, memory reads only.
    fn skill_store(&self, budget: Budget) -> Result<Store<ToolData>, PluginError> {
        self.read_only_tool_store(budget)
    }

    fn tool_store_with(
        &self,
        grants: &Grants,
        memory: Option<&memory::MemoryCtx>,
        writes: Option<Vec<String>>,
        budget: Budget,
        frozen: bool,
    ) -> Result<Store<ToolData>, PluginError> {
        let mut b = WasiCtxBuilder::new();
        if frozen {
            super::capabilities::frozen::freeze(&mut b);
        }
        // Deny by default: no sockets, no name lookup, no inherited env, args or stdio.
        b.allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        fs::preopen(&mut b, &grants.fs).map_err(|e| self.setup(e.into()))?;
        env::apply(&mut b, &grants.env);
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        b.stderr(stderr.clone());
        // The call's own deadline, which host calls that wait (programs, HTTP) must respect.
        let deadline = Instant::now() + budget.timeout;
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        let data = ToolData {
            common: self.common(),
            wasi: b.build(),
            table,
            stderr,
            process: process::ProcessCall {
                plugin: self.id.clone(),
                ctx: (!grants.process.is_empty()).then(|| process::ProcessCtx {
                    programs: grants.process.clone(),
                    mounts: grants.fs.clone(),
                    env: grants.env.clone(),
                    deadline,
                    confine: grants.confine,
                    trampoline: self.trampoline.clone(),
                    net: grants.net.clone(),
                    file_size: self.limits.disk_bytes,
                    program_memory: self.limits.program_memory_bytes,
                }),
            },
            http: wasmtime_wasi_http::WasiHttpCtx::new(),
            net: net::NetHooks {
                grants: grants.net.clone(),
                deadline,
            },
            memory: memory::MemoryCall {
                plugin: self.id.clone(),
                ctx: memory.map(|m| memory::MemoryCtx {
                    store: m.store.clone(),
                    access: m.access,
                }),
                writes,
            },
        };
        self.store(data, budget)
    }

    fn store<T: CallData>(&self, data: T, budget: Budget) -> Result<Store<T>, PluginError> {
        let mut store = Store::new(&self.engine, data);
        store.limiter(|d| &mut d.common().limiter);
        store
            .set_fuel(budget.fuel.unwrap_or(u64::MAX))
            .map_err(|source| {
                self.setup(SetupError::Budget {
                    what: "fuel",
                    source,
                })
            })?;
        // Bytes the host reads from the guest in one go (a call's result, or what the guest
        // passes one host function): the canonical ABI lets many strings of a result point at
        // the same guest bytes, so without this a guest holding 32 MiB could ask for terabytes
        // of copies, and with wasmtime's default (128 MiB) for far more than its output cap.
        store.set_hostcall_fuel(budget.hostcall);
        store.set_epoch_deadline(ticks(budget.timeout));
        store.epoch_deadline_trap();
        if self.hard.is_some() {
            // A guest computing for long gives its async worker back every so often (a few
            // milliseconds of work): other requests go on, and the call's own timeout can end
            // it there. The epoch deadline still traps it wherever it is.
            store
                .fuel_async_yield_interval(Some(YIELD_FUEL))
                .map_err(|source| {
                    self.setup(SetupError::Budget {
                        what: "yield interval",
                        source,
                    })
                })?;
        }
        Ok(store)
    }

    /// Ask the gate for its verdict on `action`, in a fresh instance.
    ///
    /// # Errors
    /// A [`PluginError`] when the gate traps, runs out of fuel, times out, exceeds its memory,
    /// panics, calls anything it was not granted, or answers with more than its output cap.
    /// Callers treat any error as a rejection (fail closed).
    ///
    /// The gate's `action-context` answers "no tool, no effects": use [`Plugin::check_in`]
    /// with the context the host derives ([`super::effects::Catalog::context`]); verify does.
    pub fn check(
        &self,
        action: &types::Action,
        signal: &types::SignalView,
    ) -> Result<types::Verdict, PluginError> {
        self.check_in(action, signal, &Arc::default())
    }

    /// As [`Plugin::check`], with `context` as what the gate learns through `action-context`.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub fn check_in(
        &self,
        action: &types::Action,
        signal: &types::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<types::Verdict, PluginError> {
        self.wait(self.check_in_async(action, signal, context))
    }

    /// As [`Plugin::check_in`], as a future (the request path's way to ask a gate).
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub async fn check_in_async(
        &self,
        action: &types::Action,
        signal: &types::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<types::Verdict, PluginError> {
        self.counted(self.check_metered_uncounted(action, signal, context))
            .await
            .map(|(verdict, _)| verdict)
    }

    /// As [`Plugin::check_in_async`], also returning the fuel the call used (instantiation
    /// included): the walk's way, whose trace records it.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub async fn check_in_metered_async(
        &self,
        action: &types::Action,
        signal: &types::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<(types::Verdict, u64), PluginError> {
        self.counted(self.check_metered_uncounted(action, signal, context))
            .await
    }

    /// As [`Plugin::check`], also returning the fuel the call used (instantiation included).
    /// For a given gate and input this number is the same on every machine.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub fn check_metered(
        &self,
        action: &types::Action,
        signal: &types::SignalView,
    ) -> Result<(types::Verdict, u64), PluginError> {
        self.wait(self.counted(self.check_metered_uncounted(action, signal, &Arc::default())))
    }

    async fn check_metered_uncounted(
        &self,
        action: &types::Action,
        signal: &types::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<(types::Verdict, u64), PluginError> {
        let (verdict, store) = call_fresh!(
            self,
            Role::Gate,
            self.gate_budget(),
            |budget| self.gate_store_with(context, budget),
            self.gate_pres(),
            passepartout_plugin_gate().call_check(store, action, signal)
        );
        let used = self
            .limits
            .gate_fuel
            .saturating_sub(store.get_fuel().unwrap_or(0));
        self.telemetry.fuel(used);
        Ok((self.check_verdict_size(verdict?)?, used))
    }

    /// The async-export view of one role, when calls have hard deadlines. Only read by the
    /// async branch of [`Plugin::invoke`], which runs only when `self.hard` is set.
    fn hard_roles<R>(
        &self,
        role: impl FnOnce(&super::plugin::HardRoles) -> Option<&R>,
    ) -> wasmtime::Result<&R> {
        self.hard
            .as_ref()
            .and_then(role)
            .ok_or_else(|| wasmtime::format_err!("{}: no async view of this role", self.id))
    }

    /// Make one call into the guest, in `store`, under `budget`. With hard deadlines the call is
    /// a future dropped at the deadline (the Store is then spent: callers discard it), wherever
    /// the guest is, host calls included; else a synchronous call that epochs interrupt.
    async fn invoke_async<T: CallData + Send, R>(
        &self,
        store: &mut Store<T>,
        budget: Budget,
        sync: impl FnOnce(&mut Store<T>) -> wasmtime::Result<R>,
        hard: impl AsyncFnOnce(&mut Store<T>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        if self.hard.is_none() {
            return sync(store).map_err(|e| classify(store, &e, budget));
        }
        let outcome = tokio::time::timeout(budget.timeout, hard(&mut *store)).await;
        match outcome {
            Ok(result) => result.map_err(|e| classify(store, &e, budget)),
            Err(_) => Err(PluginError::TimedOut {
                plugin: self.id.clone(),
                timeout: budget.timeout,
            }),
        }
    }

    /// As [`Plugin::invoke_async`], waited for by the thread (a [`LiveGate`]).
    fn invoke<T: CallData + Send, R>(
        &self,
        store: &mut Store<T>,
        budget: Budget,
        sync: impl FnOnce(&mut Store<T>) -> wasmtime::Result<R>,
        hard: impl AsyncFnOnce(&mut Store<T>) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        self.wait(self.invoke_async(store, budget, sync, hard))
    }

    /// Wait for one of this plugin's calls from synchronous code. In the epoch-only mode
    /// ([`super::Deadlines::Epoch`], for measuring) a call never waits on a future (its room
    /// and the call are synchronous), and the WASI host calls it makes enter tokio themselves,
    /// so it runs outside any runtime; else on [`crate::blocking::wait`].
    fn wait<R>(&self, call: impl std::future::Future<Output = R>) -> R {
        if self.hard.is_some() {
            return crate::blocking::wait(call);
        }
        let mut call = std::pin::pin!(call);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match call.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(r) => r,
            std::task::Poll::Pending => crate::blocking::wait(call),
        }
    }

    /// `call`, counted in the plugin's telemetry.
    async fn counted<T>(
        &self,
        call: impl std::future::Future<Output = Result<T, PluginError>>,
    ) -> Result<T, PluginError> {
        let start = Instant::now();
        let result = call.await;
        self.telemetry.record(start, &result);
        result
    }

    fn check_verdict_size(&self, verdict: types::Verdict) -> Result<types::Verdict, PluginError> {
        let size = match &verdict {
            types::Verdict::Pass => 0,
            types::Verdict::Reject(r) | types::Verdict::RequireApproval(r) => r.len(),
            types::Verdict::Modify(a) => {
                a.args.len()
                    + a.target.len()
                    + a.tool.as_ref().map_or(0, String::len)
                    + a.text.as_ref().map_or(0, String::len)
                    + a.explanation.as_ref().map_or(0, String::len)
            }
        };
        self.check_output_size(size)?;
        Ok(verdict)
    }

    fn check_output_size(&self, size: usize) -> Result<(), PluginError> {
        let cap = self.output_cap();
        if size > cap {
            return Err(PluginError::OutputTooLarge {
                plugin: self.id.clone(),
                size,
                cap,
            });
        }
        Ok(())
    }

    /// Call tool `name` with `args` (a JSON object), in a fresh instance with the plugin's
    /// grants, under the tool's deadline (its own, else the plugin's, else the seed's).
    ///
    /// # Errors
    /// [`PluginError::Tool`] for the tool's own error; [`PluginError::NotOffered`] for a tool
    /// it does not have; any limit or trap as for [`Plugin::check`].
    pub fn call_tool(&self, name: &str, args: &str) -> Result<String, PluginError> {
        self.wait(self.call_tool_async(name, args))
    }

    /// As [`Plugin::call_tool`], as a future (the request path's way to run a tool).
    ///
    /// # Errors
    /// As for [`Plugin::call_tool`].
    pub async fn call_tool_async(&self, name: &str, args: &str) -> Result<String, PluginError> {
        self.counted(self.call_tool_uncounted(name, args)).await
    }

    async fn call_tool_uncounted(&self, name: &str, args: &str) -> Result<String, PluginError> {
        // A plugin that is no tool says so first (the call below would too, later).
        let (_, _) = self.tool_pres()?;
        if !self.tools.iter().any(|t| t.name == name) {
            return Err(self.not_offered(&format!("has no tool {name:?}")));
        }
        // Limits are the plugin's, by its own name for the tool; an alias is only what the
        // tool is offered as.
        let own = self.tool_aliases.get(name).map_or(name, String::as_str);
        let budget = Budget {
            fuel: self.limits.tool_fuel,
            timeout: self.limits.tool_timeout(own),
            // Its output, or what it hands a host function at once (a program's stdin, a
            // file's bytes), whichever is more.
            hostcall: self
                .output_cap()
                .max(TOOL_HOSTCALL_FLOOR)
                .saturating_add(HOSTCALL_SLACK),
            output: Some(self.output_cap()),
        };
        let read_only = self.tools.iter().any(|t| t.name == name && t.read_only);
        // What the gates were shown of this call (`Catalog::context` derives the same from the
        // same arguments) binds what it may write to memory.
        let writes = if read_only {
            None
        } else {
            super::effects::memory_binding(self.effect_specs.get(name), args)
        };
        let (result, store) = call_fresh!(
            self,
            Role::Tool,
            budget,
            |budget| if read_only {
                self.read_only_tool_store(budget)
            } else {
                self.tool_store(writes.clone(), budget)
            },
            self.tool_pres(),
            passepartout_plugin_tool().call_call(store, own, args)
        );
        let given = budget.fuel.unwrap_or(u64::MAX);
        self.telemetry
            .fuel(given.saturating_sub(store.get_fuel().unwrap_or(given)));
        match result? {
            Ok(output) => {
                self.check_output_size(output.len())?;
                Ok(output)
            }
            Err(e) => {
                // An error's text reaches the journal and the model as an output does: the
                // same cap.
                if let types::ToolError::InvalidArgs(m)
                | types::ToolError::Denied(m)
                | types::ToolError::Failed(m) = &e
                {
                    self.check_output_size(m.len())?;
                }
                Err(PluginError::Tool {
                    plugin: self.id.clone(),
                    tool: name.to_owned(),
                    error: match e {
                        types::ToolError::InvalidArgs(m) => ToolFailure::InvalidArgs(m),
                        types::ToolError::Denied(m) => ToolFailure::Denied(m),
                        types::ToolError::Failed(m) => ToolFailure::Failed(m),
                        types::ToolError::TimedOut => ToolFailure::TimedOut,
                    },
                })
            }
        }
    }

    /// Whether the skill handles `signal`.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub fn skill_triggers(&self, signal: &types::SignalView) -> Result<bool, PluginError> {
        self.wait(self.skill_triggers_async(signal))
    }

    /// As [`Plugin::skill_triggers`], as a future.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub async fn skill_triggers_async(
        &self,
        signal: &types::SignalView,
    ) -> Result<bool, PluginError> {
        self.counted(async {
            call_fresh!(
                self,
                Role::Tool,
                self.skill_budget(),
                |budget| self.skill_store(budget),
                self.skill_pres(),
                passepartout_plugin_skill().call_triggers(store, signal)
            )
            .0
        })
        .await
    }

    /// A role's views: the synchronous one (`sync`), and the async one (`hard`) when calls
    /// have hard deadlines; [`PluginError::NotOffered`] when the plugin does not offer the role.
    fn pres<'a, S, H>(
        &'a self,
        sync: Option<&'a S>,
        hard: impl FnOnce(&super::plugin::HardRoles) -> Option<&H>,
        role: &str,
    ) -> Pres<'a, S, H> {
        let pre = sync.ok_or_else(|| self.not_offered(&format!("is not a {role}")))?;
        Ok((pre, self.hard_roles(hard)))
    }

    fn gate_pres(
        &self,
    ) -> Pres<'_, gate::GatePluginPre<GateData>, hard::gate::GatePluginPre<GateData>> {
        self.pres(self.gate.as_ref(), |h| h.gate.as_ref(), "gate")
    }

    fn tool_pres(
        &self,
    ) -> Pres<'_, super::bindings::tool::ToolPluginPre<ToolData>, hard::tool::ToolPluginPre<ToolData>>
    {
        self.pres(self.tool.as_ref(), |h| h.tool.as_ref(), "tool")
    }

    fn skill_pres(
        &self,
    ) -> Pres<
        '_,
        super::bindings::skill::SkillPluginPre<ToolData>,
        hard::skill::SkillPluginPre<ToolData>,
    > {
        self.pres(self.skill.as_ref(), |h| h.skill.as_ref(), "skill")
    }

    /// The skill's prompt for `signal`, if it has one.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub fn skill_prompt(&self, signal: &types::SignalView) -> Result<Option<String>, PluginError> {
        self.wait(self.skill_prompt_async(signal))
    }

    /// As [`Plugin::skill_prompt`], as a future.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub async fn skill_prompt_async(
        &self,
        signal: &types::SignalView,
    ) -> Result<Option<String>, PluginError> {
        self.counted(async {
            let prompt = call_fresh!(
                self,
                Role::Tool,
                self.skill_budget(),
                |budget| self.skill_store(budget),
                self.skill_pres(),
                passepartout_plugin_skill().call_prompt(store, signal)
            )
            .0?;
            self.check_output_size(prompt.as_ref().map_or(0, String::len))?;
            Ok(prompt)
        })
        .await
    }

    /// A skill call's budget: the tools' fuel, and the deadline of gate and skill calls
    /// (`timeout_ms`, capped at the default unless granted), as the audit says.
    fn skill_budget(&self) -> Budget {
        Budget {
            fuel: self.limits.tool_fuel,
            timeout: self.limits.timeout,
            // A prompt at its output cap; a skill's grants are read-only, so it hands the host
            // little else (queries, log lines, stderr).
            hostcall: self.output_cap().saturating_add(HOSTCALL_SLACK),
            output: Some(self.output_cap()),
        }
    }

    pub(crate) fn describe_gate(&self) -> Result<types::GateInfo, PluginError> {
        self.describe(|| async {
            let (result, store) = call_fresh!(
                self,
                Role::Gate,
                Self::describe_budget(DESCRIBE_INFO_BYTES),
                |budget| self.gate_store_with(&Arc::default(), budget),
                self.gate_pres(),
                passepartout_plugin_gate().call_describe(store)
            );
            Ok((result, describe_fuel_used(&store)))
        })
    }

    pub(crate) fn describe_tools(&self) -> Result<Vec<types::ToolInfo>, PluginError> {
        self.describe(|| async {
            let (result, store) = call_fresh!(
                self,
                Role::Gate,
                Self::describe_budget(DESCRIBE_TOOLS_BYTES),
                |budget| self.bare_tool_store(budget),
                self.tool_pres(),
                passepartout_plugin_tool().call_describe(store)
            );
            Ok((result, describe_fuel_used(&store)))
        })
    }

    pub(crate) fn describe_skill(&self) -> Result<types::SkillInfo, PluginError> {
        self.describe(|| async {
            let (result, store) = call_fresh!(
                self,
                Role::Gate,
                Self::describe_budget(DESCRIBE_INFO_BYTES),
                |budget| self.bare_tool_store(budget),
                self.skill_pres(),
                passepartout_plugin_skill().call_describe(store)
            );
            Ok((result, describe_fuel_used(&store)))
        })
    }

    /// Make a load-time call (`attempt`: its result and the fuel it burned), once more in a
    /// fresh instance when it timed out having burned less than half its fuel. Its deadline is
    /// wall-clock time: on a starved machine (two cores under load) a big guest's instantiation
    /// alone can outlast it, and a plugin refused at load fails closed but harshly (the daemon
    /// or the install stops). A guest that computes is stopped by its fuel or its first deadline;
    /// one that waits in a host call (it holds no capability, so only a sleep) is refused after
    /// two: the load is held up by at most twice [`super::limits::DESCRIBE_TIMEOUT`].
    fn describe<R, F>(&self, attempt: impl Fn() -> F) -> Result<R, PluginError>
    where
        F: std::future::Future<Output = Result<(Result<R, PluginError>, u64), PluginError>>,
    {
        self.wait(async {
            let (first, used) = attempt().await?;
            match first {
                Err(PluginError::TimedOut { .. }) if used < super::limits::DESCRIBE_FUEL / 2 => {
                    tracing::warn!(
                        "{}: describe timed out having burned {used} fuel (a starved machine, \
                         or a guest waiting); trying once more in a fresh instance",
                        self.id
                    );
                    attempt().await?.0
                }
                other => other,
            }
        })
    }

    /// An instance of the gate kept alive across calls: the cheapest way to call a gate many
    /// times. Each call gets the full fuel budget and deadline again. A gate keeps no state a
    /// caller can observe, but memory it allocated does persist between calls of one
    /// `LiveGate`; use [`Plugin::check`] when that matters.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub fn live_gate(&self) -> Result<LiveGate<'_>, PluginError> {
        let (pre, hard) = self.gate_pres()?;
        let room = self.room(Role::Gate, self.gate_budget())?;
        let mut store = self.gate_store(&Arc::default())?;
        let instance = self.invoke(
            &mut store,
            self.gate_budget(),
            |store| pre.instantiate(store).map(LiveInstance::Sync),
            async |store| Ok(LiveInstance::Hard(hard?.instantiate_async(store).await?)),
        )?;
        Ok(LiveGate {
            plugin: self,
            store,
            instance,
            room: Some(room),
        })
    }
}

/// A gate instance reused across calls (see [`Plugin::live_gate`]).
pub struct LiveGate<'a> {
    plugin: &'a Plugin,
    store: Store<GateData>,
    instance: LiveInstance,
    /// Its room in the pool, held while it lives.
    room: Option<super::share::Slot>,
}

/// The kept instance, with the exports of the plugin's call mode.
enum LiveInstance {
    Sync(gate::GatePlugin),
    Hard(hard::gate::GatePlugin),
}

impl LiveInstance {
    fn mismatch() -> wasmtime::Error {
        wasmtime::format_err!("this gate instance was made for the other call mode")
    }
}

impl LiveGate<'_> {
    /// The gate's verdict on `action`.
    ///
    /// # Errors
    /// As for [`Plugin::check`]. After an error the instance is replaced by a fresh one.
    pub fn check(
        &mut self,
        action: &types::Action,
        signal: &types::SignalView,
    ) -> Result<types::Verdict, PluginError> {
        self.check_in(action, signal, &Arc::default())
    }

    /// As [`LiveGate::check`], with `context` as what `action-context` answers.
    ///
    /// # Errors
    /// As for [`Plugin::check`].
    pub fn check_in(
        &mut self,
        action: &types::Action,
        signal: &types::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<types::Verdict, PluginError> {
        let start = Instant::now();
        let result = self.check_uncounted(action, signal, context);
        self.plugin.telemetry.record(start, &result);
        result
    }

    fn check_uncounted(
        &mut self,
        action: &types::Action,
        signal: &types::SignalView,
        context: &Arc<ActionContext>,
    ) -> Result<types::Verdict, PluginError> {
        let budget = self.plugin.gate_budget();
        let store = &mut self.store;
        store.data_mut().common.reset_call();
        store.data_mut().context = context.clone();
        store
            .set_fuel(self.plugin.limits.gate_fuel)
            .map_err(|source| {
                self.plugin.setup(SetupError::Budget {
                    what: "fuel",
                    source,
                })
            })?;
        store.set_epoch_deadline(ticks(budget.timeout));
        let instance = &self.instance;
        let result = self.plugin.invoke(
            store,
            budget,
            |store| match instance {
                LiveInstance::Sync(g) => g
                    .passepartout_plugin_gate()
                    .call_check(store, action, signal),
                LiveInstance::Hard(_) => Err(LiveInstance::mismatch()),
            },
            async |store| match instance {
                LiveInstance::Hard(g) => {
                    g.passepartout_plugin_gate()
                        .call_check(store, action, signal)
                        .await
                }
                LiveInstance::Sync(_) => Err(LiveInstance::mismatch()),
            },
        );
        match result {
            Ok(v) => self.plugin.check_verdict_size(v),
            Err(err) => {
                // A trap or a dropped call spends the Store: start over in a new one.
                // Give back the spent instance's room first: a full pool must not keep the
                // replacement waiting on its own predecessor.
                self.room = None;
                if let Ok(fresh) = self.plugin.live_gate() {
                    *self = fresh;
                }
                Err(err)
            }
        }
    }
}

/// Fuel a load-time call burned, read from its spent Store.
fn describe_fuel_used<T>(store: &Store<T>) -> u64 {
    let given = super::limits::DESCRIBE_FUEL;
    given.saturating_sub(store.get_fuel().unwrap_or(given))
}

/// Turn a failed call into the error that says which limit or rule stopped it.
fn classify<T: CallData>(
    store: &mut Store<T>,
    err: &wasmtime::Error,
    budget: Budget,
) -> PluginError {
    let stderr = store.data().stderr();
    let common = store.data_mut().common();
    let plugin = common.plugin.clone();
    match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => {
            return PluginError::OutOfFuel {
                plugin,
                fuel: budget.fuel.unwrap_or(u64::MAX),
            };
        }
        Some(Trap::Interrupt) => {
            return PluginError::TimedOut {
                plugin,
                timeout: budget.timeout,
            };
        }
        Some(Trap::StackOverflow) => return PluginError::StackOverflow { plugin },
        // A guest's own stack lives in its linear memory: overflowing it walks off the start.
        Some(Trap::MemoryOutOfBounds) => {
            tracing::debug!("{plugin}: {err:#}");
            return PluginError::Trapped {
                plugin,
                detail: "out-of-bounds memory access, most often its own stack overflowing \
                         (unbounded recursion)"
                    .into(),
            };
        }
        _ => {}
    }
    // More asked of the host at once than the call's hostcall budget: a result past the output
    // cap, or as much handed to a host function. wasmtime refused it before copying, so which
    // of the two, and its size, are unknown; the error says both.
    if let Some(cap) = budget.output
        && hostcall_exhausted(err)
    {
        tracing::debug!("{plugin}: {err:#}");
        return PluginError::TooMuchAtOnce {
            plugin,
            budget: budget.hostcall,
            cap,
        };
    }
    // A refused allocation is followed by an abort (a trap, or a WASI call to print the error):
    // report the cap, which is the cause.
    if common.limiter.hit {
        return PluginError::OutOfMemory {
            plugin,
            cap_bytes: common.limiter_cap(),
        };
    }
    if common.disk.hit {
        return PluginError::DiskLimit {
            plugin,
            cap_bytes: common.disk.cap,
        };
    }
    // A full stderr makes the guest's next write fail (a write that does not fit is refused
    // whole, so "full" is within a few KiB of the cap), and Rust's std aborts on that.
    if stderr
        .as_ref()
        .is_some_and(|s| s.len() + STDERR_SLACK >= STDERR_CAPACITY)
    {
        tracing::debug!("{plugin}: {err:#}");
        return PluginError::Trapped {
            plugin,
            detail: format!(
                "wrote more than {} KiB to stderr, its cap, and stopped there; log with \
                 `host.log`, or write less",
                STDERR_CAPACITY >> 10
            ),
        };
    }
    // A panic is a guest that aborted (`unreachable`) after saying so; what it said alone
    // proves nothing (a plugin can log "panicked: " and then do anything else).
    let aborted = matches!(
        err.downcast_ref::<Trap>(),
        Some(Trap::UnreachableCodeReached)
    );
    if let Some(message) = common.panic.take().filter(|_| aborted) {
        return PluginError::Panicked { plugin, message };
    }
    // A call to an import the plugin holds no capability for (a stub of ours).
    if let Some(super::stubs::DeniedImport(import)) = err.downcast_ref() {
        return PluginError::Denied {
            plugin,
            import: import.clone(),
        };
    }
    // The wasm backtrace (the context wasmtime wraps a trap in) is for the log; the person and
    // the model get what happened: the trap, or what the host call that failed said.
    tracing::debug!("{plugin}: {err:?}");
    let detail = err.root_cause().to_string();
    if aborted && let Some(message) = stderr.as_deref().and_then(panic_from_stderr) {
        return PluginError::Panicked { plugin, message };
    }
    let detail = match stderr {
        Some(s) => format!("{detail}; stderr: {}", tail(&s, 1024)),
        None => detail,
    };
    PluginError::Trapped { plugin, detail }
}

/// Whether `err` is wasmtime refusing to copy more out of the guest than the store's hostcall
/// budget ([`HOSTCALL_EXHAUSTED`]), wherever in the chain of contexts it is.
fn hostcall_exhausted(err: &wasmtime::Error) -> bool {
    err.chain()
        .any(|cause| cause.to_string().contains(HOSTCALL_EXHAUSTED))
}

/// How close to its cap a plugin's stderr counts as full.
const STDERR_SLACK: usize = 4096;

/// Rust's default panic message on stderr: `thread '...' panicked at src/x.rs:1:2:\nmessage`.
fn panic_from_stderr(stderr: &str) -> Option<String> {
    let at = stderr.find("panicked at ")?;
    Some(
        stderr[at + "panicked at ".len()..]
            .trim()
            .replace('\n', " "),
    )
}

fn tail(s: &str, max: usize) -> &str {
    let mut start = s.len().saturating_sub(max);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    s[start..].trim()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::path::PathBuf;

    use super::*;
    use crate::runtime::plugin::{Origin, PluginSource};
    use crate::runtime::{Deadlines, Limit, Policy, Runtime, RuntimeConfig};

    #[test]
    fn finds_a_panic_on_stderr() {
        let stderr =
            "thread '<unnamed>' panicked at src/lib.rs:3:5:\nboom\nnote: run with RUST_BACKTRACE";
        assert!(panic_from_stderr(stderr).is_some_and(|m| m.contains("boom")));
    }

    /// Where the hand-written gate's strings point: zeroed memory (valid UTF-8) up to where its
    /// allocator starts, at 3 MiB.
    const BUFFER: u32 = 0x1_0000;
    /// More than a gate's default output cap (1 MiB) and its slack, less than its memory.
    const ALIASED: u32 = 2 << 20;

    /// A gate written by hand in the component text format, to answer what no SDK would.
    /// `describe` gives a description of `described` bytes of [`BUFFER`] (0: a sentence of
    /// its own); `check` logs `logged` bytes of it (0: no log line), then answers `modify` with
    /// all five strings of the action being the same `aliased` bytes (0: `pass`).
    fn hand_written_gate(described: u32, logged: u32, aliased: u32) -> Vec<u8> {
        let description = if described == 0 {
            "(i32.store (i32.const 0x100) (i32.const 0x200))
             (i32.store (i32.const 0x104) (i32.const 22))"
                .to_owned()
        } else {
            format!(
                "(i32.store (i32.const 0x100) (i32.const {BUFFER}))
                 (i32.store (i32.const 0x104) (i32.const {described}))"
            )
        };
        let log = if logged == 0 {
            String::new()
        } else {
            format!("(call $log (i32.const 1) (i32.const {BUFFER}) (i32.const {logged}))")
        };
        // The verdict at 0x400: its case, then the action at offset 4 (target, tool, args,
        // text, explanation; each option a flag, then its string at the next 4 bytes).
        let verdict = if aliased == 0 {
            "(i32.store8 (i32.const 0x400) (i32.const 0))".to_owned()
        } else {
            let string = |at: u32| {
                format!(
                    "(i32.store (i32.const {at}) (i32.const {BUFFER}))
                     (i32.store (i32.const {}) (i32.const {aliased}))",
                    at + 4
                )
            };
            let some = |at: u32| format!("(i32.store8 (i32.const {at}) (i32.const 1))");
            [
                "(i32.store8 (i32.const 0x400) (i32.const 1))".to_owned(),
                string(0x404),
                some(0x40c),
                string(0x410),
                string(0x418),
                some(0x420),
                string(0x424),
                some(0x42c),
                string(0x430),
            ]
            .join("\n")
        };
        let text = format!(
            r#"(component
  (type $types-t (instance
    (type (;0;) (enum "debug" "info" "warn" "error"))
    (export (;1;) "log-level" (type (eq 0)))
    (type (;2;) (option string))
    (type (;3;) (record (field "target" string) (field "tool" 2) (field "args" string)
      (field "text" 2) (field "explanation" 2)))
    (export (;4;) "action" (type (eq 3)))
    (type (;5;) (record (field "kind" string) (field "sensor" 2) (field "text" 2)
      (field "source" 2) (field "depth" u32) (field "payload" string)))
    (export (;6;) "signal-view" (type (eq 5)))
    (type (;7;) (variant (case "pass") (case "modify" 4) (case "reject" string)
      (case "require-approval" string)))
    (export (;8;) "verdict" (type (eq 7)))
    (type (;9;) (record (field "description" string)))
    (export (;10;) "gate-info" (type (eq 9)))
  ))
  (import "passepartout:plugin/types@0.1.1" (instance $types (type $types-t)))
  (alias export $types "log-level" (type $log-level))
  (alias export $types "action" (type $action))
  (alias export $types "signal-view" (type $signal-view))
  (alias export $types "verdict" (type $verdict))
  (alias export $types "gate-info" (type $gate-info))
  (type $host-t (instance
    (alias outer 1 $log-level (type (;0;)))
    (export (;1;) "log-level" (type (eq 0)))
    (type (;2;) (func (param "level" 1) (param "message" string)))
    (export (;0;) "log" (func (type 2)))
  ))
  (import "passepartout:plugin/host@0.1.1" (instance $host (type $host-t)))
  (alias export $host "log" (func $log))
  (core module $libc (memory (export "memory") 64))
  (core instance $libc-i (instantiate $libc))
  (alias core export $libc-i "memory" (core memory $mem))
  (core func $log-core (canon lower (func $log) (memory $mem)))
  (core instance $host-core (export "log" (func $log-core)))
  (core module $main
    (import "libc" "memory" (memory 1))
    (import "host" "log" (func $log (param i32 i32 i32)))
    (global $next (mut i32) (i32.const 0x300000))
    (data (i32.const 0x200) "a gate written by hand")
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
      (local $at i32)
      (local.set $at
        (i32.and
          (i32.add (global.get $next) (i32.sub (local.get 2) (i32.const 1)))
          (i32.sub (i32.const 0) (local.get 2))))
      (global.set $next (i32.add (local.get $at) (local.get 3)))
      (local.get $at))
    (func (export "describe") (result i32)
      {description}
      (i32.const 0x100))
    (func (export "check") (param i32) (result i32)
      {log}
      {verdict}
      (i32.const 0x400))
  )
  (core instance $main-i (instantiate $main
    (with "libc" (instance $libc-i))
    (with "host" (instance $host-core))))
  (alias core export $main-i "cabi_realloc" (core func $realloc))
  (alias core export $main-i "describe" (core func $describe-core))
  (alias core export $main-i "check" (core func $check-core))
  (type $describe-t (func (result $gate-info)))
  (func $describe (type $describe-t) (canon lift (core func $describe-core) (memory $mem)))
  (type $check-t (func (param "proposed" $action) (param "signal" $signal-view) (result $verdict)))
  (func $check (type $check-t)
    (canon lift (core func $check-core) (memory $mem) (realloc $realloc)))
  (instance $gate (export "describe" (func $describe)) (export "check" (func $check)))
  (export "passepartout:plugin/gate@0.1.1" (instance $gate))
)"#
        );
        wat::parse_str(&text).expect("the hand-written gate parses")
    }

    fn runtime(deadlines: Deadlines) -> Runtime {
        Runtime::new(RuntimeConfig {
            cache_dir: None,
            pooling: false,
            deadlines,
            ..RuntimeConfig::default()
        })
        .expect("runtime")
    }

    /// The hand-written gate as a plugin `hand-written` 1.0.0 with the default limits (a 1 MiB
    /// output cap), loaded or refused.
    fn load(
        rt: &Runtime,
        described: u32,
        logged: u32,
        aliased: u32,
    ) -> Result<Plugin, crate::runtime::LoadError> {
        rt.load(
            &PluginSource {
                origin: Origin::Candidate(PathBuf::from("hand-written")),
                manifest_path: PathBuf::from("hand-written/plugin.toml"),
                manifest: Cow::Borrowed(
                    "name = \"hand-written\"\nversion = \"1.0.0\"\nkinds = [\"gate\"]\n",
                ),
                component: Cow::Owned(hand_written_gate(described, logged, aliased)),
                pin: None,
                problem: None,
            },
            &Policy::default(),
        )
    }

    fn action() -> types::Action {
        types::Action {
            target: "tool".into(),
            tool: Some("anything".into()),
            args: "{}".into(),
            text: None,
            explanation: None,
        }
    }

    fn signal() -> types::SignalView {
        types::SignalView {
            kind: "event".into(),
            sensor: Some("user-input".into()),
            text: Some("please".into()),
            source: Some("test".into()),
            depth: 0,
            payload: "{}".into(),
        }
    }

    /// `err` is the output cap of the hand-written gate, refused before the host copied even
    /// one `ALIASED` string (it had copied all five, 10 MiB, when only the output size was
    /// checked after the copy).
    fn refused_at_the_output_cap(err: &PluginError, what: &str) {
        match err {
            PluginError::TooMuchAtOnce {
                plugin,
                budget,
                cap,
            } => {
                assert_eq!(plugin.name, "hand-written", "{what}");
                assert_eq!(*cap, 1 << 20, "{what}");
                assert!(
                    *budget > *cap && *budget < ALIASED as usize,
                    "{what}: refused before the copy, not after: {err}"
                );
            }
            other => panic!("{what}: expected the copy budget, got {other:?}"),
        }
        // It says what it knows and no size it does not: nothing was copied.
        let text = err.to_string();
        assert!(
            text.contains("more than") && text.contains("at once") && !text.contains("returned"),
            "{what}: {text}"
        );
        assert_eq!(err.limit(), Some(Limit::Output), "{what}");
        assert!(
            err.to_string().contains("plugin \"hand-written\" 1.0.0"),
            "{what}: {err}"
        );
    }

    #[test]
    fn a_verdict_whose_strings_alias_one_buffer_is_refused_before_it_is_copied() {
        for deadlines in [Deadlines::Hard, Deadlines::Epoch] {
            let rt = runtime(deadlines);
            // Premise: the hand-written gate is what it says, a `modify` of five aliases.
            let small = load(&rt, 0, 0, 16).expect("the hand-written gate loads");
            let gate_info = small.gate_info.as_ref().map(|i| i.description.as_str());
            assert_eq!(gate_info, Some("a gate written by hand"));
            match small.check(&action(), &signal()) {
                Ok(types::Verdict::Modify(a)) => {
                    let zeros = "\0".repeat(16);
                    assert_eq!(a.target, zeros);
                    assert_eq!(a.args, zeros);
                    for field in [&a.tool, &a.text, &a.explanation] {
                        assert_eq!(field.as_deref(), Some(zeros.as_str()));
                    }
                }
                other => panic!("{deadlines:?}: expected the small modify, got {other:?}"),
            }
            // Five strings of 2 MiB, one buffer: 10 MiB of copies under a 1 MiB cap.
            let gate = load(&rt, 0, 0, ALIASED).expect("the hand-written gate loads");
            let err = gate
                .check(&action(), &signal())
                .expect_err("refused, never a verdict");
            refused_at_the_output_cap(&err, &format!("{deadlines:?} check"));
            let mut live = gate.live_gate().expect("a live instance");
            let err = live
                .check(&action(), &signal())
                .expect_err("refused, never a verdict");
            refused_at_the_output_cap(&err, &format!("{deadlines:?} live check"));
        }
    }

    #[test]
    fn a_log_line_larger_than_the_output_cap_is_refused_before_it_is_copied() {
        // The host cuts a log line at 4 KiB, after copying all of it: 2 MiB per call (128 MiB
        // with wasmtime's default budget) the gate's verdict never shows. Then it passed.
        for deadlines in [Deadlines::Hard, Deadlines::Epoch] {
            let rt = runtime(deadlines);
            let small = load(&rt, 0, 16, 0).expect("the hand-written gate loads");
            assert_eq!(
                small.check(&action(), &signal()).expect("a short line"),
                types::Verdict::Pass,
                "{deadlines:?}"
            );
            let gate = load(&rt, 0, ALIASED, 0).expect("the hand-written gate loads");
            let err = gate
                .check(&action(), &signal())
                .expect_err("refused, never a pass");
            refused_at_the_output_cap(&err, &format!("{deadlines:?} log"));
        }
    }

    #[test]
    fn a_gate_describing_itself_at_length_is_not_loaded() {
        let rt = runtime(Deadlines::Hard);
        let long = load(&rt, 5000, 0, 0).err().expect("refused").to_string();
        assert!(
            long.contains("hand-written") && long.contains("5000 bytes; at most 4096"),
            "{long}"
        );
        // Past the describe's hostcall budget: refused before the copy.
        let huge = load(&rt, ALIASED, 0, 0).err().expect("refused").to_string();
        assert!(
            huge.contains("describe failed") && huge.contains(HOSTCALL_EXHAUSTED),
            "{huge}"
        );
    }
}
