//! What the daemon has yet to send one client, bounded. Replies (and the `message` events that
//! carry answers) are never dropped: a client that lets more of them pile up than
//! [`MUST_ITEMS`] or [`MUST_BYTES`] does not read, and its connection is closed. Events it can
//! miss (gate traces) are dropped when [`MAY_ITEMS`] or [`MAY_BYTES`] are waiting, and the
//! client is told how many with one `dropped` event, so that a paused terminal is not
//! disconnected for them. The outboxes of clients with the client key alone share one
//! [`Outgoing`] budget, and approver-key clients' another, counted until the bytes are
//! written: past its budget, events are dropped, a client with replies waiting (queued, or
//! taken by its writer and not yet written) is closed, and a reply over [`OVER_BUDGET_REPLY`]
//! to a client with nothing waiting becomes an error reply, so that many clients that do not
//! read cannot hold the daemon's memory together.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::request::Event;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

/// Most replies waiting for one client before it is closed.
pub const MUST_ITEMS: usize = 256;
/// Most bytes of replies waiting for one client before it is closed (one reply of any size
/// is always taken when none waits).
pub const MUST_BYTES: usize = 16 << 20;
/// Most droppable events waiting for one client; more are dropped.
pub const MAY_ITEMS: usize = 1024;
/// Most bytes of droppable events waiting for one client; more are dropped.
pub const MAY_BYTES: usize = 4 << 20;
/// Most bytes the writer sends in one write.
const BATCH_BYTES: usize = 256 << 10;
/// Most bytes waiting to be sent to all clients with the client key alone, together.
pub const OUTGOING_BYTES: usize = 256 << 20;
/// Most bytes waiting to be sent to all approver-key clients, together: a budget of their own,
/// so that clients with the client key alone (the agent's tools, MCP clients) that do not read
/// cannot fill it and have the operator's replies refused, or the operator closed, while they
/// follow, approve or deny what those clients do.
pub const APPROVER_OUTGOING_BYTES: usize = 64 << 20;
/// Past its budget, a reply to a client with nothing waiting is still sent when it is
/// at most this large (a status, an answer): clients that do not read cannot make the others'
/// replies fail. A larger one becomes an error reply saying why, so that the budget is passed
/// by at most this much per client.
pub const OVER_BUDGET_REPLY: usize = 64 << 10;

/// The bytes waiting to be sent to all clients, and their limit.
#[derive(Debug)]
pub struct Outgoing {
    used: AtomicUsize,
    limit: usize,
}

impl Outgoing {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Outgoing {
        Outgoing {
            used: AtomicUsize::new(0),
            limit,
        }
    }

    /// Bytes waiting now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    fn room_for(&self, n: usize) -> bool {
        self.used().saturating_add(n) <= self.limit
    }
}

/// Bytes taken out of an outbox and not yet written: given back to the [`Outgoing`] budget and
/// to its outbox's count when dropped (written, failed, or the writer was aborted).
pub struct InFlight {
    outgoing: Arc<Outgoing>,
    outbox: Arc<AtomicUsize>,
    bytes: usize,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.outgoing.used.fetch_sub(self.bytes, Ordering::Relaxed);
        self.outbox.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// Whether a message may be dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// A reply, an error, an answer: never dropped.
    Must,
    /// An event the client can miss.
    May,
}

#[derive(Default)]
struct State {
    queue: VecDeque<(Vec<u8>, Class)>,
    must: (usize, usize),
    may: (usize, usize),
    dropped: u64,
    finishing: bool,
}

/// One client's bounded queue of outgoing messages (serialized payloads, signed by the writer
/// in the order they leave).
pub struct Outbox {
    state: Mutex<State>,
    wake: Notify,
    /// Set, with the reason, when the client is closed for not reading.
    aborted: watch::Sender<Option<String>>,
    max_frame: usize,
    outgoing: Arc<Outgoing>,
    /// Bytes the writer took and has not written yet: they wait as much as the queued ones.
    in_flight: Arc<AtomicUsize>,
}

/// What the writer gets next.
pub enum Next {
    /// Payloads to send, in order, and their bytes' hold on the shared budget.
    Frames(Vec<Vec<u8>>, InFlight),
    /// Everything queued was sent and the connection ends.
    Done,
    /// The client is closed for not reading.
    Aborted,
}

impl Outbox {
    /// An empty outbox for payloads up to `max_frame` bytes, sharing `outgoing`.
    pub fn new(max_frame: usize, outgoing: Arc<Outgoing>) -> Outbox {
        Outbox {
            state: Mutex::default(),
            wake: Notify::new(),
            aborted: watch::Sender::new(None),
            max_frame,
            outgoing,
            in_flight: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queue `message`. A reply over the frame limit is replaced by an error reply for its
    /// request; an event over it is dropped. Returns `false` when the client is being closed.
    pub fn push(&self, message: &Value, class: Class) -> bool {
        if self.aborted.borrow().is_some() {
            return false;
        }
        let mut bytes = serde_json::to_vec(message).unwrap_or_default();
        if bytes.len() > self.max_frame {
            if class == Class::May {
                self.lock().dropped += 1;
                self.wake.notify_one();
                return true;
            }
            bytes = not_sent(
                message,
                bytes.len(),
                &format!(
                    "over the frame limit of {} bytes: ask for less (a narrower query, a shorter text)",
                    self.max_frame
                ),
            );
        }
        let mut s = self.lock();
        let room = self.outgoing.room_for(bytes.len());
        match class {
            Class::Must => {
                let (items, size) = s.must;
                let flying = self.in_flight.load(Ordering::Relaxed);
                let waiting = items > 0 || flying > 0;
                if !waiting && !room && bytes.len() > OVER_BUDGET_REPLY {
                    bytes = not_sent(
                        message,
                        bytes.len(),
                        &format!(
                            "and the daemon's outgoing budget ({} bytes) is full of replies other clients do not read: ask again in a moment, or for less",
                            self.outgoing.limit
                        ),
                    );
                }
                if items >= MUST_ITEMS
                    || (waiting && (size + flying + bytes.len() > MUST_BYTES || !room))
                {
                    drop(s);
                    let why = format!(
                        "the client does not read its replies ({items} replies, {size} bytes wait{}): closing it",
                        if room {
                            ""
                        } else {
                            "; the daemon's outgoing budget is full"
                        }
                    );
                    self.aborted.send_replace(Some(why));
                    self.wake.notify_one();
                    return false;
                }
                s.must = (items + 1, size + bytes.len());
            }
            Class::May => {
                let (items, size) = s.may;
                if items >= MAY_ITEMS || size + bytes.len() > MAY_BYTES || !room {
                    s.dropped += 1;
                    return true;
                }
                s.may = (items + 1, size + bytes.len());
            }
        }
        self.outgoing.used.fetch_add(bytes.len(), Ordering::Relaxed);
        s.queue.push_back((bytes, class));
        drop(s);
        self.wake.notify_one();
        true
    }

    /// Send what is queued, then end the connection.
    pub fn finish(&self) {
        self.lock().finishing = true;
        self.wake.notify_one();
    }

    /// Why the client was closed for not reading, once it is.
    pub fn abort_reason(&self) -> Option<String> {
        self.aborted.borrow().clone()
    }

    /// Resolves when the client is closed for not reading.
    pub async fn aborted(&self) {
        let mut rx = self.aborted.subscribe();
        let _ = rx.wait_for(Option::is_some).await;
    }

    /// The writer's next batch.
    pub async fn next(&self) -> Next {
        loop {
            if self.aborted.borrow().is_some() {
                return Next::Aborted;
            }
            {
                let mut s = self.lock();
                let mut out = Vec::new();
                let mut bytes = 0;
                if s.dropped > 0 {
                    let notice = Event::Dropped {
                        count: s.dropped,
                        why: "the client read more slowly than events came".into(),
                    }
                    .notice();
                    out.push(serde_json::to_vec(&notice).unwrap_or_default());
                    s.dropped = 0;
                }
                while bytes < BATCH_BYTES
                    && let Some((item, class)) = s.queue.pop_front()
                {
                    let counter = match class {
                        Class::Must => &mut s.must,
                        Class::May => &mut s.may,
                    };
                    counter.0 -= 1;
                    counter.1 -= item.len();
                    bytes += item.len();
                    out.push(item);
                }
                if !out.is_empty() {
                    self.in_flight.fetch_add(bytes, Ordering::Relaxed);
                    let held = InFlight {
                        outgoing: self.outgoing.clone(),
                        outbox: self.in_flight.clone(),
                        bytes,
                    };
                    return Next::Frames(out, held);
                }
                if s.finishing {
                    return Next::Done;
                }
            }
            self.wake.notified().await;
        }
    }
}

/// What is sent instead of `message` (`size` bytes) when it cannot be, saying `why`: a reply
/// becomes the error for its request; an event that must not be lost becomes a notice (the
/// request's reply is still to come).
fn not_sent(message: &Value, size: usize, why: &str) -> Vec<u8> {
    let why = format!(
        "the {} is {size} bytes, {why}",
        message["type"].as_str().unwrap_or("message")
    );
    let instead = if message["type"] == "event" {
        json!({ "type": "event", "id": message["id"], "event": message["event"], "text": format!("(not sent: {why})") })
    } else {
        super::request::request_error(&message["id"], &why)
    };
    serde_json::to_vec(&instead).unwrap_or_default()
}

impl Drop for Outbox {
    fn drop(&mut self) {
        let s = self.lock();
        let queued: usize = s.queue.iter().map(|(b, _)| b.len()).sum();
        drop(s);
        self.outgoing.used.fetch_sub(queued, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(o: &Outbox) -> Vec<Value> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("rt");
        o.finish();
        let mut out = Vec::new();
        while let Next::Frames(f, _) = rt.block_on(o.next()) {
            out.extend(f.iter().map(|b| serde_json::from_slice(b).expect("json")));
        }
        out
    }

    #[test]
    fn events_are_dropped_and_counted_replies_never_and_a_non_reader_is_closed() {
        let o = Outbox::new(1 << 20, Arc::new(Outgoing::new(OUTGOING_BYTES)));
        for i in 0..MAY_ITEMS + 10 {
            assert!(o.push(&json!({ "type": "event", "n": i }), Class::May));
        }
        assert!(o.push(&json!({ "type": "reply", "id": 1 }), Class::Must));
        let got = drain(&o);
        assert_eq!(got[0]["event"], "dropped");
        assert_eq!(got[0]["count"], 10);
        assert_eq!(
            got.len(),
            1 + MAY_ITEMS + 1,
            "every reply and the kept events"
        );
        assert_eq!(got.last().map(|v| v["type"].clone()), Some(json!("reply")));

        let o = Outbox::new(1 << 20, Arc::new(Outgoing::new(OUTGOING_BYTES)));
        for i in 0..MUST_ITEMS {
            assert!(o.push(&json!({ "type": "reply", "id": i }), Class::Must));
        }
        assert!(o.abort_reason().is_none());
        assert!(!o.push(&json!({ "type": "reply", "id": "over" }), Class::Must));
        assert!(
            o.abort_reason()
                .is_some_and(|r| r.contains("does not read"))
        );
    }

    #[test]
    fn a_reply_over_the_frame_limit_becomes_an_error_for_its_request() {
        let o = Outbox::new(100, Arc::new(Outgoing::new(OUTGOING_BYTES)));
        assert!(o.push(
            &json!({ "type": "reply", "id": 7, "result": "x".repeat(200) }),
            Class::Must
        ));
        assert!(o.push(
            &json!({ "type": "event", "id": 7, "trace": "x".repeat(200) }),
            Class::May
        ));
        let got = drain(&o);
        let error = got
            .iter()
            .find(|m| m["type"] == "error")
            .expect("an error reply");
        assert_eq!(error["id"], 7, "the id as sent, a number");
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("frame limit of 100"))
        );
        assert!(got.iter().any(|m| m["event"] == "dropped"), "{got:?}");
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn the_shared_budget_is_counted_until_written_and_given_back() {
        let shared = Arc::new(Outgoing::new(1100));
        let a = Outbox::new(1 << 20, shared.clone());
        let b = Outbox::new(1 << 20, shared.clone());
        let reply = |n: usize| json!({ "type": "reply", "id": n, "result": "x".repeat(300) });
        assert!(a.push(&reply(1), Class::Must));
        assert!(b.push(&reply(2), Class::Must));
        assert!(b.push(&reply(3), Class::Must), "within the budget");
        assert!(shared.used() > 1000);
        // Past the budget: an event is dropped, a client with replies waiting is closed.
        assert!(a.push(
            &json!({ "type": "event", "trace": "x".repeat(300) }),
            Class::May
        ));
        assert!(!a.push(&reply(4), Class::Must));
        assert!(
            a.abort_reason()
                .is_some_and(|r| r.contains("outgoing budget"))
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("rt");
        let Next::Frames(_, held) = rt.block_on(b.next()) else {
            panic!("frames");
        };
        let before = shared.used();
        drop(held);
        assert!(shared.used() < before, "written bytes are given back");
        drop(a);
        drop(b);
        assert_eq!(
            shared.used(),
            0,
            "nothing is counted once the outboxes are gone"
        );
    }

    #[test]
    fn a_reply_the_writer_holds_unwritten_is_waiting_and_a_full_budget_takes_only_small_ones() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("rt");
        let shared = Arc::new(Outgoing::new(1100));
        let reply =
            |n: usize, len: usize| json!({ "type": "reply", "id": n, "result": "x".repeat(len) });
        // A client that does not read: its writer holds a reply it cannot write, and nothing
        // is queued.
        let stuck = Outbox::new(1 << 20, shared.clone());
        assert!(stuck.push(&reply(1, 300), Class::Must));
        let Next::Frames(_, held) = rt.block_on(stuck.next()) else {
            panic!("frames");
        };
        let filler = Outbox::new(1 << 20, shared.clone());
        assert!(filler.push(&reply(2, 300), Class::Must));
        assert!(filler.push(&reply(3, 300), Class::Must));
        // Past the budget, its next reply closes it: the held one is still waiting.
        assert!(!stuck.push(&reply(4, 300), Class::Must));
        assert!(
            stuck
                .abort_reason()
                .is_some_and(|r| r.contains("outgoing budget"))
        );
        drop(held);

        // A client with nothing waiting still gets a small reply, and a large one as an error
        // saying why, whose bytes are few.
        let fresh = Outbox::new(1 << 20, shared.clone());
        assert!(fresh.push(&reply(5, OVER_BUDGET_REPLY + 1), Class::Must));
        let used = shared.used();
        assert!(used < 1100 + 1024, "{used}");
        let got = drain(&fresh);
        assert_eq!(got[0]["type"], "error", "{:?}", got[0]);
        assert!(
            got[0]["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("outgoing budget") && m.contains("is full")),
            "{:?}",
            got[0]
        );
        let fresh = Outbox::new(1 << 20, shared.clone());
        assert!(fresh.push(&reply(6, 300), Class::Must));
        assert_eq!(drain(&fresh)[0]["type"], "reply");
    }
}
