use async_trait::async_trait;
use jiff::Timestamp;

use super::BackendError;
use crate::domain::{Job, JobId};

/// Reading jobs, and failing the ones that cannot be processed.
#[async_trait]
pub trait Jobs: Send + Sync {
    /// The job, or `None` if there is no such job.
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError>;

    /// Moves a PENDING job to FAILED with `reason` (recording its event); returns whether it did.
    /// A job that was already decided keeps its outcome: a late failure never overwrites a hold.
    async fn fail(&self, job_id: JobId, reason: &str, now: Timestamp)
    -> Result<bool, BackendError>;
}
