//! After a restore: the holds and sales the published log (`events.jsonl` and its rotated files)
//! tells of that are newer than the restored database's last change. Their buyers were told of
//! them, but the restored folder does not know them: its seats may be sold again, so operators
//! reconcile these jobs (`seatclaimctl restore` lists them).

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::event_log::{KEPT_FILES, rotated};
use super::{DATABASE_FILE, EVENT_LOG_FILE};
use crate::db::sqlite_error;
use seatclaim_core::codec::{decode_log_line, to_ms};
use seatclaim_core::domain::{JobStatus, ReservationEvent};
use seatclaim_core::ports::BackendError;

/// The `Held` and `Sold` events of the data folder's log that are newer than its database's
/// newest job change or recorded event, oldest first. A line that cannot be read (a line torn
/// by a crash) is skipped: the database, not the log, is what was restored.
pub fn published_after_database(data_dir: &Path) -> Result<Vec<ReservationEvent>, BackendError> {
    let conn = Connection::open(data_dir.join(DATABASE_FILE)).map_err(sqlite_error)?;
    let newest: Option<i64> = conn
        .query_row(
            "SELECT max(at) FROM (SELECT max(updated_at) AS at FROM jobs
                              UNION ALL SELECT max(created_at) FROM outbox)",
            [],
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    let mut newer = Vec::new();
    for file in log_files(data_dir) {
        let text = match std::fs::read_to_string(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(BackendError::permanent(format!("{}: {e}", file.display()))),
        };
        newer.extend(
            text.lines()
                .filter_map(|line| decode_log_line(line).ok().flatten())
                .filter(|event| matches!(event.status, JobStatus::Held | JobStatus::Sold))
                .filter(|event| newest.is_none_or(|at| to_ms(event.occurred_at) > at)),
        );
    }
    newer.sort_by_key(|event| event.occurred_at);
    Ok(newer)
}

/// The log and its rotated files.
fn log_files(data_dir: &Path) -> Vec<PathBuf> {
    let log = data_dir.join(EVENT_LOG_FILE);
    let older = (1..=KEPT_FILES).map(|n| rotated(&log, n));
    std::iter::once(log.clone()).chain(older).collect()
}
