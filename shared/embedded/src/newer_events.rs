//! After a restore: the reservation events the published log (`events.jsonl` and its rotated
//! files) holds that are not older than the restored database's last change. Their buyers were
//! told of them, but the backup does not know them: the restore re-applies them
//! (`reapply.rs`).

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::EVENT_LOG_FILE;
use super::event_log::{KEPT_FILES, rotated};
use crate::error::sqlite_error;
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

#[cfg(test)]
mod tests {
    use super::*;
    use seatclaim_core::domain::{BuyerId, EventId, Intent, Job, JobId, SeatRequest};

    fn at(ms: i64) -> jiff::Timestamp {
        jiff::Timestamp::from_millisecond(ms).expect("instant")
    }

    /// A log line of a PENDING job's event at `ms`.
    fn line(ms: i64) -> (JobId, String) {
        let job = Job::pending(&Intent {
            access: None,
            job_id: JobId::new(),
            event_id: EventId::parse("e1").expect("event id"),
            buyer_id: BuyerId::parse("b1").expect("buyer id"),
            request: SeatRequest::in_section("A", 1).expect("request"),
            accepted_at: at(ms),
            opens_at: None,
        });
        let event = ReservationEvent::of(&job, at(ms));
        let detail = serde_json::to_string(&event).expect("json");
        (
            job.job_id,
            format!("{{\"detail-type\":\"x\",\"detail\":{detail}}}\n"),
        )
    }

    #[test]
    fn the_events_from_the_last_change_on_are_read_from_every_log_file_in_time_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut conn = Connection::open(dir.path().join("db.sqlite3")).expect("open");
        crate::migrations::migrate(&mut conn).expect("migrate");
        conn.execute_batch("INSERT INTO outbox (job_id, body, created_at) VALUES ('j', '', 2000)")
            .expect("the backup's last change");
        let (older, same, newer, rotated_newer) = (line(1999), line(2000), line(3000), line(2500));
        let log = dir.path().join(EVENT_LOG_FILE);
        let live = format!("{}{}torn{{\n{}", older.1, same.1, newer.1);
        std::fs::write(&log, live).expect("log");
        std::fs::write(rotated(&log, 1), &rotated_newer.1).expect("rotated");
        let read: Vec<JobId> = newer_events(&conn, dir.path())
            .expect("read")
            .iter()
            .map(|event| event.job_id)
            .collect();
        assert_eq!(read, [same.0, rotated_newer.0, newer.0]);
    }
}
