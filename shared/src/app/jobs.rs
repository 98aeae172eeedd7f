//! Reading a job for a view (the API's status answers, `seatclaimctl`): the stored record as the
//! domain says it stands now (`Job::as_of`), so a lapsed hold reads EXPIRED everywhere at the
//! same instant, before the sweeper has released its seats.

use std::time::Duration;

use crate::domain::{Job, JobId};
use crate::ports::{Backend, BackendError};

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
