use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use super::db::{from_json, from_ms, to_json, to_ms};
use super::{EmbeddedStore, decisions};
use crate::domain::{
    BuyerId, Closure, EventId, Job, JobId, JobStatus, ReservationEvent, Transition,
};
use crate::ports::{BackendError, Jobs};

#[async_trait]
impl Jobs for EmbeddedStore {
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.db.lookup(move |tx| load_job(tx, job_id)).await
    }

    async fn close(
        &self,
        job_id: JobId,
        closure: &Closure,
        now: Timestamp,
    ) -> Result<bool, BackendError> {
        let closure = closure.clone();
        let closed = self
            .db
            .write(move |tx| {
                let Some(Ok(transition)) = load_job(tx, job_id)?.map(|j| j.close(&closure, now))
                else {
                    return Ok(None);
                };
                save_transition(tx, &transition)?;
                Ok(Some(transition.job))
            })
            .await?;
        if let Some(job) = &closed {
            self.decisions.announce(job);
        }
        Ok(closed.is_some())
    }

    async fn note_failure(&self, job_id: JobId, error: &str) -> Result<(), BackendError> {
        let error = error.to_owned();
        self.db
            .write(move |tx| {
                tx.prepare_cached(
                    "UPDATE jobs SET first_error = coalesce(first_error, ?2), last_error = ?2
                     WHERE job_id = ?1",
                )?
                .execute(params![job_id.to_string(), error])?;
                Ok(())
            })
            .await
    }

    async fn reopen(&self, job_id: JobId, now: Timestamp) -> Result<bool, BackendError> {
        self.db
            .write(move |tx| {
                let Some(Ok(Some(transition))) = load_job(tx, job_id)?.map(|j| j.reopen(now))
                else {
                    return Ok(false);
                };
                save_transition(tx, &transition)?;
                Ok(true)
            })
            .await
    }

    async fn history(&self, job_id: JobId) -> Result<Vec<ReservationEvent>, BackendError> {
        self.db
            .read(move |tx| {
                let mut query =
                    tx.prepare_cached("SELECT body FROM outbox WHERE job_id = ?1 ORDER BY seq")?;
                let bodies =
                    query.query_map([job_id.to_string()], |row| row.get::<_, String>(0))?;
                bodies.map(|body| from_json(&body?)).collect()
            })
            .await
    }

    /// Woken by decisions made in this process (the in-process worker) as they commit, and by those
    /// of another process on the same file within the outbox follower's interval (10 ms); the
    /// fallback poll (250 ms) re-reads the job should both miss it.
    async fn wait_for_decision(
        &self,
        job_id: JobId,
        max: Duration,
    ) -> Result<Option<Job>, BackendError> {
        const FALLBACK_POLL: Duration = Duration::from_millis(250);
        let deadline = tokio::time::Instant::now() + max;
        self.following
            .get_or_try_init(|| decisions::follow(&self.db, &self.decisions))
            .await?;
        let mut watch = self.decisions.watch(job_id);
        loop {
            let job = self.job(job_id).await?;
            let now = tokio::time::Instant::now();
            if !job.as_ref().is_some_and(|j| j.status == JobStatus::Pending) || now >= deadline {
                return Ok(job);
            }
            tokio::select! {
                Some(decided) = watch.decided() => return Ok(Some(decided)),
                () = tokio::time::sleep(FALLBACK_POLL.min(deadline - now)) => {}
            }
        }
    }

    async fn of_event(&self, event_id: &EventId) -> Result<Vec<Job>, BackendError> {
        let event_id = event_id.clone();
        self.db
            .read(move |tx| {
                let ids: Vec<String> = tx
                    .prepare_cached("SELECT job_id FROM jobs WHERE event_id = ?1")?
                    .query_map([event_id.as_str()], |row| row.get(0))?
                    .collect::<Result<_, _>>()?;
                let mut jobs = Vec::with_capacity(ids.len());
                for id in ids.iter().filter_map(|id| JobId::parse(id)) {
                    jobs.extend(load_job(tx, id)?);
                }
                Ok(jobs)
            })
            .await
    }
}

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
