//! A waiting job's place in its section's line (`jobs.line_place`, the domain's
//! [`line_place`]): written in the transaction that moves the job to WAITLISTED, by its
//! admission or by its place in the draw of the sale's pre-queue.

use rusqlite::{OptionalExtension, Transaction, params};

use crate::error::sqlite_error;
use seatclaim_core::codec::from_ms;
use seatclaim_core::domain::{Job, line_place};
use seatclaim_core::ports::BackendError;

/// `job`, just moved to WAITLISTED in this transaction, takes its place in its line: by its
/// admission, or by its place in the draw if it came from the sale's pre-queue.
pub(super) fn join(tx: &Transaction<'_>, job: &Job) -> Result<(), BackendError> {
    let drawn: Option<(i64, i64)> = tx
        .prepare_cached(
            "SELECT events.sale_starts_at, prequeue.drawn FROM prequeue
             JOIN events ON events.event_id = prequeue.event_id
             WHERE prequeue.job_id = ?1 AND prequeue.drawn IS NOT NULL
               AND events.sale_starts_at IS NOT NULL",
        )
        .map_err(sqlite_error)?
        .query_row([job.job_id.to_string()], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .optional()
        .map_err(sqlite_error)?;
    let drawn = drawn
        .map(|(starts, place)| Ok((from_ms(starts)?, u64::try_from(place).unwrap_or(0))))
        .transpose()?;
    tx.prepare_cached("UPDATE jobs SET line_place = ?2 WHERE job_id = ?1")
        .map_err(sqlite_error)?
        .execute(params![job.job_id.to_string(), line_place(job, drawn)])
        .map_err(sqlite_error)?;
    Ok(())
}
