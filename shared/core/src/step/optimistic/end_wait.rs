//! The end of a wait without seats (a rejection for the buyer's limit, a closed waitlist), as
//! a plan of its own: the job's move, its place's deletion and its count given back.

use crate::domain::{JobId, Reason};
use crate::ports::BackendError;
use crate::step::{Commit, Committed, CountChange, Plan, Write};

/// REJECTS a WAITLISTED job for `reason`, leaving its place and, under a seat limit, giving its
/// quantity back to the buyer's count; `false` if it no longer waits (or moved meanwhile).
pub async fn end_wait(
    store: &impl Commit,
    job_id: JobId,
    reason: &Reason,
) -> Result<bool, BackendError> {
    let Some(job) = store.job(job_id).await? else {
        return Ok(false);
    };
    let now = store.now();
    let Ok(rejected) = job.reject_waiting(reason, now) else {
        return Ok(false);
    };
    let limited = (store.terms(&job.event_id).await?).is_some_and(|terms| terms.limit.is_some());
    let mut writes = vec![Write::Job(Box::new(rejected)), Write::Leave];
    if limited {
        writes.push(Write::Count(CountChange::Unwait));
    }
    if job.code().is_some() {
        writes.push(Write::CodeCount(CountChange::Unwait));
    }
    let plan = Plan::new(&job, now, writes);
    Ok(matches!(store.commit(&plan).await?, Committed::Written(_)))
}
