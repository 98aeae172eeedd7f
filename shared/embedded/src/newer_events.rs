//! After a restore: the reservation events the published log (`events.jsonl` and its rotated
//! files) holds that are not older than the restored database's last change. Their buyers were
//! told of them, but the backup does not know them: the restore re-applies them
//! (`reapply.rs`).

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::EVENT_LOG_FILE;
use super::event_log::{KEPT_FILES, rotated};
use crate::db::sqlite_error;
use seatclaim_core::codec::{decode_log_line, to_ms};
use seatclaim_core::domain::ReservationEvent;
use seatclaim_core::ports::BackendError;

/// The job events of the data folder's log from the database's newest job change or recorded
/// event on, in the order they happened (the log's order within one instant). Those of that
/// very instant are included: re-applying an event the database has changes nothing. A line
/// that cannot be read (a line torn by a crash, a notice that is no job's) is skipped.
pub(super) fn newer_events(
    conn: &Connection,
    data_dir: &Path,
) -> Result<Vec<ReservationEvent>, BackendError> {
    let newest = last_change(conn)?;
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
                .filter(|event| newest.is_none_or(|at| to_ms(event.occurred_at) >= at)),
        );
    }
    // Stable: events of one instant keep the log's order.
    newer.sort_by_key(|event| event.occurred_at);
    Ok(newer)
}

/// The instant (ms) of the database's newest job change or recorded event; `None` if empty.
fn last_change(conn: &Connection) -> Result<Option<i64>, BackendError> {
    conn.query_row(
        "SELECT max(at) FROM (SELECT max(updated_at) AS at FROM jobs
                          UNION ALL SELECT max(created_at) FROM outbox)",
        [],
        |row| row.get(0),
    )
    .map_err(sqlite_error)
}

/// The log's rotated files, oldest first, then the log itself.
fn log_files(data_dir: &Path) -> Vec<PathBuf> {
    let log = data_dir.join(EVENT_LOG_FILE);
    let mut files: Vec<PathBuf> = (1..=KEPT_FILES).rev().map(|n| rotated(&log, n)).collect();
    files.push(log);
    files
}
