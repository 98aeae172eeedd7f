//! The `jobs` table's rows: reading a job, inserting a PENDING one, and persisting a decided
//! transition with its outbox event. Every module that touches a job row goes through here.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use super::db::{from_json, from_ms, to_json, to_ms};
use crate::domain::{BuyerId, EventId, Job, JobId, JobStatus, Transition};
use crate::ports::BackendError;

/// Reads one job inside a transaction.
pub(super) fn load_job(tx: &Transaction<'_>, job_id: JobId) -> Result<Option<Job>, BackendError> {
    let row = tx
        .prepare_cached(
            "SELECT event_id, buyer_id, request, status, seat_ids, hold_until, reason, accepted_at,
                    first_error, last_error
             FROM jobs WHERE job_id = ?1",
        )?
        .query_row([job_id.to_string()], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
                row.get::<_, String>(3)?,
                row.get::<_, String>(4)?,
                row.get::<_, Option<i64>>(5)?,
                row.get::<_, Option<String>>(6)?,
                row.get::<_, i64>(7)?,
                row.get::<_, Option<String>>(8)?,
                row.get::<_, Option<String>>(9)?,
            ))
        })
        .optional()?;
    let Some((
        event_id,
        buyer_id,
        request,
        status,
        seat_ids,
        hold_until,
        reason,
        accepted_at,
        first_error,
        last_error,
    )) = row
    else {
        return Ok(None);
    };
    let corrupt = |what: &str| BackendError::permanent(format!("job {job_id} has {what}"));
    Ok(Some(Job {
        job_id,
        event_id: EventId::parse(&event_id).map_err(|_| corrupt("an invalid event id"))?,
        buyer_id: BuyerId::parse(&buyer_id).map_err(|_| corrupt("an invalid buyer id"))?,
        request: from_json(&request)?,
        status: JobStatus::parse(&status).ok_or_else(|| corrupt("an unknown status"))?,
        seat_ids: from_json(&seat_ids)?,
        hold_expires_at: hold_until.map(from_ms).transpose()?,
        reason,
        accepted_at: from_ms(accepted_at)?,
        first_error,
        last_error,
    }))
}

/// Inserts a new PENDING job.
pub(super) fn insert_job(
    tx: &Transaction<'_>,
    job: &Job,
    now: Timestamp,
) -> Result<(), BackendError> {
    tx.prepare_cached("INSERT INTO jobs (job_id, event_id, buyer_id, request, status, seat_ids, accepted_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")?.execute(params![
            job.job_id.to_string(),
            job.event_id.as_str(),
            job.buyer_id.as_str(),
            to_json(&job.request)?,
            job.status.as_str(),
            to_json(&job.seat_ids)?,
            to_ms(job.accepted_at),
            to_ms(now),
        ],
    )?;
    Ok(())
}

/// Persists a decided transition and records its reservation event in the outbox, in the
/// caller's transaction, on the domain's condition that the job still has the status it moved
/// from: the transition and its event commit together or not at all.
pub(super) fn save_transition(
    tx: &Transaction<'_>,
    transition: &Transition,
) -> Result<(), BackendError> {
    let (job, at) = (&transition.job, to_ms(transition.event.occurred_at));
    let changed = tx
        .prepare_cached(
            "UPDATE jobs SET status = ?2, seat_ids = ?3, hold_until = ?4, reason = ?5, updated_at = ?6
             WHERE job_id = ?1 AND status = ?7",
        )?
        .execute(params![
            job.job_id.to_string(),
            job.status.as_str(),
            to_json(&job.seat_ids)?,
            job.hold_expires_at.map(to_ms),
            job.reason,
            at,
            transition.from.as_str(),
        ])?;
    if changed != 1 {
        // The caller read the job in this same write transaction, so only a bug gets here.
        return Err(BackendError::permanent(format!(
            "job {} was no longer {} when its transition was written",
            job.job_id,
            transition.from.as_str()
        )));
    }
    tx.prepare_cached("INSERT INTO outbox (job_id, body, created_at) VALUES (?1, ?2, ?3)")?
        .execute(params![
            job.job_id.to_string(),
            to_json(&transition.event)?,
            at
        ])?;
    Ok(())
}
