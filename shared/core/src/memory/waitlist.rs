//! The waitlist in memory, as SQLite keeps it: a section's line is its WAITLISTED jobs in line
//! order (the domain's `line_place`: admission order, or drawn order for a sale's pre-queue); the
//! core's step serves it under the lock of whatever freed its seats.

use jiff::Timestamp;

use super::state::State;
use crate::domain::{
    BuyerId, EventId, Job, JobId, JobStatus, Reason, Section, Waitlist, line_place,
};
use crate::ports::BackendError;

/// The WAITLISTED jobs of `section` of `event_id`, in line order.
pub(super) fn line(state: &State, event_id: &EventId, section: &Section) -> Vec<Job> {
    line_after(state, event_id, section, None)
}

/// The part of [`line`] behind the job `after` (which may have left the line since).
pub(super) fn line_after(
    state: &State,
    event_id: &EventId,
    section: &Section,
    after: Option<JobId>,
) -> Vec<Job> {
    let behind = after
        .and_then(|job_id| state.job(job_id))
        .map(|job| place(state, job));
    let mut placed: Vec<(String, Job)> = state
        .jobs()
        .filter(|job| job.status == JobStatus::Waitlisted && &job.event_id == event_id)
        .filter(|job| job.request.section() == Some(section))
        .map(|job| (place(state, job), job.clone()))
        .filter(|(place, _)| behind.as_ref().is_none_or(|behind| place > behind))
        .collect();
    placed.sort_by(|a, b| a.0.cmp(&b.0));
    placed.into_iter().map(|(_, job)| job).collect()
}

/// `job`'s place in its line.
fn place(state: &State, job: &Job) -> String {
    line_place(job, state.drawn_place(job.job_id))
}

/// A WAITLISTED job's place in its line, from 1; `None` for any other job.
pub(super) fn position(state: &State, job: &Job) -> Option<u64> {
    let section = job
        .request
        .section()
        .filter(|_| job.status == JobStatus::Waitlisted)?;
    let ahead = line(state, &job.event_id, section)
        .iter()
        .take_while(|other| other.job_id != job.job_id)
        .count();
    Some(u64::try_from(ahead).unwrap_or(u64::MAX) + 1)
}

/// The seats `buyer` counts against the event's limit at `now`: SOLD, live HELD, and the
/// quantities of WAITLISTED jobs.
pub(super) fn counted(state: &State, event_id: &EventId, buyer: &BuyerId, now: Timestamp) -> u32 {
    let seats: usize = state
        .jobs()
        .filter(|job| &job.event_id == event_id && &job.buyer_id == buyer)
        .map(|job| job.counted_seats(now))
        .sum();
    u32::try_from(seats).unwrap_or(u32::MAX)
}

/// Closes the event's waitlist, rejecting every WAITLISTED job; `None`: no such event.
pub(super) fn close(
    state: &mut State,
    event_id: &EventId,
    now: Timestamp,
) -> Result<Option<usize>, BackendError> {
    let Some(event) = state.events.get_mut(event_id) else {
        return Ok(None);
    };
    if event.waitlist.is_open() {
        event.waitlist = Waitlist::Closed;
    }
    let waiting: Vec<Job> = state
        .jobs()
        .filter(|job| &job.event_id == event_id && job.status == JobStatus::Waitlisted)
        .cloned()
        .collect();
    for job in &waiting {
        if let Ok(transition) = job.reject_waiting(&Reason::waitlist_closed(), now) {
            state.save_transition(&transition)?;
        }
    }
    Ok(Some(waiting.len()))
}
