//! The daemon's tool set, watched once for every MCP session this process serves: one poller
//! asks the daemon's `status` once a second while any session listens, and each session tells
//! its client when the set changes (`notifications/tools/list_changed`). However many sessions
//! a client opens, the daemon is asked once a second, not once per session.
//!
//! And the sessions themselves are counted: at most [`MAX_SESSIONS`] live at once (over HTTP a
//! client can open one per `initialize`), the last [`APPROVER_SESSIONS`] of them kept for
//! clients with the approver key, as the daemon keeps connection places; past that a new one is
//! refused until one ends (closed by its client, or idle past rmcp's keep-alive).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use passepartout::daemon::request::Request;
use rmcp::service::{Peer, RoleServer};
use tokio::sync::watch;

use super::Door;

/// How often the poller asks the daemon whether its plugin set changed.
const EVERY: Duration = Duration::from_secs(1);

/// Most MCP sessions one process serves at once.
pub const MAX_SESSIONS: usize = 256;
/// Of those, the ones only clients with the approver key may open.
pub const APPROVER_SESSIONS: usize = 16;

tokio::task_local! {
    /// Whether the request being served carries the approver key (set around each HTTP
    /// request; unset on stdio, whose one session needs no place).
    pub static APPROVER: bool;
}

/// The tool set as last seen (`None` until the daemon first answers), for every session.
#[derive(Default)]
pub struct Sets {
    seen: watch::Sender<Option<String>>,
    polling: AtomicBool,
    /// Sessions open in the shared places, and in the approver key's.
    sessions: [Arc<AtomicUsize>; 2],
}

/// One live session: counted until every clone of its bridge is gone.
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Sets {
    /// A place for one more session: a shared one, else (`approver`: for a client with the
    /// approver key) one of [`APPROVER_SESSIONS`]; none when those it may take are taken.
    pub fn slot(&self, approver: bool) -> Option<Slot> {
        let take = |count: &Arc<AtomicUsize>, most: usize| {
            count
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                    (n < most).then_some(n + 1)
                })
                .ok()
                .map(|_| Slot(count.clone()))
        };
        let [shared, kept] = &self.sessions;
        take(shared, MAX_SESSIONS - APPROVER_SESSIONS)
            .or_else(|| approver.then(|| take(kept, APPROVER_SESSIONS)).flatten())
    }

    /// Tell `peer` each change of the set until its transport closes; the poller (through
    /// `door`) starts with the first session that follows.
    pub fn follow(self: &Arc<Self>, door: &Door, peer: Peer<RoleServer>) {
        if !self.polling.swap(true, Ordering::Relaxed) {
            tokio::spawn(poll(self.clone(), door.clone()));
        }
        let mut seen = self.seen.subscribe();
        tokio::spawn(async move {
            let mut told = seen.borrow_and_update().clone();
            loop {
                // Woken by a change, or each second to see whether the client left.
                if let Ok(Err(_)) = tokio::time::timeout(EVERY, seen.changed()).await {
                    return;
                }
                if peer.is_transport_closed() {
                    return;
                }
                let now = seen.borrow_and_update().clone();
                if now.is_none() {
                    continue;
                }
                if told.is_some() && told != now && peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
                told = now;
            }
        });
    }
}

/// Ask the daemon for its tool set once a second while any session follows it.
async fn poll(sets: Arc<Sets>, door: Door) {
    loop {
        if sets.seen.receiver_count() > 0 {
            let door = door.clone();
            let asked = tokio::task::spawn_blocking(move || -> anyhow::Result<String> {
                let mut client = door.connect("passepartout-mcp")?;
                let (_, reply) = client.call(&Request::Status)?;
                Ok(
                    passepartout::daemon::answer::read::<passepartout::daemon::ops::Status>(
                        &reply,
                        "the status",
                    )?
                    .tools_set,
                )
            })
            .await;
            // A daemon that does not answer for a moment changes nothing.
            if let Ok(Ok(set)) = asked {
                sets.seen.send_if_modified(|seen| {
                    let changed = seen.as_ref() != Some(&set);
                    *seen = Some(set);
                    changed
                });
            }
        }
        tokio::time::sleep(EVERY).await;
    }
}
