//! The SQLite file: connections, transactions and the mapping of SQLite errors to retry advice.
//!
//! SQLite allows one writer at a time, so each process keeps one write connection, owned by its
//! writer thread (`writer.rs`; a writer of another process waits for SQLite's lock, retrying
//! every 200 µs up to the busy timeout), and a few read connections that WAL mode lets run beside
//! it, called on tokio's blocking pool.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use super::checkpointer::Checkpointer;
use super::folder_lock::FolderLock;
use super::migrations;
use super::writer::Writer;
use crate::error::sqlite_error;
use seatclaim_core::ports::BackendError;

const READERS: usize = 2;
/// Compiled statements kept per connection: more than the service has, so none is ever re-parsed.
const STATEMENT_CACHE: usize = 128;
/// How long a writer waits for another process's write before giving up with a transient error.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a writer that found the lock taken sleeps before it tries again. SQLite's own busy
/// timeout sleeps in steps that grow to 100 ms, so with the API and a worker in two processes a
/// writer slept up to 100 ms for a lock held a few milliseconds; a retry is one `fcntl`.
const BUSY_STEP: Duration = Duration::from_micros(200);
/// Retries before [`BUSY_TIMEOUT`] has passed (each sleep lasts at least [`BUSY_STEP`]).
const BUSY_RETRIES: u128 = BUSY_TIMEOUT.as_micros() / BUSY_STEP.as_micros();

/// WAL pages (4 KiB each, so about 64 MiB) between checkpoints; SQLite's default is 1,000. While
/// an event sells out, each hold writes a few pages scattered over the seats and their indexes,
/// and a checkpoint copies each page once however many commits wrote it: 16,000 pages decided
/// about 9% more holds per second than 4,000 in the sell-out's closed loop. A checkpoint then
/// takes longer, in the commit of the round that crosses the mark (the closed loop's p99 rose
/// from about 24 to 30 ms), and a restart after a crash replays at most this much WAL.
const WAL_PAGES: i64 = 16_000;

/// Dirty pages (4 KiB each, so 16 MiB) a transaction may keep in memory before SQLite writes
/// them to the WAL ahead of its commit.
const SPILL_PAGES: i64 = 4_096;

/// The database: one writer and a few readers on the same file.
pub(super) struct Db {
    /// Dropped first: its thread closes the write connection before the folder lock is released.
    writer: Writer,
    readers: Vec<Mutex<Connection>>,
    next_reader: AtomicUsize,
    /// Copies the WAL back into the file beside the writer (`checkpointer.rs`).
    _checkpointer: Checkpointer,
    /// Held while the file is open, so a restore never writes under this process.
    _folder: FolderLock,
}

impl Db {
    /// Opens (creating if needed) the file and migrates it to this build's schema version.
    pub(super) fn open(path: &Path) -> Result<Self, BackendError> {
        let folder = FolderLock::shared(path.parent().unwrap_or(Path::new(".")))?;
        let mut writer = connect(path)?;
        migrations::migrate(&mut writer)?;
        // The commit that takes the WAL past this many pages copies them back into the file; a
        // larger WAL copies a page written by many commits once instead of once per checkpoint.
        writer
            .pragma_update(None, "wal_autocheckpoint", WAL_PAGES)
            .map_err(sqlite_error)?;
        // A savepoint (each write of a round run again after one of them failed, `writer.rs`;
        // a multi-seat hold, `hold.rs`) copies each page it first touches into a statement
        // journal: kept in memory, that copy is a memcpy instead of a write to a temporary file.
        // It is never needed after a crash (the round's transaction rolls back whole), so nothing
        // durable depends on it.
        writer
            .pragma_update(None, "temp_store", "MEMORY")
            .map_err(sqlite_error)?;
        // A round that dirties more pages than the page cache holds (2 MiB) spilled them into the
        // WAL before its commit, and wrote many of them again at the commit: a sell-out's rounds
        // of holds did (about a fifth more `pwrite` calls, 4% fewer holds per second). Up to
        // [`SPILL_PAGES`] dirty pages now wait in memory for the commit; a bigger transaction
        // (an event of many seats being created) still spills past them.
        writer
            .pragma_update(None, "cache_spill", SPILL_PAGES)
            .map_err(sqlite_error)?;
        let readers = (0..READERS)
            .map(|_| connect(path).map(Mutex::new))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            _checkpointer: Checkpointer::start(connect(path)?)?,
            writer: Writer::start(writer)?,
            readers,
            next_reader: AtomicUsize::new(0),
            _folder: folder,
        })
    }

    /// Runs `work` in an IMMEDIATE transaction (the write lock is taken up front, so a read inside
    /// `work` cannot be invalidated by another writer), shared with the writes queued beside it,
    /// and returns once that transaction is durably committed. `work` may run twice, the first
    /// run rolled back (`writer.rs`): it keeps nothing outside the transaction.
    pub(super) async fn write<T, F>(&self, work: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: Fn(&Transaction<'_>) -> Result<T, BackendError> + Send + 'static,
    {
        self.writer.write(work).await
    }

    /// Runs a point read (a row by its key) on the calling thread when a read connection is free:
    /// it takes microseconds, less than handing it to the blocking pool and back. Anything that
    /// scans goes through [`Db::read`], so an async worker thread is never held for long. Each
    /// statement runs in SQLite's own read transaction (a `BEGIN` and its end around it were
    /// parsed and run on every call, a sixth of a job's read): a caller whose statements must
    /// see one snapshot uses [`Db::read`]; the queue's readiness hint reads two without one.
    pub(super) async fn lookup<T, F>(self: &Arc<Self>, work: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, BackendError> + Send + 'static,
    {
        for reader in &self.readers {
            if let Ok(conn) = reader.try_lock() {
                return work(&conn);
            }
        }
        self.read(move |tx| work(tx)).await
    }

    /// Fails unless the file is at this build's schema version: backs `/readyz`, so an instance
    /// whose file was changed under it (a restore, a newer build's migration) takes no traffic.
    pub(super) async fn check_schema(self: &Arc<Self>) -> Result<(), BackendError> {
        let version = self.lookup(migrations::schema_version).await?;
        if version == migrations::SCHEMA_VERSION {
            Ok(())
        } else {
            Err(BackendError::permanent(format!(
                "the database has schema version {version}, this build needs {}",
                migrations::SCHEMA_VERSION
            )))
        }
    }

    /// Runs `work` on a read connection, in one snapshot.
    pub(super) async fn read<T, F>(self: &Arc<Self>, work: F) -> Result<T, BackendError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, BackendError> + Send + 'static,
    {
        let db = Arc::clone(self);
        blocking(move || {
            let index = db.next_reader.fetch_add(1, Ordering::Relaxed) % db.readers.len();
            let mut conn = db.readers[index].lock().map_err(|_| poisoned())?;
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Deferred)
                .map_err(sqlite_error)?;
            work(&tx)
        })
        .await
    }
}

fn connect(path: &Path) -> Result<Connection, BackendError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(sqlite_error)?;
    conn.busy_handler(Some(wait_for_lock))
        .map_err(sqlite_error)?;
    // Every statement the service runs stays compiled: parsing SQL would otherwise cost more
    // than executing it on the hot paths (admission, claim, receive).
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // WAL lets readers run beside the writer; synchronous=FULL makes every commit durable
    // (fsync), which is what lets admission answer 202 and the worker acknowledge a message.
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(sqlite_error)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(sqlite_error)?;
    Ok(conn)
}

/// SQLite's busy handler: `retries` is how often this wait already retried.
fn wait_for_lock(retries: i32) -> bool {
    if u128::try_from(retries).unwrap_or(u128::MAX) >= BUSY_RETRIES {
        return false;
    }
    std::thread::sleep(BUSY_STEP);
    true
}

async fn blocking<T, F>(work: F) -> Result<T, BackendError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, BackendError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| BackendError::transient(format!("database task did not finish: {e}")))?
}

fn poisoned() -> BackendError {
    BackendError::permanent("a database connection was poisoned by an earlier panic")
}
