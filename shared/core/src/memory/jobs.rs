use async_trait::async_trait;
use jiff::Timestamp;

use super::MemoryStore;
use crate::domain::{Closure, EventId, Job, JobId, JobStatus, Line, ReservationEvent};
use crate::ports::{BackendError, Jobs};

#[async_trait]
impl Jobs for MemoryStore {
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        Ok(self.lock().job(job_id).cloned())
    }

    async fn line(&self, job: &Job) -> Result<Line, BackendError> {
        let state = self.lock();
        let of_event = || state.jobs().filter(|other| other.event_id == job.event_id);
        let admitted = |other: &Job| (other.accepted_at, other.job_id);
        let ahead = of_event()
            .filter(|other| other.status == JobStatus::Pending && admitted(other) < admitted(job))
            .count();
        let decided = of_event()
            .filter(|other| other.status != JobStatus::Pending)
            .count();
        let decided = u64::try_from(decided).unwrap_or(u64::MAX);
        if let Some(line) = state.prequeue_line(job, decided) {
            return Ok(line);
        }
        Ok(Line {
            ahead: u64::try_from(ahead).unwrap_or(u64::MAX),
            decided,
            opens_at: None,
        })
    }

    async fn waitlist_position(&self, job: &Job) -> Result<Option<u64>, BackendError> {
        Ok(super::waitlist::position(&self.lock(), job))
    }

    async fn close(
        &self,
        job_id: JobId,
        closure: &Closure,
        now: Timestamp,
    ) -> Result<bool, BackendError> {
        self.lock().atomically(|state| {
            let Some(Ok(transition)) = state.job(job_id).map(|job| job.close(closure, now)) else {
                return Ok(false);
            };
            state.save_transition(&transition)?;
            Ok(true)
        })
    }

    async fn note_failure(&self, job_id: JobId, error: &str) -> Result<(), BackendError> {
        let mut state = self.lock();
        if let Some(mut job) = state.job(job_id).cloned() {
            job.first_error.get_or_insert_with(|| error.to_owned());
            job.last_error = Some(error.to_owned());
            state.put_job(job);
        }
        Ok(())
    }

    async fn reopen(&self, job_id: JobId, now: Timestamp) -> Result<bool, BackendError> {
        self.lock().atomically(|state| {
            let Some(Ok(Some(transition))) = state.job(job_id).map(|job| job.reopen(now)) else {
                return Ok(false);
            };
            state.save_transition(&transition)?;
            Ok(true)
        })
    }

    async fn sold_by_payment(&self, reference: &str) -> Result<Option<JobId>, BackendError> {
        Ok(self
            .lock()
            .jobs()
            .find(|job| {
                job.status == JobStatus::Sold && job.payment_ref.as_deref() == Some(reference)
            })
            .map(|job| job.job_id))
    }

    async fn history(&self, job_id: JobId) -> Result<Vec<ReservationEvent>, BackendError> {
        Ok(self
            .lock()
            .outbox()
            .iter()
            .filter(|recorded| recorded.event.job_id == job_id)
            .map(|recorded| recorded.event.clone())
            .collect())
    }

    async fn of_event(&self, event_id: &EventId) -> Result<Vec<Job>, BackendError> {
        Ok(self
            .lock()
            .jobs()
            .filter(|job| &job.event_id == event_id)
            .cloned()
            .collect())
    }
}
