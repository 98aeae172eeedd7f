//! Backups of a running embedded deployment, and their restore. Copying the database file of a
//! live WAL database is unsafe (the newest commits sit in the `-wal` file, and a copy taken
//! mid-checkpoint is torn), so both go through SQLite's online backup API: the backup copies
//! one consistent snapshot in a read transaction while the services go on writing, and the
//! restore writes through SQLite's own pager into a folder that no process has open, then
//! re-applies what was published after the backup (`reapply.rs`).

use std::fs::File;
use std::path::{Path, PathBuf};

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use super::DATABASE_FILE;
use super::durable::sync_folder;
use super::folder_lock::FolderLock;
use super::migrations;
use super::reapply::reapply_log;
use crate::error::sqlite_error;
use seatclaim_core::ports::BackendError;
use seatclaim_core::reports::{BackedUp, Restored};

/// Writes a consistent copy of the database in `data_dir` to `destination` (a new file) and
/// says what it wrote. Safe while the services run; they are not paused.
pub fn backup(data_dir: &Path, destination: &Path) -> Result<BackedUp, BackendError> {
    let _open = FolderLock::shared(data_dir)?;
    let database = existing_database(data_dir)?;
    if destination.exists() {
        return Err(BackendError::permanent(format!(
            "{} exists: a backup never overwrites a file",
            destination.display()
        )));
    }
    let partial = partial_path(destination);
    remove_if_present(&partial)?;
    let source = Connection::open_with_flags(&database, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .map_err(sqlite_error)?;
    let mut copy = Connection::open(&partial).map_err(sqlite_error)?;
    copy_database(&source, &mut copy)?;
    let version = check(&copy)?;
    // One self-contained file: the copy keeps no `-wal` beside it.
    copy.pragma_update(None, "journal_mode", "DELETE")
        .map_err(sqlite_error)?;
    drop(copy);
    sync(&partial)?;
    std::fs::rename(&partial, destination).map_err(|e| io_error(destination, &e))?;
    sync_parent(destination)?;
    let bytes = std::fs::metadata(destination)
        .map_err(|e| io_error(destination, &e))?
        .len();
    Ok(BackedUp {
        database,
        destination: destination.to_owned(),
        bytes,
        schema_version: version,
    })
}

/// Replaces the database in `data_dir` with the backup at `source`, refusing while any
/// seatclaim process has the folder open, then re-applies the reservation events published
/// after the backup's moment (`events.jsonl` and its rotated files), and says what it did. The
/// log itself is left as it is: what was published stays published, and a restore of the same
/// backup again gives the same state.
pub fn restore(data_dir: &Path, source: &Path) -> Result<Restored, BackendError> {
    std::fs::create_dir_all(data_dir).map_err(|e| io_error(data_dir, &e))?;
    let _alone = FolderLock::exclusive(data_dir)?;
    if !source.is_file() {
        return Err(BackendError::permanent(format!(
            "{} is not a backup file",
            source.display()
        )));
    }
    let backup = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(sqlite_error)?;
    let version = check(&backup)?;
    let database = data_dir.join(DATABASE_FILE);
    let mut live = Connection::open(&database).map_err(sqlite_error)?;
    copy_database(&backup, &mut live)?;
    live.pragma_update(None, "journal_mode", "WAL")
        .map_err(sqlite_error)?;
    // Every commit fsynced, as the services write (`db.rs`).
    live.pragma_update(None, "synchronous", "FULL")
        .map_err(sqlite_error)?;
    // The events are re-applied in this build's schema, as the services would migrate it.
    migrations::migrate(&mut live)?;
    let reapplication = reapply_log(&mut live, data_dir)?;
    live.pragma_update(None, "wal_checkpoint", "TRUNCATE")
        .map_err(sqlite_error)?;
    Ok(Restored {
        database,
        source: source.to_owned(),
        schema_version: version,
        migrated_to: (version < migrations::SCHEMA_VERSION).then_some(migrations::SCHEMA_VERSION),
        reapplication,
    })
}

/// Copies every page of `from` into `to` in one step: one read transaction, so one snapshot,
/// however busy the writers of `from` are.
fn copy_database(from: &Connection, to: &mut Connection) -> Result<(), BackendError> {
    match Backup::new(from, to)
        .map_err(sqlite_error)?
        .step(-1)
        .map_err(sqlite_error)?
    {
        StepResult::Done => Ok(()),
        other => Err(BackendError::transient(format!(
            "the database copy did not finish ({other:?}); try again"
        ))),
    }
}

/// Checks that `conn` is an intact seatclaim database this build can run, and returns its
/// schema version.
fn check(conn: &Connection) -> Result<usize, BackendError> {
    let verdict: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .map_err(sqlite_error)?;
    if verdict != "ok" {
        return Err(BackendError::permanent(format!(
            "the backup is damaged: {verdict}"
        )));
    }
    let version = migrations::schema_version(conn)?;
    if version == 0 {
        return Err(BackendError::permanent(
            "not a seatclaim database (it has no schema version)",
        ));
    }
    migrations::check_not_newer(conn)?;
    Ok(version)
}

fn existing_database(data_dir: &Path) -> Result<PathBuf, BackendError> {
    let database = data_dir.join(DATABASE_FILE);
    if database.is_file() {
        Ok(database)
    } else {
        Err(BackendError::permanent(format!(
            "{} has no database to back up",
            data_dir.display()
        )))
    }
}

fn partial_path(destination: &Path) -> PathBuf {
    let mut name = destination.as_os_str().to_owned();
    name.push(".partial");
    PathBuf::from(name)
}

fn remove_if_present(path: &Path) -> Result<(), BackendError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error(path, &e)),
        _ => Ok(()),
    }
}

fn sync(path: &Path) -> Result<(), BackendError> {
    File::open(path)
        .and_then(|file| file.sync_all())
        .map_err(|e| io_error(path, &e))
}

/// Makes the rename durable: the directory entry is on disk, not only the file's pages.
fn sync_parent(path: &Path) -> Result<(), BackendError> {
    sync_folder(path).map_err(|e| io_error(path, &e))
}

fn io_error(path: &Path, error: &std::io::Error) -> BackendError {
    BackendError::permanent(format!("{}: {error}", path.display()))
}
