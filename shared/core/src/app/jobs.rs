//! Reading a job for a view (the API's status answers, `seatclaimctl`): the stored record as the
//! domain says it stands now (`Job::as_of`), so a lapsed hold reads EXPIRED everywhere at the
//! same instant, before the sweeper has released its seats; and a PENDING job's place in line.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::domain::{DecisionRate, EventId, Job, JobId, JobStatus, QueuePosition};
use crate::ports::{Backend, BackendError};

/// The most events whose decision rates one process follows.
const MOST_RATES: usize = 256;

/// Each event's decision rate as this process has seen it, learnt from the decided counts its
/// queue positions read.
#[derive(Debug, Default)]
pub struct LineRates {
    rates: Mutex<HashMap<EventId, DecisionRate>>,
}

/// Where a PENDING `job` stands in its event's line, and when it may be decided; `None` for a
/// job that is not PENDING.
pub async fn queue_position(
    backend: &Backend,
    rates: &LineRates,
    job: &Job,
) -> Result<Option<QueuePosition>, BackendError> {
    if job.status != JobStatus::Pending {
        return Ok(None);
    }
    let line = backend.jobs.line(job).await?;
    if let Some(opens_at) = line.opens_at {
        return Ok(Some(QueuePosition::Opening { opens_at }));
    }
    let now = backend.clock.now();
    let mut rates = rates.rates.lock().unwrap_or_else(PoisonError::into_inner);
    if rates.len() >= MOST_RATES && !rates.contains_key(&job.event_id) {
        rates.clear();
    }
    let rate = rates.entry(job.event_id.clone()).or_default();
    rate.record(now, line.decided);
    Ok(Some(rate.position(line.ahead, now)))
}

/// The job as it stands now, or `None` if there is no such job.
pub async fn job(backend: &Backend, job_id: JobId) -> Result<Option<Job>, BackendError> {
    let job = backend.jobs.job(job_id).await?;
    Ok(job.map(|job| job.as_of(backend.clock.now())))
}

/// The job once it has left PENDING, or after `max`, as it stands when answered: the long poll.
pub async fn wait_for_decision(
    backend: &Backend,
    job_id: JobId,
    max: Duration,
) -> Result<Option<Job>, BackendError> {
    let job = backend.jobs.wait_for_decision(job_id, max).await?;
    Ok(job.map(|job| job.as_of(backend.clock.now())))
}
