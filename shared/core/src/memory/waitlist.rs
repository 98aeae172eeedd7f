//! The waitlist in memory, as SQLite keeps it: a section's line is its WAITLISTED jobs in id
//! (admission) order, served under the lock of whatever freed its seats.

use std::collections::{BTreeSet, HashMap};

use jiff::Timestamp;

use super::inventory::{claimable_in, hold_seats};
use super::state::{State, StoredEvent};
use crate::domain::{
    BuyerId, EventId, Job, JobStatus, REASON_WAITLIST_CLOSED, Section, Waitlist, hand_out,
};
use crate::ports::BackendError;

/// The WAITLISTED jobs of `section` of `event_id`, in admission order.
fn line(state: &State, event_id: &EventId, section: &Section) -> Vec<Job> {
    state
        .jobs()
        .filter(|job| job.status == JobStatus::Waitlisted && &job.event_id == event_id)
        .filter(|job| job.request.section() == Some(section))
        .cloned()
        .collect()
}

/// The sections among `sections` that have a line, where the event's waitlist is open.
pub(super) fn lines_of<'a>(
    state: &State,
    event: &StoredEvent,
    event_id: &EventId,
    sections: impl Iterator<Item = &'a Section>,
) -> BTreeSet<Section> {
    if !event.waitlist.is_open() {
        return BTreeSet::new();
    }
    sections
        .filter(|section| !line(state, event_id, section).is_empty())
        .cloned()
        .collect()
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

/// The seats `buyer` counts against the event's limit at `now`: SOLD and live HELD.
pub(super) fn counted(state: &State, event_id: &EventId, buyer: &BuyerId, now: Timestamp) -> u32 {
    let seats: usize = state
        .jobs()
        .filter(|job| &job.event_id == event_id && &job.buyer_id == buyer)
        .filter(|job| match job.status {
            JobStatus::Sold => true,
            JobStatus::Held => job.hold_expires_at.is_some_and(|until| until > now),
            _ => false,
        })
        .map(|job| job.seat_ids.len())
        .sum();
    u32::try_from(seats).unwrap_or(u32::MAX)
}

/// Serves the lines `settled` may have moved (its released seats' sections, or its own line)
/// with their claimable seats; returns the jobs that left a line.
pub(super) fn serve_after(
    state: &mut State,
    settled: &Job,
    now: Timestamp,
) -> Result<Vec<Job>, BackendError> {
    let event_id = &settled.event_id;
    let event = state.event(event_id)?;
    if !event.waitlist.is_open() {
        return Ok(Vec::new());
    }
    let terms = event.terms();
    let mut sections: BTreeSet<Section> = settled.request.section().cloned().into_iter().collect();
    sections.extend(settled.seat_ids.iter().filter_map(|id| {
        event
            .position
            .get(id)
            .map(|at| event.seats[*at].section.clone())
    }));
    let mut served = Vec::new();
    for section in &sections {
        let waiting = line(state, event_id, section);
        let free = claimable_in(state.event(event_id)?, section, now, usize::MAX);
        let counts: HashMap<BuyerId, u32> = waiting
            .iter()
            .map(|job| {
                (
                    job.buyer_id.clone(),
                    counted(state, event_id, &job.buyer_id, now),
                )
            })
            .collect();
        for step in hand_out(&waiting, &free, &terms, now, |buyer| counts[buyer]) {
            let job = &step.transition.job;
            let until = job.hold_expires_at.unwrap_or(now);
            if !step.seats.is_empty() && !hold_seats(state, job, &step.seats, now, until) {
                return Err(BackendError::permanent(
                    "the line's seats changed under the lock",
                ));
            }
            state.save_transition(&step.transition)?;
            served.push(step.transition.job);
        }
    }
    Ok(served)
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
        if let Ok(transition) = job.reject_waiting(REASON_WAITLIST_CLOSED, now) {
            state.save_transition(&transition)?;
        }
    }
    Ok(Some(waiting.len()))
}
