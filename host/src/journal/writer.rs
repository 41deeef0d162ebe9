//! The journal's writer: one thread per journal does the appending. It takes every group of
//! records waiting, commits them in one transaction with one fsync (group commit), and answers
//! each caller with its own group's seqs, or its own group's error.
//!
//! An async caller (a Turn flushing its records) awaits the answer, so the request path never
//! blocks an async worker on a commit; a blocking caller waits on a channel.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rusqlite::Connection;

/// Records as stored: (kind, body text).
pub(super) type Group = Vec<(String, String)>;

/// A group's seqs, or why it was not written.
type Outcome = rusqlite::Result<Vec<i64>>;

/// Where a group's outcome goes.
enum Answer {
    Blocking(mpsc::SyncSender<Outcome>),
    Async(tokio::sync::oneshot::Sender<Outcome>),
}

impl Answer {
    fn send(self, outcome: Outcome) {
        // A caller that stopped waiting (a request cancelled) still had its records written.
        let _ = match self {
            Answer::Blocking(tx) => tx.send(outcome).map_err(|_| ()),
            Answer::Async(tx) => tx.send(outcome).map_err(|_| ()),
        };
    }
}

struct Job {
    group: Group,
    answer: Answer,
}

/// The writer thread of one journal; stopped (and joined) when dropped.
pub(super) struct Writer {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Start the thread that writes to `conn`; `commits` is told of each commit.
    ///
    /// # Errors
    /// The thread could not be started.
    pub(super) fn start(
        conn: Arc<Mutex<Connection>>,
        commits: tokio::sync::watch::Sender<u64>,
    ) -> std::io::Result<Writer> {
        let (jobs, inbox) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("passepartout-journal".into())
            .spawn(move || run(&conn, &inbox, &commits))?;
        Ok(Writer {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    fn submit(&self, group: Group, answer: Answer) -> Result<(), rusqlite::Error> {
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(Job { group, answer })
            .map_err(|_| stopped())
    }

    /// Append `group` and wait until it is committed.
    pub(super) fn append(&self, group: Group) -> Outcome {
        let (tx, rx) = mpsc::sync_channel(1);
        self.submit(group, Answer::Blocking(tx))?;
        rx.recv().unwrap_or_else(|_| Err(stopped()))
    }

    /// Append `group`; the future ends when it is committed.
    pub(super) async fn append_async(&self, group: Group) -> Outcome {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.submit(group, Answer::Async(tx))?;
        rx.await.unwrap_or_else(|_| Err(stopped()))
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // No more jobs: the thread ends after the ones queued, and closes its hold on the
        // database before the journal is gone.
        self.jobs = None;
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the journal's writer thread panicked");
        }
    }
}

fn stopped() -> rusqlite::Error {
    super::failure("the journal's writer thread has stopped".into())
}

/// Commit what is waiting, batch after batch, until the journal is dropped.
fn run(
    conn: &Mutex<Connection>,
    inbox: &mpsc::Receiver<Job>,
    commits: &tokio::sync::watch::Sender<u64>,
) {
    while let Ok(first) = inbox.recv() {
        let mut batch = vec![first];
        batch.extend(inbox.try_iter());
        let outcomes = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut conn = conn.lock().unwrap_or_else(|p| p.into_inner());
            commit(&mut conn, &batch)
        }))
        .unwrap_or_else(|_| {
            // The transaction (if any) rolled back as it unwound: nothing of the batch is
            // written, each caller is told so, and the writer goes on with the next batch.
            tracing::error!(
                "the journal's writer panicked on a batch of {}",
                batch.len()
            );
            batch
                .iter()
                .map(|_| {
                    Err(super::failure(
                        "the journal's writer failed on this write".into(),
                    ))
                })
                .collect()
        });
        if outcomes.iter().any(Result::is_ok) {
            commits.send_modify(|n| *n = n.wrapping_add(1));
        }
        for (job, outcome) in batch.into_iter().zip(outcomes) {
            job.answer.send(outcome);
        }
    }
}

/// Every group of `batch` in one transaction; if that fails, each group alone, so that each
/// caller gets its own group's error. One outcome per group, in order.
fn commit(conn: &mut Connection, batch: &[Job]) -> Vec<Outcome> {
    let write_group = |tx: &rusqlite::Transaction<'_>, group: &Group| {
        group
            .iter()
            .map(|(kind, body)| super::Journal::append_text(tx, kind, body))
            .collect::<rusqlite::Result<Vec<i64>>>()
    };
    let committed = super::write(conn, |tx| {
        batch
            .iter()
            .map(|job| write_group(tx, &job.group))
            .collect::<rusqlite::Result<Vec<Vec<i64>>>>()
    });
    match committed {
        Ok(seqs) => seqs.into_iter().map(Ok).collect(),
        // A batch of one has its own error already.
        Err(e) if batch.len() == 1 => vec![Err(e)],
        // Nothing a group holds made another process keep the database locked past the busy
        // timeout: each group alone would wait that long again, one after the other.
        Err(rusqlite::Error::SqliteFailure(f, message)) if locked(f) => batch
            .iter()
            .map(|_| Err(rusqlite::Error::SqliteFailure(f, message.clone())))
            .collect(),
        Err(_) => batch
            .iter()
            .map(|job| super::write(conn, |tx| write_group(tx, &job.group)))
            .collect(),
    }
}

/// Whether `f` says the database was busy or locked (another process held it past the busy
/// timeout).
fn locked(f: rusqlite::ffi::Error) -> bool {
    matches!(
        f.code,
        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each time the batch's connection began waiting for the lock.
    static WAITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    fn count_and_give_up(retries: i32) -> bool {
        if retries == 0 {
            WAITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        false
    }

    #[test]
    fn a_batch_locked_out_by_another_process_waits_once_and_every_caller_hears_why() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("journal.db");
        let journal = super::super::Journal::open(&path).expect("journal");
        // Another process's write transaction, held throughout.
        let other = Connection::open(&path).expect("other");
        other.execute_batch("BEGIN IMMEDIATE").expect("lock");
        let mut conn = Connection::open(&path).expect("conn");
        conn.busy_handler(Some(count_and_give_up)).expect("handler");
        let batch: Vec<Job> = (0..3)
            .map(|n| Job {
                group: vec![("test".into(), format!("{{\"n\":{n}}}"))],
                answer: Answer::Blocking(mpsc::sync_channel(1).0),
            })
            .collect();
        let outcomes = commit(&mut conn, &batch);
        assert_eq!(outcomes.len(), 3);
        for outcome in &outcomes {
            let e = outcome.as_ref().expect_err("locked out");
            assert!(e.to_string().contains("locked"), "{e}");
        }
        assert_eq!(
            WAITS.load(std::sync::atomic::Ordering::Relaxed),
            1,
            "waited for the lock once, not once per group"
        );
        other.execute_batch("ROLLBACK").expect("unlock");
        drop(journal);
    }
}
