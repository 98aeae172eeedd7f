//! The WAL's checkpoints, off the writer's path. With SQLite's automatic checkpoint, the commit
//! that takes the WAL past its threshold copies thousands of pages back into the database file
//! and fsyncs it before it returns, and every admission queued behind that commit waits for it:
//! the slowest answers of a steady load were those. Here a thread of its own, on a connection of
//! its own, runs a PASSIVE checkpoint every [`INTERVAL`]; it never blocks the writer (the writer
//! keeps appending to the WAL while pages are copied), and once a checkpoint has copied every
//! frame the writer's next transaction starts the WAL over. The writer keeps an automatic
//! checkpoint far above what this thread lets the WAL reach, as a backstop.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use crate::ports::BackendError;

/// How often the WAL is copied back into the database file.
const INTERVAL: Duration = Duration::from_millis(200);

/// The checkpoint thread, stopped and joined when dropped (its connection closes before the
/// database's folder lock is released).
pub(super) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing the file behind `conn`.
    pub(super) fn start(conn: Connection) -> Result<Self, BackendError> {
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("seatclaim-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
                    // PASSIVE: copies what it can without waiting for any reader or writer; a
                    // busy answer (another process's checkpoint) is tried again next time.
                    if let Err(error) =
                        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
                    {
                        tracing::debug!(%error, "checkpoint skipped");
                    }
                }
            })
            .map_err(|e| BackendError::permanent(format!("cannot start the checkpointer: {e}")))?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    #[test]
    fn the_wal_reaches_the_database_file_without_the_writer_checkpointing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("db.sqlite3");
        let writer = Connection::open(&path).expect("open");
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
                 CREATE TABLE t (b BLOB)",
            )
            .expect("schema");
        let _checkpointer =
            Checkpointer::start(Connection::open(&path).expect("open")).expect("start");
        writer
            .execute("INSERT INTO t VALUES (zeroblob(2000000))", [])
            .expect("a 2 MB row, in the WAL only");
        let size = || std::fs::metadata(&path).map_or(0, |m| m.len());
        let deadline = Instant::now() + Duration::from_secs(30);
        while size() < 2_000_000 {
            assert!(
                Instant::now() < deadline,
                "the file never grew: {} bytes",
                size()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
