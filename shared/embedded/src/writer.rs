//! The one writer of a process: a thread that owns the write connection and commits, in one
//! IMMEDIATE transaction and one fsync, every write queued while the round before it committed:
//! admissions, receives, claims, acknowledgements and settlements share their rounds (group
//! commit for every write, not only for admissions). A write that fails is undone without
//! touching the others of its round, and each is answered only once its round is durable.
//!
//! While writes arrive faster than rounds commit, a round that found only a few of them queued
//! waits [`GATHER_WINDOW`] for more before it starts: each round costs about as much again as
//! its writes (the fsync, the commit, and the switches between this thread and the async
//! workers that hand it writes and take its answers), so fewer, fuller rounds cost less per
//! write. A write that arrives alone after a round of one starts at once.
//!
//! A round first runs its writes one after the other in the bare transaction. Only if one of
//! them fails is the transaction rolled back and the round run again with each write in a
//! savepoint of its own. A savepoint copies every page its write first touches into a statement
//! journal (a twelfth of the writer's time in the closed-loop profile), and a write almost never
//! fails: a refusal is an answer, not an error. So a write may run twice, and must keep no effect
//! of a run outside the transaction.

use crate::error::sqlite_error;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, Transaction, TransactionBehavior};
use tokio::sync::oneshot;

use seatclaim_core::ports::BackendError;

/// The most writes in one round, so that one transaction's commit stays short.
const ROUND_LIMIT: usize = 512;

/// How long a round waits for more writes when the round before it had several. In an open loop
/// of 9,343 reservations a second (pinned, one core), 1 ms took the CPU per decision from 87 to
/// 72 µs (rounds of about 15 writes instead of 7) and the median from 1.6 to 2.6 ms.
const GATHER_WINDOW: Duration = Duration::from_millis(1);

/// A round that finds this many writes queued starts at once: waiting would save it little.
const GATHER_ENOUGH: usize = 32;

/// A queued write: run in its round's transaction (twice if another write of the round failed
/// the first time), then answered once the round's commit has succeeded or failed.
trait Queued: Send {
    /// Runs the write in `tx`, in a savepoint of its own if `alone`; false if it failed.
    fn run(&mut self, tx: &Transaction<'_>, alone: bool) -> bool;
    /// Forgets the result of an earlier run, whose transaction was rolled back.
    fn forget(&mut self);
    /// Answers the caller, given the error that failed the whole round, if one did.
    fn answer(self: Box<Self>, failed: Option<&BackendError>);
}

/// A write, its result once it has run, and its caller.
struct Write<T, F> {
    work: F,
    result: Option<Result<T, BackendError>>,
    reply: oneshot::Sender<Result<T, BackendError>>,
}

impl<T, F> Queued for Write<T, F>
where
    T: Send,
    F: Fn(&Transaction<'_>) -> Result<T, BackendError> + Send,
{
    fn run(&mut self, tx: &Transaction<'_>, alone: bool) -> bool {
        let result = if alone {
            in_savepoint(tx, &self.work)
        } else {
            (self.work)(tx)
        };
        let ran = result.is_ok();
        self.result = Some(result);
        ran
    }

    fn forget(&mut self) {
        self.result = None;
    }

    fn answer(self: Box<Self>, failed: Option<&BackendError>) {
        let _ = self.reply.send(match (failed, self.result) {
            (Some(error), Some(Ok(_)) | None) => Err(error.clone()),
            (_, Some(result)) => result,
            (None, None) => Err(stopped()),
        });
    }
}

/// The writer thread, stopped and joined when dropped, so that the write connection is closed
/// before the database's folder lock is released.
pub(super) struct Writer {
    queue: Option<mpsc::Sender<Box<dyn Queued>>>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the thread that writes on `conn`.
    pub(super) fn start(conn: Connection) -> Result<Self, BackendError> {
        let (queue, incoming) = mpsc::channel::<Box<dyn Queued>>();
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
    /// `work` may run twice (see the module's comment): it keeps nothing outside `tx`.
    pub(super) async fn write<T, F>(&self, work: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: Fn(&Transaction<'_>) -> Result<T, BackendError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let queued = Box::new(Write {
            work,
            result: None,
            reply,
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
fn serve(mut conn: Connection, incoming: &mpsc::Receiver<Box<dyn Queued>>) {
    let mut previous = 0;
    while let Ok(first) = incoming.recv() {
        let mut round: Vec<Box<dyn Queued>> = std::iter::once(first)
            .chain(incoming.try_iter().take(ROUND_LIMIT - 1))
            .collect();
        if gathers(previous, round.len()) {
            std::thread::sleep(GATHER_WINDOW);
            round.extend(incoming.try_iter().take(ROUND_LIMIT - round.len()));
        }
        previous = round.len();
        let failed = commit_round(&mut conn, &mut round);
        for queued in round {
            queued.answer(failed.as_ref());
        }
    }
}

/// Whether a round that found `queued` writes waits [`GATHER_WINDOW`] for more, after a round of
/// `previous` writes: only while writes come faster than one a round, and the round is small.
fn gathers(previous: usize, queued: usize) -> bool {
    previous > 1 && queued < GATHER_ENOUGH
}

/// Runs a round's writes in one transaction and commits it, first without savepoints and, if a
/// write failed, again with one per write; returns the error that failed the whole round, if
/// one did.
fn commit_round(conn: &mut Connection, round: &mut [Box<dyn Queued>]) -> Option<BackendError> {
    for alone in [false, true] {
        round.iter_mut().for_each(|queued| queued.forget());
        let tx = match conn.transaction_with_behavior(TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(error) => return Some(sqlite_error(error)),
        };
        let mut all_ran = true;
        for queued in round.iter_mut() {
            all_ran = queued.run(&tx, alone);
            // An I/O error or a full disk makes SQLite roll the whole transaction back: the
            // writes run so far are undone, and none may run outside a transaction.
            if tx.is_autocommit() {
                return Some(BackendError::transient(
                    "sqlite rolled back a round of writes",
                ));
            }
            if !all_ran && !alone {
                break;
            }
        }
        if all_ran || alone {
            return tx.commit().err().map(sqlite_error);
        }
        if let Err(error) = tx.rollback() {
            return Some(sqlite_error(error));
        }
    }
    None
}

/// Runs `work` in a savepoint: undone alone if it fails.
fn in_savepoint<T>(
    tx: &Transaction<'_>,
    work: &impl Fn(&Transaction<'_>) -> Result<T, BackendError>,
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
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn writer() -> (tempfile::TempDir, Arc<Writer>, std::path::PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("db.sqlite3");
        let conn = Connection::open(&path).expect("open");
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER PRIMARY KEY)")
            .expect("schema");
        (dir, Arc::new(Writer::start(conn).expect("start")), path)
    }

    fn insert(n: i64) -> impl Fn(&Transaction<'_>) -> Result<i64, BackendError> {
        move |tx| {
            tx.execute("INSERT INTO t (n) VALUES (?1)", [n])
                .map(|_| n)
                .map_err(sqlite_error)
        }
    }

    fn failing(tx: &Transaction<'_>) -> Result<i64, BackendError> {
        tx.execute("INSERT INTO t (n) VALUES (2)", [])
            .map_err(sqlite_error)?;
        Err(BackendError::permanent("refused after writing"))
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

    /// Awaits `writes` so that they all share one round: a first round holds the writer until
    /// every one of them is queued.
    async fn in_one_round<F: Future>(writer: &Arc<Writer>, writes: F) -> F::Output {
        let (running, is_running) = mpsc::channel();
        let (open, gate) = mpsc::channel::<()>();
        let first = tokio::spawn({
            let writer = Arc::clone(writer);
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
        let (output, ()) = tokio::join!(writes, async { open.send(()).expect("the gate") });
        assert_eq!(first.await.expect("join").ok(), Some(0));
        output
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_write_is_undone_alone_and_its_round_commits_the_others() {
        let (_dir, writer, path) = writer();
        let (one, failed, duplicated, three) = in_one_round(&writer, async {
            tokio::join!(
                writer.write(insert(1)),
                writer.write(failing),
                writer.write(insert(1)),
                writer.write(insert(3)),
            )
        })
        .await;
        assert_eq!((one.ok(), three.ok()), (Some(1), Some(3)));
        assert!(failed.is_err() && duplicated.is_err());
        assert_eq!(
            rows(&path),
            [1, 3],
            "one round kept exactly the writes that succeeded"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_write_runs_once_unless_another_write_of_its_round_fails() {
        let (_dir, writer, path) = writer();
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = |n| {
            let (runs, insert) = (Arc::clone(&runs), insert(n));
            move |tx: &Transaction<'_>| {
                runs.fetch_add(1, Ordering::SeqCst);
                insert(tx)
            }
        };
        assert_eq!(writer.write(counted(1)).await.ok(), Some(1));
        assert_eq!(runs.load(Ordering::SeqCst), 1, "a round without a failure");
        let (four, failed) = in_one_round(&writer, async {
            tokio::join!(writer.write(counted(4)), writer.write(failing))
        })
        .await;
        assert_eq!(four.ok(), Some(4));
        assert!(failed.is_err());
        assert_eq!(
            runs.load(Ordering::SeqCst),
            3,
            "the round ran again, each write in a savepoint, once one of its writes failed"
        );
        assert_eq!(rows(&path), [1, 4]);
    }

    #[test]
    fn a_round_waits_for_more_writes_only_after_a_round_of_several_and_while_it_is_small() {
        assert!(
            !gathers(0, 1),
            "the first write of a quiet writer starts at once"
        );
        assert!(
            !gathers(1, 1),
            "a write after a round of one starts at once"
        );
        assert!(gathers(2, 1), "after a round of two, a small round waits");
        assert!(gathers(40, GATHER_ENOUGH - 1));
        assert!(
            !gathers(40, GATHER_ENOUGH),
            "a full enough round starts at once"
        );
    }

    #[tokio::test]
    async fn a_write_after_the_writer_stopped_is_a_transient_error() {
        let (_dir, writer, _path) = writer();
        let mut writer = Arc::into_inner(writer).expect("the only reference");
        drop(writer.queue.take());
        let error = writer.write(insert(1)).await.expect_err("stopped");
        assert!(error.is_transient(), "{error}");
    }
}
