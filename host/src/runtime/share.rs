//! Fair sharing of the instance pool. The pool is counted in every resource it limits —
//! component instances, core instances, linear memories and tables — and each call takes its
//! plugin's [`Footprint`] of them for as long as its instance lives (a Python or JavaScript
//! component holds many core instances; a Rust one holds one or two).
//!
//! - Tool and skill calls together hold at most three quarters of each resource, so that gates
//!   always find room (a gate that cannot be instantiated refuses the action: without this, one
//!   plugin's flood of slow calls would turn fail-closed into denial of service).
//! - One plugin's tool and skill calls hold at most [`PER_PLUGIN`] instances and a quarter of
//!   each resource.
//! - A call that does not fit waits for room, up to [`MAX_WAIT`] and at most as long as its own
//!   deadline; then it is refused with an error naming the plugins that hold the room. The
//!   wait does not count against the call's deadline, which starts once it has room.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Component instances in the pool (engine.rs sizes it).
pub const POOL: usize = 64;
/// Core instances in the pool.
pub const CORE_POOL: usize = 256;
/// Linear memories in the pool.
pub const MEMORY_POOL: usize = 128;
/// Tables in the pool.
pub const TABLE_POOL: usize = 128;
/// What tool and skill calls may hold together; the rest is kept for gates.
pub const TOOLS_SHARE: usize = POOL * 3 / 4;
/// What one plugin's tool and skill calls may hold at once.
pub const PER_PLUGIN: usize = POOL / 4;
/// The longest a call waits for room before it is refused.
pub const MAX_WAIT: Duration = Duration::from_secs(5);

/// What one instance of a plugin's component holds in the pool, besides its component
/// instance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Footprint {
    /// Core module instances.
    pub core_instances: usize,
    /// Linear memories.
    pub memories: usize,
    /// Tables.
    pub tables: usize,
}

/// Who a call is for: gates may use the whole pool, tools and skills their share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A gate's check, or any load-time call.
    Gate,
    /// A tool or skill call.
    Tool,
}

/// Counts of what is held: instances and the three resources.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    instances: usize,
    core: usize,
    memories: usize,
    tables: usize,
}

impl Held {
    fn plus(self, fp: Footprint) -> Held {
        Held {
            instances: self.instances + 1,
            core: self.core + fp.core_instances,
            memories: self.memories + fp.memories,
            tables: self.tables + fp.tables,
        }
    }

    fn minus(&mut self, fp: Footprint) {
        self.instances = self.instances.saturating_sub(1);
        self.core = self.core.saturating_sub(fp.core_instances);
        self.memories = self.memories.saturating_sub(fp.memories);
        self.tables = self.tables.saturating_sub(fp.tables);
    }

    /// The first resource past `cap`, by name, if any.
    fn over(self, cap: Held) -> Option<&'static str> {
        [
            (self.instances > cap.instances, "instances"),
            (self.core > cap.core, "core instances"),
            (self.memories > cap.memories, "memories"),
            (self.tables > cap.tables, "tables"),
        ]
        .into_iter()
        .find_map(|(over, name)| over.then_some(name))
    }

    /// A fraction of each resource (at least one of each).
    fn share(self, num: usize, den: usize) -> Held {
        let part = |n: usize| (n * num / den).max(1);
        Held {
            instances: part(self.instances),
            core: part(self.core),
            memories: part(self.memories),
            tables: part(self.tables),
        }
    }
}

const WHOLE: Held = Held {
    instances: POOL,
    core: CORE_POOL,
    memories: MEMORY_POOL,
    tables: TABLE_POOL,
};

#[derive(Debug, Default)]
struct State {
    all: Held,
    tools: Held,
    /// What each plugin holds (gates and tools alike), for naming holders.
    by_plugin: BTreeMap<String, Held>,
    /// What each plugin's tool and skill calls hold, for its own cap.
    tools_by_plugin: BTreeMap<String, Held>,
    /// Threads waiting in [`Share::take`]: a slot given back wakes them only when there are
    /// some (a wake of nobody is still a system call, one per call of any plugin).
    blocked: usize,
}

impl State {
    /// Why a call of `plugin` in `role` with `fp` does not fit now, if it does not; a tool or
    /// skill plugin may run `calls` at once.
    fn refusal(&self, plugin: &str, role: Role, fp: Footprint, calls: usize) -> Option<String> {
        if let Some(what) = self.all.plus(fp).over(WHOLE) {
            return Some(format!("the pool's {what} are in use"));
        }
        if role == Role::Gate {
            return None;
        }
        let mine = self
            .tools_by_plugin
            .get(plugin)
            .copied()
            .unwrap_or_default();
        if let Some(what) = mine.plus(fp).over(WHOLE.share(calls, POOL)) {
            return Some(format!(
                "it already holds its share of the pool's {what} ({} calls at once; \
                 `limits.concurrency` is {calls})",
                mine.instances
            ));
        }
        if let Some(what) = self.tools.plus(fp).over(WHOLE.share(3, 4)) {
            return Some(format!(
                "the tools' share of the pool's {what} is in use (the rest is kept for gates)"
            ));
        }
        None
    }

    /// The plugins holding the most instances, named with their counts.
    fn holders(&self) -> String {
        let mut holders: Vec<(&String, &Held)> = self
            .by_plugin
            .iter()
            .filter(|(_, h)| h.instances > 0)
            .collect();
        holders.sort_by_key(|(_, h)| std::cmp::Reverse(h.instances));
        let named: Vec<String> = holders
            .iter()
            .take(3)
            .map(|(p, h)| format!("{p} ({} calls, {} core instances)", h.instances, h.core))
            .collect();
        if named.is_empty() {
            "no plugin".into()
        } else {
            named.join(", ")
        }
    }
}

/// Who holds the pool, by plugin; one per runtime, shared by its plugins.
#[derive(Debug, Default)]
pub struct Share {
    state: Mutex<State>,
    /// Woken when room is given back: threads waiting in [`Share::take`]...
    freed: Condvar,
    /// ...and futures waiting in [`Share::take_async`].
    freed_async: tokio::sync::Notify,
}

/// Room taken for one instance; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    share: Arc<Share>,
    plugin: String,
    role: Role,
    footprint: Footprint,
}

impl Share {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Room for one instance of `plugin` in `role`, waiting up to `wait` (at most
    /// [`MAX_WAIT`]) for it, blocking the thread. A tool or skill plugin may hold `calls`
    /// instances at once (its `limits.concurrency`) and the same fraction of each other
    /// resource.
    ///
    /// # Errors
    /// No room came within the wait: the message says which limit and names the plugins
    /// holding the pool.
    pub fn take(
        self: &Arc<Self>,
        plugin: &str,
        role: Role,
        footprint: Footprint,
        calls: usize,
        wait: Duration,
    ) -> Result<Slot, String> {
        let until = Instant::now() + wait.min(MAX_WAIT);
        let mut state = self.lock();
        while let Some(why) = state.refusal(plugin, role, footprint, calls) {
            let now = Instant::now();
            if now >= until {
                return Err(Self::waited(&state, &why, wait));
            }
            state.blocked += 1;
            state = self
                .freed
                .wait_timeout(state, until - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            state.blocked -= 1;
        }
        Ok(self.grant(&mut state, plugin, role, footprint))
    }

    /// As [`Share::take`], waiting as a future (the async request path): a call waiting for
    /// room holds no thread.
    ///
    /// # Errors
    /// As for [`Share::take`].
    pub async fn take_async(
        self: &Arc<Self>,
        plugin: &str,
        role: Role,
        footprint: Footprint,
        calls: usize,
        wait: Duration,
    ) -> Result<Slot, String> {
        let until = Instant::now() + wait.min(MAX_WAIT);
        loop {
            // Registered before the check, so a slot freed in between still wakes this.
            let freed = self.freed_async.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut state = self.lock();
                let Some(why) = state.refusal(plugin, role, footprint, calls) else {
                    return Ok(self.grant(&mut state, plugin, role, footprint));
                };
                if Instant::now() >= until {
                    return Err(Self::waited(&state, &why, wait));
                }
            }
            let _ = tokio::time::timeout_at(until.into(), freed).await;
        }
    }

    /// The refusal after a wait of `wait` for room.
    fn waited(state: &State, why: &str, wait: Duration) -> String {
        format!(
            "{why}, held by {}; waited {} ms for room. Try again when a call ends, or lower the \
             plugins' concurrency",
            state.holders(),
            wait.min(MAX_WAIT).as_millis()
        )
    }

    /// Count `footprint` as held by `plugin` in `role`.
    fn grant(
        self: &Arc<Self>,
        state: &mut State,
        plugin: &str,
        role: Role,
        footprint: Footprint,
    ) -> Slot {
        state.all = state.all.plus(footprint);
        let held = state.by_plugin.entry(plugin.to_owned()).or_default();
        *held = held.plus(footprint);
        if role == Role::Tool {
            state.tools = state.tools.plus(footprint);
            let mine = state.tools_by_plugin.entry(plugin.to_owned()).or_default();
            *mine = mine.plus(footprint);
        }
        Slot {
            share: self.clone(),
            plugin: plugin.to_owned(),
            role,
            footprint,
        }
    }

    /// Whether one instance of a component with `footprint` can ever fit in the share of
    /// `role`; the reason when it cannot.
    pub fn fits(role: Role, footprint: Footprint) -> Result<(), String> {
        let cap = match role {
            Role::Gate => WHOLE,
            Role::Tool => WHOLE.share(1, 4),
        };
        match Held::default().plus(footprint).over(cap) {
            None => Ok(()),
            Some(what) => Err(format!(
                "one instance needs more {what} than the pool gives a {} ({footprint:?})",
                if role == Role::Gate {
                    "gate"
                } else {
                    "tool or skill plugin"
                }
            )),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut state = self.share.lock();
        state.all.minus(self.footprint);
        if let Some(h) = state.by_plugin.get_mut(&self.plugin) {
            h.minus(self.footprint);
        }
        if self.role == Role::Tool {
            state.tools.minus(self.footprint);
            if let Some(h) = state.tools_by_plugin.get_mut(&self.plugin) {
                h.minus(self.footprint);
            }
        }
        let blocked = state.blocked > 0;
        drop(state);
        if blocked {
            self.share.freed.notify_all();
        }
        self.share.freed_async.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUST: Footprint = Footprint {
        core_instances: 2,
        memories: 1,
        tables: 1,
    };
    const NOW: Duration = Duration::ZERO;

    #[test]
    fn one_plugin_cannot_take_the_gates_room() {
        let share = Arc::new(Share::default());
        let mut slots = Vec::new();
        for i in 0..TOOLS_SHARE {
            let plugin = format!("p{}", i / PER_PLUGIN);
            slots.push(
                share
                    .take(&plugin, Role::Tool, RUST, PER_PLUGIN, NOW)
                    .expect("room"),
            );
        }
        let err = share
            .take("late", Role::Tool, RUST, PER_PLUGIN, NOW)
            .expect_err("the tools' share is full");
        assert!(
            err.contains("p0 (16 calls") && err.contains("kept for gates"),
            "{err}"
        );
        // Gates still find room.
        let gate = share
            .take("gate", Role::Gate, RUST, PER_PLUGIN, NOW)
            .expect("a gate runs");
        drop(gate);
        drop(slots.pop());
        assert!(
            share
                .take("late", Role::Tool, RUST, PER_PLUGIN, NOW)
                .is_ok()
        );

        let share = Arc::new(Share::default());
        let greedy: Vec<Slot> = (0..PER_PLUGIN)
            .map(|_| {
                share
                    .take("greedy", Role::Tool, RUST, PER_PLUGIN, NOW)
                    .expect("room")
            })
            .collect();
        let err = share
            .take("greedy", Role::Tool, RUST, PER_PLUGIN, NOW)
            .expect_err("its own cap");
        assert!(
            err.contains("16 calls at once") && err.contains("greedy"),
            "{err}"
        );
        assert!(
            share
                .take("other", Role::Tool, RUST, PER_PLUGIN, NOW)
                .is_ok(),
            "others still run"
        );
        drop(greedy);
    }

    #[test]
    fn heavy_components_are_counted_by_their_core_instances() {
        let python = Footprint {
            core_instances: 20,
            memories: 3,
            tables: 3,
        };
        let share = Arc::new(Share::default());
        // A quarter of 256 core instances is 64: three instances of 20 fit, a fourth does not.
        let held: Vec<Slot> = (0..3)
            .map(|_| {
                share
                    .take("py", Role::Tool, python, PER_PLUGIN, NOW)
                    .expect("room")
            })
            .collect();
        let err = share
            .take("py", Role::Tool, python, PER_PLUGIN, NOW)
            .expect_err("core instances");
        assert!(err.contains("core instances"), "{err}");
        // Gates may use the whole pool; past it they are refused, naming who holds it.
        let gates: Vec<Slot> = (0..9)
            .map(|_| {
                share
                    .take("pii", Role::Gate, python, PER_PLUGIN, NOW)
                    .expect("room")
            })
            .collect();
        let err = share
            .take("pii", Role::Gate, python, PER_PLUGIN, NOW)
            .expect_err("the pool is full");
        assert!(
            err.contains("pii (9 calls") && err.contains("py (3 calls"),
            "{err}"
        );
        drop((held, gates));
    }

    #[test]
    fn a_call_waits_for_room_and_gets_it_when_one_ends() {
        let share = Arc::new(Share::default());
        let held: Vec<Slot> = (0..PER_PLUGIN)
            .map(|_| {
                share
                    .take("busy", Role::Tool, RUST, PER_PLUGIN, NOW)
                    .expect("room")
            })
            .collect();
        let waiter = {
            let share = share.clone();
            std::thread::spawn(move || {
                share
                    .take("busy", Role::Tool, RUST, PER_PLUGIN, Duration::from_secs(5))
                    .map(|_| Instant::now())
            })
        };
        // Until it waits (it would find room at once if it came after the drop).
        while share.lock().blocked == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let freed = Instant::now();
        drop(held);
        let got = waiter.join().expect("joins").expect("room once one ended");
        // Woken when the room was given back, not by the end of its 5-second wait.
        assert!(
            got.duration_since(freed) < Duration::from_secs(2),
            "the waiter got room {:?} after it was given back",
            got.duration_since(freed)
        );
        assert!(Share::fits(Role::Gate, RUST).is_ok());
        let huge = Footprint {
            core_instances: 300,
            ..RUST
        };
        assert!(Share::fits(Role::Gate, huge).is_err());
    }

    #[test]
    fn calls_waiting_for_room_hold_no_thread() {
        // One thread runs everything: a wait that blocked it would keep the holder from
        // ever giving its room back, and every waiter would be refused at MAX_WAIT.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime");
        let share = Arc::new(Share::default());
        let start = Instant::now();
        let outcomes = rt.block_on(async {
            let first = share
                .take_async("serial", Role::Tool, RUST, 1, NOW)
                .await
                .expect("room");
            let waiters: Vec<_> = (0..5)
                .map(|_| {
                    let share = share.clone();
                    tokio::spawn(async move {
                        let slot = share
                            .take_async("serial", Role::Tool, RUST, 1, Duration::from_secs(5))
                            .await?;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        drop(slot);
                        Ok::<(), String>(())
                    })
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(first);
            let mut outcomes = Vec::new();
            for w in waiters {
                outcomes.push(w.await.expect("joins"));
            }
            outcomes
        });
        assert!(outcomes.iter().all(Result::is_ok), "{outcomes:?}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn the_policy_sets_a_plugin_s_concurrency() {
        let share = Arc::new(Share::default());
        let one = share
            .take("serial", Role::Tool, RUST, 1, NOW)
            .expect("room");
        let err = share
            .take("serial", Role::Tool, RUST, 1, NOW)
            .expect_err("one at a time");
        assert!(err.contains("`limits.concurrency` is 1"), "{err}");
        drop(one);
        assert!(share.take("serial", Role::Tool, RUST, 1, NOW).is_ok());
        // A grant above the default gives more of every resource, in proportion.
        let wide: Vec<Slot> = (0..32)
            .map(|_| share.take("wide", Role::Tool, RUST, 32, NOW).expect("room"))
            .collect();
        drop(wide);
    }
}
