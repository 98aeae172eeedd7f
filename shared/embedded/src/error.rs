//! What a SQLite error means to the caller: the one mapping from `rusqlite`'s errors to the
//! port's [`BackendError`], used by every module that runs a statement.

use rusqlite::ErrorCode;
use seatclaim_core::ports::BackendError;

/// What a SQLite error means to the caller: busy, locked, out of space or I/O may pass and is
/// worth a retry; anything else is permanent.
pub(crate) fn sqlite_error(error: rusqlite::Error) -> BackendError {
    let transient = matches!(
        error.sqlite_error_code(),
        Some(
            ErrorCode::DatabaseBusy
                | ErrorCode::DatabaseLocked
                | ErrorCode::SystemIoFailure
                | ErrorCode::DiskFull
                | ErrorCode::OutOfMemory
                | ErrorCode::CannotOpen
        )
    );
    if transient {
        BackendError::transient(format!("sqlite: {error}"))
    } else {
        BackendError::permanent(format!("sqlite: {error}"))
    }
}
