//! Who has a data folder open. Every process that opens the database holds a shared lock on
//! `seatclaim.lock` beside it for as long as it runs (the operating system drops it when the
//! process ends, however it ends); a restore takes the lock exclusively, so it never writes
//! under a running service, and a service never starts in the middle of a restore.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use seatclaim_core::ports::BackendError;

/// The lock file inside the data folder.
pub const LOCK_FILE: &str = "seatclaim.lock";

/// A held lock on a data folder; released when dropped.
#[derive(Debug)]
pub(super) struct FolderLock {
    _file: File,
}

impl FolderLock {
    /// The lock of a process that uses the folder (a service, `seatclaimctl`, a backup).
    pub(super) fn shared(data_dir: &Path) -> Result<Self, BackendError> {
        let file = open(data_dir)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(BackendError::permanent(format!(
                "{} is being restored (seatclaimctl restore); start once it has finished",
                data_dir.display()
            ))),
            Err(TryLockError::Error(e)) => Err(lock_error(data_dir, &e)),
        }
    }

    /// The lock of a restore: granted only while no process has the folder open.
    pub(super) fn exclusive(data_dir: &Path) -> Result<Self, BackendError> {
        let file = open(data_dir)?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(TryLockError::WouldBlock) => Err(BackendError::permanent(format!(
                "a seatclaim process (the API, the worker or seatclaimctl) is running on {}; \
                 stop every one of them before restoring",
                data_dir.display()
            ))),
            Err(TryLockError::Error(e)) => Err(lock_error(data_dir, &e)),
        }
    }
}

fn open(data_dir: &Path) -> Result<File, BackendError> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(data_dir.join(LOCK_FILE))
        .map_err(|e| lock_error(data_dir, &e))
}

fn lock_error(data_dir: &Path, error: &std::io::Error) -> BackendError {
    BackendError::permanent(format!(
        "cannot lock {}: {error}",
        data_dir.join(LOCK_FILE).display()
    ))
}
