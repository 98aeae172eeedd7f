use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};

use super::job_rows::{count_decided, line, load_job, save_transition};
use super::{EmbeddedStore, decisions};
use crate::error::sqlite_error;
use seatclaim_core::codec::decode_event;
use seatclaim_core::domain::{Closure, EventId, Job, JobId, JobStatus, Line, ReservationEvent};
use seatclaim_core::ports::{BackendError, Jobs};

/// The SOLD job whose sale recorded a payment reference, by schema version 12's partial index
/// (`jobs_sold_by_payment`): the query repeats the index's expression and its condition, so
/// SQLite reads the index and no other row.
pub(crate) const SOLD_BY_PAYMENT: &str = "SELECT job_id FROM jobs
     WHERE status = 'SOLD' AND json_valid(payment)
       AND json_extract(payment, '$.payment_ref') = ?1
     LIMIT 1";

#[async_trait]
impl Jobs for EmbeddedStore {
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.db.lookup(move |tx| load_job(tx, job_id)).await
    }

    async fn line(&self, job: &Job) -> Result<Line, BackendError> {
        let job = job.clone();
        self.db.read(move |tx| line(tx, &job)).await
    }

    async fn waitlist_position(&self, job: &Job) -> Result<Option<u64>, BackendError> {
        if job.status != JobStatus::Waitlisted {
            return Ok(None);
        }
        let job = job.clone();
        self.db
            .read(move |tx| super::waitlist::position(tx, &job).map(Some))
            .await
    }

    async fn purge_decided(
        &self,
        statuses: &[JobStatus],
        cutoff: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let statuses = statuses.to_vec();
        self.db
            .write(move |tx| super::retention::purge(tx, &statuses, cutoff, limit))
            .await
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
                count_decided(tx, &transition.job.event_id, 1)?;
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
                )
                .map_err(sqlite_error)?
                .execute(params![job_id.to_string(), error])
                .map_err(sqlite_error)?;
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

    async fn sold_by_payment(&self, reference: &str) -> Result<Option<JobId>, BackendError> {
        let reference = reference.to_owned();
        let found: Option<String> = self
            .db
            .lookup(move |tx| {
                tx.prepare_cached(SOLD_BY_PAYMENT)
                    .map_err(sqlite_error)?
                    .query_row([reference], |row| row.get(0))
                    .optional()
                    .map_err(sqlite_error)
            })
            .await?;
        found
            .map(|id| {
                JobId::parse(&id)
                    .ok_or_else(|| BackendError::permanent(format!("job {id} has an invalid id")))
            })
            .transpose()
    }

    async fn history(&self, job_id: JobId) -> Result<Vec<ReservationEvent>, BackendError> {
        self.db
            .read(move |tx| {
                let mut query = tx
                    .prepare_cached("SELECT body FROM outbox WHERE job_id = ?1 ORDER BY seq")
                    .map_err(sqlite_error)?;
                let bodies = query
                    .query_map([job_id.to_string()], |row| row.get::<_, String>(0))
                    .map_err(sqlite_error)?;
                bodies
                    .map(|body| decode_event(&body.map_err(sqlite_error)?))
                    .collect()
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
        let mut first = None;
        loop {
            let job = self.job(job_id).await?;
            let status = job.as_ref().map(|j| j.status);
            let waiting_for = *first.get_or_insert(status);
            let now = tokio::time::Instant::now();
            if !status.is_some_and(JobStatus::awaits_decision)
                || status != waiting_for
                || now >= deadline
            {
                return Ok(job);
            }
            tokio::select! {
                Some(changed) = watch.decided() => {
                    if Some(changed.status) != waiting_for {
                        return Ok(Some(changed));
                    }
                }
                () = tokio::time::sleep(FALLBACK_POLL.min(deadline - now)) => {}
            }
        }
    }

    async fn of_event(&self, event_id: &EventId) -> Result<Vec<Job>, BackendError> {
        // A scan of the jobs: only the audit asks, rarely, and an index by event would cost every
        // admission a write to it (schema version 5 keeps one for the held and sold jobs only).
        let event_id = event_id.clone();
        self.db
            .read(move |tx| {
                let ids: Vec<String> = tx
                    .prepare_cached("SELECT job_id FROM jobs WHERE event_id = ?1")
                    .map_err(sqlite_error)?
                    .query_map([event_id.as_str()], |row| row.get(0))
                    .map_err(sqlite_error)?
                    .collect::<Result<_, _>>()
                    .map_err(sqlite_error)?;
                let mut jobs = Vec::with_capacity(ids.len());
                for id in ids.iter().filter_map(|id| JobId::parse(id)) {
                    jobs.extend(load_job(tx, id)?);
                }
                Ok(jobs)
            })
            .await
    }
}
