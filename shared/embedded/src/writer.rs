//! The one writer of a process: a thread that owns the write connection and commits, in one
//! IMMEDIATE transaction and one fsync, every write queued while the round before it committed:
//! admissions, receives, claims, acknowledgements and settlements share their rounds (group
//! commit for every write, not only for admissions). Each write runs in a savepoint of its own,
//! so a write that fails is undone without touching the others of its round, and each is
//! answered only once its round is durable.

use crate::error::sqlite_error;
use std::sync::mpsc;
use std::thread::JoinHandle;

use rusqlite::{Connection, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use seatclaim_core::ports::BackendError;

/// The most writes in one round, so that one transaction's commit stays short.
const ROUND_LIMIT: usize = 512;

/// A queued write: given the round's transaction (none if it could not begin), it runs, and
/// returns how to answer its caller once the round's commit has succeeded or failed.
type Queued = Box<dyn FnOnce(Option<&Transaction<'_>>) -> Answer + Send>;
/// Answers a write's caller, given the error that failed its round, if one did.
type Answer = Box<dyn FnOnce(Option<&BackendError>) + Send>;

/// The writer thread, stopped and joined when dropped, so that the write connection is closed
/// before the database's folder lock is released.
pub(super) struct Writer {
    queue: Option<mpsc::Sender<Queued>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread that writes on `conn`.
    pub(super) fn start(conn: Connection) -> Result<Self, BackendError> {
        let (queue, incoming) = mpsc::channel::<Queued>();
        let thread = std::thread::Builder::new()
            .name("seatclaim-writer".into())
            .spawn(move || serve(conn, &incoming))
            .map_err(|e| BackendError::permanent(format!("cannot start the writer: {e}")))?;
        Ok(Self {
            queue: Some(queue),
            thread: Some(thread),
        })
    }

    /// Runs `work` in the next round and returns its result once the round is committed.
    pub(super) async fn write<T, F>(&self, work: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, BackendError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let queued: Queued = Box::new(move |tx| {
            let result = tx.map(|tx| in_savepoint(tx, work));
            Box::new(move |failed| {
                let _ = reply.send(match (failed, result) {
                    (Some(error), Some(Ok(_)) | None) => Err(error.clone()),
                    (_, Some(result)) => result,
                    (None, None) => Err(stopped()),
                });
            })
        });
        self.queue
            .as_ref()
            .ok_or_else(stopped)?
            .send(queued)
            .map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != std::thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

/// Commits rounds until every sender is gone.
fn serve(mut conn: Connection, incoming: &mpsc::Receiver<Queued>) {
    while let Ok(first) = incoming.recv() {
        let round: Vec<Queued> = std::iter::once(first)
            .chain(incoming.try_iter().take(ROUND_LIMIT - 1))
            .collect();
        let (answers, failed) = commit_round(&mut conn, round);
        for answer in answers {
            answer(failed.as_ref());
        }
    }
}

/// Runs a round's writes in one transaction and commits it; returns their answers and the
/// error that failed the whole round, if one did.
fn commit_round(conn: &mut Connection, round: Vec<Queued>) -> (Vec<Answer>, Option<BackendError>) {
    let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
        Ok(tx) => tx,
        Err(error) => {
            return (
                round.into_iter().map(|q| q(None)).collect(),
                Some(sqlite_error(error)),
            );
        }
    };
    let mut answers = Vec::with_capacity(round.len());
    let mut round = round.into_iter();
    while let Some(queued) = round.next() {
        answers.push(queued(Some(&tx)));
        // An I/O error or a full disk makes SQLite roll the whole transaction back: the writes
        // run so far are undone, and none may run outside a transaction.
        if tx.is_autocommit() {
            answers.extend(round.map(|q| q(None)));
            let error = BackendError::transient("sqlite rolled back a round of writes");
            return (answers, Some(error));
        }
    }
    (answers, tx.commit().err().map(sqlite_error))
}

/// Runs `work` in a savepoint: undone alone if it fails.
fn in_savepoint<T>(
    tx: &Transaction<'_>,
    work: impl FnOnce(&Transaction<'_>) -> Result<T, BackendError>,
) -> Result<T, BackendError> {
    tx.prepare_cached("SAVEPOINT write")
        .map_err(sqlite_error)?
        .execute([])
        .map_err(sqlite_error)?;
    let result = work(tx);
    if tx.is_autocommit() {
        return result;
    }
    if result.is_err() {
        tx.prepare_cached("ROLLBACK TO write")
            .map_err(sqlite_error)?
            .execute([])
            .map_err(sqlite_error)?;
    }
    tx.prepare_cached("RELEASE write")
        .map_err(sqlite_error)?
        .execute([])
        .map_err(sqlite_error)?;
    result
}

fn stopped() -> BackendError {
    BackendError::transient("the database writer has stopped")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn writer() -> (tempfile::TempDir, Writer, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("db.sqlite3");
        let conn = Connection::open(&path).expect("open");
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY)")
            .expect("schema");
        (dir, Writer::start(conn).expect("start"), path)
    }

    fn insert(n: i64) -> impl FnOnce(&Transaction<'_>) -> Result<i64, BackendError> {
        move |tx| {
            tx.execute("INSERT INTO t (n) VALUES (?1)", [n])
                .map(|_| n)
                .map_err(sqlite_error)
        }
    }

    fn rows(path: &std::path::Path) -> Vec<i64> {
        let reader = Connection::open(path).expect("open");
        reader
            .prepare("SELECT n FROM t ORDER BY n")
            .expect("prepare")
            .query_map([], |row| row.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_write_is_undone_alone_and_its_round_commits_the_others() {
        let (_dir, writer, path) = writer();
        let writer = Arc::new(writer);
        // A first round that holds the writer until the next round's writes are all queued.
        let (running, is_running) = mpsc::channel();
        let (open, gate) = mpsc::channel::<()>();
        let first = tokio::spawn({
            let writer = Arc::clone(&writer);
            async move {
                let hold = move |_: &Transaction<'_>| {
                    let _ = running.send(());
                    let _ = gate.recv();
                    Ok(0)
                };
                writer.write(hold).await
            }
        });
        tokio::task::spawn_blocking(move || is_running.recv())
            .await
            .expect("join")
            .expect("the first round runs");
        let failing = |tx: &Transaction<'_>| -> Result<i64, BackendError> {
            tx.execute("INSERT INTO t (n) VALUES (2)", [])
                .map_err(sqlite_error)?;
            Err(BackendError::permanent("refused after writing"))
        };
        let (one, failed, duplicated, three, ()) = tokio::join!(
            writer.write(insert(1)),
            writer.write(failing),
            writer.write(insert(1)),
            writer.write(insert(3)),
            async { open.send(()).expect("the gate") },
        );
        assert_eq!(first.await.expect("join").ok(), Some(0));
        assert_eq!((one.ok(), three.ok()), (Some(1), Some(3)));
        assert!(failed.is_err() && duplicated.is_err());
        assert_eq!(
            rows(&path),
            [1, 3],
            "one round kept exactly the writes that succeeded"
        );
    }

    #[tokio::test]
    async fn a_write_after_the_writer_stopped_is_a_transient_error() {
        let (_dir, mut writer, _path) = writer();
        drop(writer.queue.take());
        let error = writer.write(insert(1)).await.expect_err("stopped");
        assert!(error.is_transient(), "{error}");
    }
}
