use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use super::EmbeddedStore;
use super::db::{from_json, from_ms, to_json, to_ms};
use crate::domain::{BuyerId, EventId, Job, JobId, JobStatus, ReservationEvent};
use crate::ports::{BackendError, Jobs};

#[async_trait]
impl Jobs for EmbeddedStore {
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.db.read(move |tx| load_job(tx, job_id)).await
    }

    async fn fail(
        &self,
        job_id: JobId,
        reason: &str,
        now: Timestamp,
    ) -> Result<bool, BackendError> {
        let reason = reason.to_owned();
        self.db
            .write(move |tx| {
                let Some(mut job) = load_job(tx, job_id)? else {
                    return Ok(false);
                };
                if job.status != JobStatus::Pending {
                    return Ok(false);
                }
                job.status = JobStatus::Failed;
                job.reason = Some(reason);
                save_transition(tx, &job, now)?;
                Ok(true)
            })
            .await
    }
}

/// Reads one job inside a transaction.
pub(super) fn load_job(tx: &Transaction<'_>, job_id: JobId) -> Result<Option<Job>, BackendError> {
    let row = tx
        .query_row(
            "SELECT event_id, buyer_id, request, status, seat_ids, hold_until, reason, accepted_at
             FROM jobs WHERE job_id = ?1",
            [job_id.to_string()],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                    row.get::<_, String>(4)?,
                    row.get::<_, Option<i64>>(5)?,
                    row.get::<_, Option<String>>(6)?,
                    row.get::<_, i64>(7)?,
                ))
            },
        )
        .optional()?;
    let Some((event_id, buyer_id, request, status, seat_ids, hold_until, reason, accepted_at)) =
        row
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
    }))
}

/// Inserts a new PENDING job.
pub(super) fn insert_job(
    tx: &Transaction<'_>,
    job: &Job,
    now: Timestamp,
) -> Result<(), BackendError> {
    tx.execute(
        "INSERT INTO jobs (job_id, event_id, buyer_id, request, status, seat_ids, accepted_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
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

/// Stores a job's new status and records its reservation event in the outbox, in the caller's
/// transaction: the transition and its event commit together or not at all.
pub(super) fn save_transition(
    tx: &Transaction<'_>,
    job: &Job,
    now: Timestamp,
) -> Result<(), BackendError> {
    tx.execute(
        "UPDATE jobs SET status = ?2, seat_ids = ?3, hold_until = ?4, reason = ?5, updated_at = ?6
         WHERE job_id = ?1",
        params![
            job.job_id.to_string(),
            job.status.as_str(),
            to_json(&job.seat_ids)?,
            job.hold_expires_at.map(to_ms),
            job.reason,
            to_ms(now),
        ],
    )?;
    tx.execute(
        "INSERT INTO outbox (job_id, body, created_at) VALUES (?1, ?2, ?3)",
        params![
            job.job_id.to_string(),
            to_json(&ReservationEvent::of(job, now))?,
            to_ms(now),
        ],
    )?;
    Ok(())
}
