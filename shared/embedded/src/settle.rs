//! Settling a job on SQLite (confirm, cancel, expiry, extension): the seats' writes conditioned
//! on this job's hold and the job's transition, in the caller's write transaction; seats given
//! back go to their section's line in that same transaction.

use jiff::Timestamp;
use rusqlite::types::Value;
use rusqlite::{Transaction, params_from_iter};

use super::job_rows::{load_job, save_transition};
use super::terms::terms as event_terms;
use super::waitlist;
use crate::db::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::{HoldExtension, Job, JobAction, JobId, Payment, Settlement, Settling};
use seatclaim_core::ports::{BackendError, Settled};

/// Settles one job as the domain decides, in the caller's write transaction; returns the answer,
/// and the jobs a line handed the released seats to (or moved up past a cancelled place).
pub(super) fn settle_one(
    tx: &Transaction<'_>,
    job_id: JobId,
    action: JobAction,
    payment: Option<&Payment>,
    now: Timestamp,
) -> Result<(Settled, Vec<Job>), BackendError> {
    let job = load_job(tx, job_id)?;
    let extension = match (&job, action) {
        (Some(job), JobAction::Extend) => {
            event_terms(tx, &job.event_id)?.map_or(HoldExtension::NONE, |terms| terms.extension)
        }
        _ => HoldExtension::NONE,
    };
    let (
        job,
        Settling {
            transition,
            seats: settlement,
        },
    ) = match Settled::plan(job, action, payment, extension, now) {
        Ok(plan) => plan,
        Err(answer) => return Ok((answer, Vec::new())),
    };
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
    let job_text = job_id.to_string();
    let mut changed = 0;
    for seat in &job.seat_ids {
        let key = [job.event_id.as_str(), seat.as_str(), &job_text]
            .map(|text| Value::Text(text.to_owned()));
        let deadlines = deadlines.iter().copied().map(Value::Integer);
        changed += update
            .execute(params_from_iter(key.into_iter().chain(deadlines)))
            .map_err(sqlite_error)?;
    }
    if settlement != Settlement::Release && changed != job.seat_ids.len() {
        // Only possible if a seat was taken over after its hold lapsed, which the domain already
        // refuses; the check keeps a confirm or extension from touching part of a hold regardless.
        return Err(BackendError::permanent(format!(
            "job {job_id} holds {changed} of its {} seats",
            job.seat_ids.len()
        )));
    }
    save_transition(tx, &transition)?;
    let served = match settlement {
        Settlement::Release => waitlist::serve_after(tx, &transition.job, now)?,
        Settlement::Sell | Settlement::Extend { .. } => Vec::new(),
    };
    Ok((Settled::Done(Box::new(transition.job)), served))
}
