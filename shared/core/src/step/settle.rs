//! Settling a job inside the store's step (confirm, cancel, expiry, extension): the domain
//! plans it, the seats move under the condition that this job holds them, and seats given back
//! go to their section's line in the same step.

use jiff::Timestamp;

use super::StepStore;
use crate::domain::{HoldExtension, Job, JobAction, JobId, Settlement, Settling, Tender};
use crate::ports::{BackendError, Settled};

/// Settles one job as the domain decides; returns the answer, and the jobs a line handed the
/// released seats to (or moved up past a cancelled place), for the long polls.
pub fn settle_one(
    store: &mut impl StepStore,
    job_id: JobId,
    action: JobAction,
    tender: &Tender,
    now: Timestamp,
) -> Result<(Settled, Vec<Job>), BackendError> {
    let job = store.job(job_id)?;
    let extension = match (&job, action) {
        (Some(job), JobAction::Extend) => store
            .terms(&job.event_id)?
            .map_or(HoldExtension::NONE, |terms| terms.extension),
        _ => HoldExtension::NONE,
    };
    let (
        job,
        Settling {
            transition,
            seats: settlement,
        },
    ) = match Settled::plan(job, action, tender, extension, now) {
        Ok(plan) => plan,
        Err(answer) => return Ok((answer, Vec::new())),
    };
    // Each seat write is conditioned on this job's hold: a seat re-claimed by another job after
    // this hold lapsed stays theirs.
    let moved = store.settle_seats(&job, settlement)?;
    if settlement != Settlement::Release && moved != job.seat_ids.len() {
        // Only possible if a seat was taken over after its hold lapsed, which the domain already
        // refuses; the check keeps a confirm or extension from touching part of a hold regardless
        // (the step fails, so nothing of it is written).
        return Err(BackendError::permanent(format!(
            "job {job_id} holds {moved} of its {} seats",
            job.seat_ids.len()
        )));
    }
    store.save_transition(&transition)?;
    let served = match settlement {
        Settlement::Release => super::serve_after(store, &transition.job, now)?,
        Settlement::Sell | Settlement::Extend { .. } => Vec::new(),
    };
    Ok((Settled::Done(Box::new(transition.job)), served))
}
