//! The conditional hold of a claim's seats, the write the core's step asks for when it decides a
//! hold (`step.rs`): all of the seats or none.

use jiff::Timestamp;
use rusqlite::{Transaction, params};

use crate::error::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::{Job, SeatId};
use seatclaim_core::ports::BackendError;

/// The conditional write: each seat moves to HELD only if it is still AVAILABLE or its hold has
/// lapsed. If any seat fails the condition, the savepoint rolls back the others (all or none).
pub(super) fn hold_seats(
    tx: &Transaction<'_>,
    job: &Job,
    seat_ids: &[SeatId],
    now: Timestamp,
    until: Timestamp,
) -> Result<bool, BackendError> {
    // One seat needs no savepoint: its single conditional UPDATE is all or nothing by itself.
    let atomic = seat_ids.len() > 1;
    if atomic {
        tx.prepare_cached("SAVEPOINT hold")
            .map_err(sqlite_error)?
            .execute([])
            .map_err(sqlite_error)?;
    }
    let mut update = tx
        .prepare_cached(
            "UPDATE seats SET state = 'HELD', job_id = ?3, hold_until = ?4
         WHERE event_id = ?1 AND seat_id = ?2
           AND (state = 'AVAILABLE' OR (state = 'HELD' AND hold_until <= ?5))",
        )
        .map_err(sqlite_error)?;
    for seat in seat_ids {
        let changed = update
            .execute(params![
                job.event_id.as_str(),
                seat.as_str(),
                job.job_id.to_string(),
                to_ms(until),
                to_ms(now)
            ])
            .map_err(sqlite_error)?;
        if changed == 0 {
            if atomic {
                tx.prepare_cached("ROLLBACK TO hold")
                    .map_err(sqlite_error)?
                    .execute([])
                    .map_err(sqlite_error)?;
                tx.prepare_cached("RELEASE hold")
                    .map_err(sqlite_error)?
                    .execute([])
                    .map_err(sqlite_error)?;
            }
            return Ok(false);
        }
    }
    if atomic {
        tx.prepare_cached("RELEASE hold")
            .map_err(sqlite_error)?
            .execute([])
            .map_err(sqlite_error)?;
    }
    Ok(true)
}
