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

/// How often, at most, evictions are logged (a flood evicts at any rate).
const LOG_EVERY: Duration = Duration::from_secs(1);

#[derive(Default)]
struct State {
    waiting: VecDeque<Waiting>,
    /// Evictions not logged yet, and when the last were.
    unlogged: u64,
    logged: Option<Instant>,
}

/// The connections waiting to authenticate, at most `max` of them.
pub struct Lobby {
    state: Mutex<State>,
    max: usize,
}

impl Lobby {
    /// An empty lobby for at most `max` connections.
    pub fn new(max: usize) -> Lobby {
        Lobby {
            state: Mutex::default(),
            max: max.max(1),
        }
    }

    /// Connection `conn` starts waiting; when `max` wait already, a random one is evicted
    /// first. The receiver gets `Ok` when `conn` is evicted (and an error, never `Ok`, once it
    /// has left).
    pub fn enter(&self, conn: u64) -> oneshot::Receiver<()> {
        let (evict, evicted) = oneshot::channel();
        let mut state = self.lock();
        if state.waiting.len() >= self.max {
            state.evict_one();
        }
        state.waiting.push_back(Waiting {
            conn,
            since: Instant::now(),
            evict,
        });
        evicted
    }

    /// Evict one random waiting connection, to make room for a newer one; `false` when none
    /// waits.
    pub fn evict(&self) -> bool {
        self.lock().evict_one()
    }

    /// Connection `conn` has authenticated, or ended: it waits no more. `false` when it was
    /// not waiting: it left already, or it was evicted (and must not go on as if it had not).
    pub fn leave(&self, conn: u64) -> bool {
        let mut state = self.lock();
        let before = state.waiting.len();
        state.waiting.retain(|w| w.conn != conn);
        state.waiting.len() < before
    }

    /// How many wait now.
    pub fn len(&self) -> usize {
        self.lock().waiting.len()
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    /// Evict one: a random one, not the oldest, so that a flood cannot aim at the connection
    /// that has been authenticating longest; the slow ones first, they are the flood's.
    fn evict_one(&mut self) -> bool {
        if self.waiting.is_empty() {
            return false;
        }
        let slow: Vec<usize> = (0..self.waiting.len())
            .filter(|i| self.waiting[*i].since.elapsed() >= EVICTABLE_AFTER)
            .collect();
        let mut r = [0u8; 4];
        let _ = getrandom::fill(&mut r);
        let r = usize::try_from(u32::from_le_bytes(r)).unwrap_or(0);
        let at = if slow.is_empty() {
            r % self.waiting.len()
        } else {
            slow[r % slow.len()]
        };
        let Some(gone) = self.waiting.remove(at) else {
            return false;
        };
        let _ = gone.evict.send(());
        self.unlogged += 1;
        if self.logged.is_none_or(|t| t.elapsed() >= LOG_EVERY) {
            tracing::info!(
                "{} connection(s) evicted (the last #{}): no room while they were authenticating",
                self.unlogged,
                gone.conn
            );
            self.unlogged = 0;
            self.logged = Some(Instant::now());
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_lobby_evicts_one_to_let_the_next_in_and_a_leaver_is_never_evicted() {
        let lobby = Lobby::new(3);
        let mut rx: Vec<_> = (0..3).map(|c| lobby.enter(c)).collect();
        assert!(lobby.leave(1));
        assert!(!lobby.leave(1), "left already");
        assert!(
            rx[1].try_recv().is_err(),
            "a connection that left is told nothing"
        );
        assert_eq!(lobby.len(), 2);
        rx.push(lobby.enter(3));
        rx.push(lobby.enter(4));
        assert_eq!(lobby.len(), 3, "never more than max");
        let evicted: Vec<u64> = [0u64, 2, 3]
            .into_iter()
            .filter(|c| rx[*c as usize].try_recv() == Ok(()))
            .collect();
        assert_eq!(evicted.len(), 1, "one made room for #4");
        assert!(!lobby.leave(evicted[0]), "the evicted one is told it was");
        assert_eq!(lobby.len(), 3);
        assert!(lobby.evict());
        assert!(lobby.evict());
        assert!(lobby.evict());
        assert!(!lobby.evict(), "none left to evict");
        assert!(lobby.is_empty());
    }
}
