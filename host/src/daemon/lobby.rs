//! Connections that have not yet proved a key, and the rule that keeps them from keeping anyone
//! out: when there is no room, a newer connection evicts a random one of them, the ones that
//! have waited [`EVICTABLE_AFTER`] first (an honest client proves its key in a fraction of a
//! millisecond). Connections that never authenticate cannot hold places, however many come,
//! and however slowly they send. The daemon's handshakes and the MCP HTTP transport's first
//! requests both wait here.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

/// How long a connection waits before it is among the first to be evicted for a newer one.
pub const EVICTABLE_AFTER: Duration = Duration::from_millis(200);

/// One waiting connection.
struct Waiting {
    conn: u64,
    since: Instant,
    evict: oneshot::Sender<()>,
}

/// The connections waiting to authenticate, at most `max` of them.
pub struct Lobby {
    waiting: Mutex<VecDeque<Waiting>>,
    max: usize,
}

impl Lobby {
    /// An empty lobby for at most `max` connections.
    pub fn new(max: usize) -> Lobby {
        Lobby {
            waiting: Mutex::default(),
            max: max.max(1),
        }
    }

    /// Connection `conn` starts waiting; when `max` wait already, a random one is evicted
    /// first. The receiver gets `Ok` when `conn` is evicted (and an error, never `Ok`, once it
    /// has left).
    pub fn enter(&self, conn: u64) -> oneshot::Receiver<()> {
        let (evict, evicted) = oneshot::channel();
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        if waiting.len() >= self.max {
            evict_one(&mut waiting);
        }
        waiting.push_back(Waiting {
            conn,
            since: Instant::now(),
            evict,
        });
        evicted
    }

    /// Evict one random waiting connection, to make room for a newer one; `false` when none
    /// waits.
    pub fn evict(&self) -> bool {
        evict_one(&mut self.waiting.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Connection `conn` has authenticated, or ended: it waits no more.
    pub fn leave(&self, conn: u64) {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|w| w.conn != conn);
    }

    /// How many wait now.
    pub fn len(&self) -> usize {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A random one, not the oldest: a flood cannot aim at the connection that has been
/// authenticating longest. The slow ones first: they are the flood's.
fn evict_one(waiting: &mut VecDeque<Waiting>) -> bool {
    if waiting.is_empty() {
        return false;
    }
    let slow: Vec<usize> = (0..waiting.len())
        .filter(|i| waiting[*i].since.elapsed() >= EVICTABLE_AFTER)
        .collect();
    let mut r = [0u8; 4];
    let _ = getrandom::fill(&mut r);
    let r = usize::try_from(u32::from_le_bytes(r)).unwrap_or(0);
    let at = if slow.is_empty() {
        r % waiting.len()
    } else {
        slow[r % slow.len()]
    };
    match waiting.remove(at) {
        Some(gone) => {
            tracing::info!(
                "connection #{} evicted: no room while it was authenticating",
                gone.conn
            );
            let _ = gone.evict.send(());
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_lobby_evicts_one_to_let_the_next_in_and_a_leaver_is_never_evicted() {
        let lobby = Lobby::new(3);
        let mut rx: Vec<_> = (0..3).map(|c| lobby.enter(c)).collect();
        lobby.leave(1);
        assert!(
            rx[1].try_recv().is_err(),
            "a connection that left is told nothing"
        );
        assert_eq!(lobby.len(), 2);
        rx.push(lobby.enter(3));
        rx.push(lobby.enter(4));
        assert_eq!(lobby.len(), 3, "never more than max");
        let evicted = [0, 2, 3]
            .iter()
            .filter(|c| rx[**c].try_recv() == Ok(()))
            .count();
        assert_eq!(evicted, 1, "one made room for #4");
        assert!(lobby.evict());
        assert!(lobby.evict());
        assert!(lobby.evict());
        assert!(!lobby.evict(), "none left to evict");
        assert!(lobby.is_empty());
    }
}
