//! The checkpointer: a thread of its own, with a connection of its own, that copies committed WAL
//! frames back into the database file while the writer goes on committing.
//!
//! SQLite checkpoints in the commit that takes the WAL past `wal_autocheckpoint` pages, so the
//! round that crossed the mark waited while its thread copied up to that many pages and fsynced
//! the file. In an open loop of 9,343 reservations a second (pinned) that was a rise of the p99
//! to 20-40 ms about every 1.4 s, for the whole run. A PASSIVE checkpoint on another connection
//! copies what is committed without taking the write lock, so this thread does it every
//! [`PERIOD`] instead, a few hundred pages at a time, and the flush of each is short. The
//! writer's own automatic checkpoint stays: it then finds nearly everything copied, copies the
//! last frames, and lets the next transaction start the WAL from its beginning again (only a
//! checkpoint that finds no frame left to copy lets SQLite restart the WAL, and only the writer
//! can find that while it is not writing).

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::sqlite_error;
use seatclaim_core::ports::BackendError;

/// How often a busy WAL is copied back: the writer's own checkpoint copies at most what was
/// committed since (at 9,343 decisions/s with the writer's gathered rounds, about 500 frames).
const PERIOD: Duration = Duration::from_millis(50);
/// How long the pause grows to while checkpoints find nothing to copy.
const MAX_IDLE_PERIOD: Duration = Duration::from_secs(1);

/// The checkpointer thread, stopped and joined when dropped, so that its connection is closed
/// before the database's folder lock is released.
pub(super) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts the thread that checkpoints on `conn`, a connection of its own to the database.
    pub(super) fn start(conn: Connection) -> Result<Self, BackendError> {
        let (stop, stopped) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("seatclaim-checkpoint".into())
            .spawn(move || run(&conn, &stopped))
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

/// Checkpoints every [`PERIOD`] while the WAL changes, backing off to [`MAX_IDLE_PERIOD`] while
/// it does not, until told to stop.
fn run(conn: &Connection, stopped: &mpsc::Receiver<()>) {
    let (mut pause, mut last) = (PERIOD, Wal::default());
    loop {
        match stopped.recv_timeout(pause) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        pause = match checkpoint(conn) {
            Ok(wal) if wal == last => (pause * 2).min(MAX_IDLE_PERIOD),
            Ok(wal) => {
                last = wal;
                PERIOD
            }
            Err(error) => {
                tracing::warn!(%error, "a background checkpoint failed; the writer's own copies the WAL");
                MAX_IDLE_PERIOD
            }
        };
    }
}

/// The WAL as a checkpoint left it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Wal {
    /// Frames in the WAL (-1 when another checkpoint held the lock).
    frames: i64,
    /// How many of them are copied into the database file.
    copied: i64,
}

/// One PASSIVE checkpoint: copies the committed frames no reader still needs into the file,
/// without waiting for any lock.
fn checkpoint(conn: &Connection) -> Result<Wal, BackendError> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok(Wal {
            frames: row.get(1)?,
            copied: row.get(2)?,
        })
    })
    .map_err(sqlite_error)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use super::*;

    fn database_file_len(path: &Path) -> u64 {
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
    }

    /// A database in WAL mode with a table of page-sized rows, its writer's connection set up
    /// by `pragmas`, and a checkpointer running on a connection of its own.
    fn database_with_checkpointer(
        pragmas: &str,
    ) -> (tempfile::TempDir, PathBuf, Connection, Checkpointer) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("db.sqlite3");
        let writer = Connection::open(&path).expect("open");
        writer
            .execute_batch(&format!(
                "PRAGMA journal_mode = WAL; {pragmas}
                 CREATE TABLE t (n INTEGER PRIMARY KEY, body BLOB)"
            ))
            .expect("schema");
        let checkpointer =
            Checkpointer::start(Connection::open(&path).expect("open")).expect("start");
        (dir, path, writer, checkpointer)
    }

    #[test]
    fn committed_frames_reach_the_database_file_without_the_writer_checkpointing() {
        let (_dir, path, writer, _checkpointer) =
            database_with_checkpointer("PRAGMA wal_autocheckpoint = 0;");
        let empty = database_file_len(&path);
        for n in 0..200 {
            writer
                .execute("INSERT INTO t VALUES (?1, zeroblob(4000))", [n])
                .expect("insert");
        }
        // 200 rows of 4 KB are about 200 pages; the writer copies none of them itself.
        let deadline = Instant::now() + Duration::from_secs(10);
        while database_file_len(&path) < empty + 150 * 4096 {
            assert!(
                Instant::now() < deadline,
                "the file still has {} bytes",
                database_file_len(&path)
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let wal = checkpoint(&writer).expect("checkpoint");
        assert_eq!(wal.frames, wal.copied, "nothing is left to copy: {wal:?}");
    }

    #[test]
    fn the_wal_still_starts_over_while_the_checkpointer_copies_beside_a_busy_writer() {
        let (dir, _path, writer, _checkpointer) = database_with_checkpointer(
            "PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 100;",
        );
        // About 3,000 commits of a page each: without a restart the WAL would hold them all.
        for n in 0..3_000 {
            writer
                .execute("INSERT INTO t VALUES (?1, zeroblob(4000))", [n])
                .expect("insert");
        }
        let wal = std::fs::metadata(dir.path().join("db.sqlite3-wal")).expect("the WAL");
        assert!(
            wal.len() < 1_000 * 4_120,
            "the WAL grew to {} bytes: it was not restarted after its checkpoints",
            wal.len()
        );
    }
}
