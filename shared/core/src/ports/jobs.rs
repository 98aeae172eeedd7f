use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;

use super::BackendError;
use crate::domain::{Closure, EventId, Job, JobId, JobStatus, Line, ReservationEvent};

/// Reading jobs, closing the ones that cannot be claimed for, and the operators' views of them.
#[async_trait]
pub trait Jobs: Send + Sync {
    /// The job, or `None` if there is no such job.
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError>;

    /// Where a PENDING `job` stands in its event's line, and how many of the event's intents
    /// have been decided so far: exact where the store orders its jobs (SQLite), an estimate
    /// where it cannot without a hot key (DynamoDB, from admission tickets and batched counts).
    async fn line(&self, job: &Job) -> Result<Line, BackendError>;

    /// A WAITLISTED job's place in its section's line, from 1, in the order the intents were
    /// admitted; `None` for a job that is not waiting.
    async fn waitlist_position(&self, job: &Job) -> Result<Option<u64>, BackendError>;

    /// Closes a PENDING job as the domain's `Job::close` decides (FAILED, or REJECTED for an
    /// expired request), recording its event; returns whether it did. A job that was already
    /// decided keeps its outcome: a late failure never overwrites a hold.
    async fn close(
        &self,
        job_id: JobId,
        closure: &Closure,
        now: Timestamp,
    ) -> Result<bool, BackendError>;

    /// Records a transient failure met while processing the job (first and latest are kept), so
    /// operators can see why an intent ended in the dead-letter queue.
    async fn note_failure(&self, job_id: JobId, error: &str) -> Result<(), BackendError>;

    /// Moves a FAILED job back to PENDING (the domain's `Job::reopen`, recorded as a transition)
    /// before its intent is replayed; returns whether it did. Any other status is left alone.
    async fn reopen(&self, job_id: JobId, now: Timestamp) -> Result<bool, BackendError>;

    /// The SOLD job whose sale recorded the payment `reference` (its `payment_ref`), if any: a
    /// provider's later report of the same payment that names no job (Stripe's
    /// `payment_intent.succeeded` after the Checkout that sold the hold) is then recognised as
    /// paid, never published as unmatched for a refund of a sold seat. Strongly consistent
    /// with the sale, which writes what this reads in its own atomic step.
    async fn sold_by_payment(&self, reference: &str) -> Result<Option<JobId>, BackendError>;

    /// Every reservation event recorded for the job, oldest first: its history of transitions.
    async fn history(&self, job_id: JobId) -> Result<Vec<ReservationEvent>, BackendError>;

    /// Deletes up to `limit` jobs in one of `statuses` decided before `cutoff`, with their
    /// idempotency records and their history, and up to `limit` published reservation events
    /// that happened before `cutoff`; returns how many jobs it deleted. A job with an unpublished event or an
    /// intent still in a queue is kept. The domain's `Retention` names the statuses and the
    /// cutoff. This default deletes nothing: a store that expires records itself (DynamoDB's
    /// TTL on the `expires_at` each final transition writes) needs no sweep.
    async fn purge_decided(
        &self,
        statuses: &[JobStatus],
        cutoff: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let _ = (statuses, cutoff, limit);
        Ok(0)
    }

    /// Every job of an event, for the audit.
    async fn of_event(&self, event_id: &EventId) -> Result<Vec<Job>, BackendError>;

    /// The job once a PENDING or WAITLISTED job's status has changed (or at once for any other),
    /// or as it stands after `max`: the long poll behind `GET /v1/jobs/{id}?wait=N`, which spares
    /// clients (and the store) a polling storm. This default polls with backoff; a backend that
    /// hears about decisions can answer sooner.
    async fn wait_for_decision(
        &self,
        job_id: JobId,
        max: Duration,
    ) -> Result<Option<Job>, BackendError> {
        let deadline = tokio::time::Instant::now() + max;
        let mut pause = Duration::from_millis(20);
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
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }
}
