//! Moving a settled job's seats on SQLite (sold, released, or held longer), each write
//! conditioned on this job's hold, in the caller's write transaction. The core's step
//! ([`seatclaim_core::step::settle_one`]) decides and calls it.

use rusqlite::types::Value;
use rusqlite::{Transaction, params_from_iter};

use crate::error::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::{Job, Settlement};
use seatclaim_core::ports::BackendError;

/// Moves the seats `job` holds as `settlement` says; returns how many moved.
pub(super) fn settle_seats(
    tx: &Transaction<'_>,
    job: &Job,
    settlement: Settlement,
) -> Result<usize, BackendError> {
    // Each seat is addressed by its key and conditioned on this job's hold: a seat re-claimed by
    // another job after this hold lapsed stays theirs.
    let (statement, deadlines) = match settlement {
        Settlement::Sell => (
            "UPDATE seats SET state = 'SOLD', hold_until = NULL
             WHERE event_id = ?1 AND seat_id = ?2 AND job_id = ?3 AND state = 'HELD'",
            vec![],
        ),
        Settlement::Release => (
            "UPDATE seats SET state = 'AVAILABLE', job_id = NULL, hold_until = NULL
             WHERE event_id = ?1 AND seat_id = ?2 AND job_id = ?3 AND state = 'HELD'",
            vec![],
        ),
        Settlement::Extend { from, until } => (
            "UPDATE seats SET hold_until = ?4
             WHERE event_id = ?1 AND seat_id = ?2 AND job_id = ?3 AND state = 'HELD'
               AND hold_until = ?5",
            vec![to_ms(until), to_ms(from)],
        ),
    };
    let mut update = tx.prepare_cached(statement).map_err(sqlite_error)?;
    let job_text = job.job_id.to_string();
    let mut changed = 0;
    for seat in &job.seat_ids {
        let key = [job.event_id.as_str(), seat.as_str(), &job_text]
            .map(|text| Value::Text(text.to_owned()));
        let deadlines = deadlines.iter().copied().map(Value::Integer);
        changed += update
            .execute(params_from_iter(key.into_iter().chain(deadlines)))
            .map_err(sqlite_error)?;
    }
    Ok(changed)
}
