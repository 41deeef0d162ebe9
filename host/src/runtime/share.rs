//! Fair sharing of the instance pool: tool and skill calls together hold at most
//! [`TOOLS_SHARE`] of the pool's component instances, so that gates always find room (a gate
//! that cannot be instantiated refuses the action: without this, one plugin's flood of slow
//! calls would turn fail-closed into denial of service); and one plugin holds at most
//! [`PER_PLUGIN`] of them. A call refused for capacity fails at once, naming who holds it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Component instances in the pool (engine.rs sizes it).
pub const POOL: usize = 64;
/// What tool and skill calls may hold together; the rest is kept for gates.
pub const TOOLS_SHARE: usize = 48;
/// What one plugin's tool and skill calls may hold at once.
pub const PER_PLUGIN: usize = 16;

/// Who holds the tools' share, by plugin; one per runtime, shared by its plugins.
#[derive(Debug, Default)]
pub struct Share {
    held: Mutex<BTreeMap<String, usize>>,
}

/// A slot taken for one call; given back when dropped.
#[derive(Debug)]
pub struct Slot {
    share: Arc<Share>,
    plugin: String,
}

impl Share {
    /// A slot for a call of `plugin`.
    ///
    /// # Errors
    /// The plugin is at its own cap, or the tools' share is in use: the message names the
    /// plugin (or plugins) holding it.
    pub fn take(self: &Arc<Self>, plugin: &str) -> Result<Slot, String> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mine = held.get(plugin).copied().unwrap_or(0);
        if mine >= PER_PLUGIN {
            return Err(format!(
                "it already runs {mine} calls at once, its limit; try again when one ends"
            ));
        }
        let total: usize = held.values().sum();
        if total >= TOOLS_SHARE {
            let mut holders: Vec<(&String, &usize)> =
                held.iter().filter(|(_, n)| **n > 0).collect();
            holders.sort_by(|a, b| b.1.cmp(a.1));
            let named: Vec<String> = holders
                .iter()
                .take(3)
                .map(|(p, n)| format!("{p} ({n})"))
                .collect();
            return Err(format!(
                "the {TOOLS_SHARE} instances tools may hold at once are in use, by {}; the rest \
                 of the pool is kept for gates",
                named.join(", ")
            ));
        }
        *held.entry(plugin.to_owned()).or_insert(0) += 1;
        Ok(Slot {
            share: self.clone(),
            plugin: plugin.to_owned(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.share.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = held.get_mut(&self.plugin) {
            *n = n.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_plugin_cannot_take_the_gates_room() {
        let share = Arc::new(Share::default());
        let mut slots = Vec::new();
        for i in 0..TOOLS_SHARE {
            let plugin = format!("p{}", i / PER_PLUGIN);
            slots.push(share.take(&plugin).expect("room"));
        }
        let err = share.take("late").expect_err("the tools' share is full");
        assert!(
            err.contains("p0 (16)") && err.contains("kept for gates"),
            "{err}"
        );
        drop(slots.pop());
        assert!(share.take("late").is_ok());
        let mut greedy = Vec::new();
        let share = Arc::new(Share::default());
        for _ in 0..PER_PLUGIN {
            greedy.push(share.take("greedy").expect("room"));
        }
        let err = share.take("greedy").expect_err("its own cap");
        assert!(err.contains("16 calls"), "{err}");
        assert!(share.take("other").is_ok(), "others still run");
    }
}
