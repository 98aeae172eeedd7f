//! The claim and its siblings on the memory tables: each decision is read, decided by the domain
//! and written back under the condition that the seats are still as decided, all under the one
//! lock; a batch is one transaction ([`State::atomically`]), as on SQLite.

use async_trait::async_trait;
use jiff::Timestamp;

use super::MemoryStore;
use super::state::{State, StoredEvent};
use super::waitlist;
use crate::domain::{
    ClaimDecision, EventId, HoldExtension, Intent, Job, JobAction, JobId, JobStatus, Payment,
    REASON_UNAVAILABLE, Seat, SeatId, SeatRequest, SeatState, Section, Settlement, Settling,
    best_first,
};
use crate::ports::{BackendError, ClaimOutcome, Claims, Inventory, Settled};

#[async_trait]
impl Inventory for MemoryStore {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let outcomes = self.lock().atomically(|state| {
            intents
                .iter()
                .map(|intent| claim_one(state, intent, now))
                .collect()
        })?;
        // Every event is in the outbox with its transition: nothing is left to the caller.
        Ok(Claims {
            outcomes,
            unrecorded: Vec::new(),
        })
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        payment: Option<&Payment>,
    ) -> Result<Settled, BackendError> {
        // The clock is read under the lock, as SQLite's adapter reads it in its transaction.
        self.lock()
            .atomically(|state| settle_one(state, job_id, action, payment, self.clock.now()))
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        self.lock()
            .atomically(|state| waitlist::close(state, event_id, self.clock.now()))
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        self.lock().atomically(|state| {
            let mut lapsed: Vec<(Timestamp, JobId)> = state
                .jobs()
                .filter(|job| job.status == JobStatus::Held)
                .filter_map(|job| job.hold_expires_at.map(|until| (until, job.job_id)))
                .filter(|(until, _)| *until <= now)
                .collect();
            lapsed.sort_unstable();
            let mut released = 0;
            for (_, job_id) in lapsed.into_iter().take(limit) {
                if let Settled::Done(_) = settle_one(state, job_id, JobAction::Expire, None, now)? {
                    released += 1;
                }
            }
            Ok(released)
        })
    }
}

/// Decides one intent: a decided job changes nothing, else the buyer's limit and the seats decide.
fn claim_one(
    state: &mut State,
    intent: &Intent,
    now: Timestamp,
) -> Result<ClaimOutcome, BackendError> {
    let Some(job) = state.job(intent.job_id).cloned() else {
        return Err(BackendError::permanent(format!(
            "intent for unknown job {}",
            intent.job_id
        )));
    };
    if job.status != JobStatus::Pending {
        return Ok(ClaimOutcome::AlreadyDecided(job.status));
    }
    let event = state.event(&intent.event_id)?;
    let decided = match over_limit(state, event, intent, now) {
        Some(reason) => job.reject(&reason, now),
        None => {
            let candidates = candidate_seats(event, &intent.request, now);
            let sections = (intent.request.section().into_iter())
                .chain(candidates.iter().map(|seat| &seat.section));
            let lined = waitlist::lines_of(state, event, &intent.event_id, sections);
            let has_line = |section: &Section| lined.contains(section);
            match event
                .terms()
                .decide(&intent.request, &candidates, now, has_line)
            {
                ClaimDecision::Hold {
                    seat_ids,
                    until,
                    amount_due,
                } if hold_seats(state, &job, &seat_ids, now, until) => {
                    job.hold(seat_ids, until, amount_due, now)
                }
                // A seat changed since it was read: the condition refused it, so the claim is lost.
                ClaimDecision::Hold { .. } => job.reject(REASON_UNAVAILABLE, now),
                ClaimDecision::Reject { reason } => job.reject(&reason, now),
                ClaimDecision::Waitlist => job.join_waitlist(now),
            }
        }
    };
    let Ok(transition) = decided else {
        return Ok(ClaimOutcome::AlreadyDecided(job.status));
    };
    state.save_transition(&transition)?;
    Ok(ClaimOutcome::of(&transition))
}

/// The rejection's reason if the buyer's SOLD seats and live HELD seats in the event leave no
/// room for this claim; counted under the claim's lock, so no other claim can pass in between.
fn over_limit(
    state: &State,
    event: &StoredEvent,
    intent: &Intent,
    now: Timestamp,
) -> Option<String> {
    let limit = event.limit?;
    let counted = waitlist::counted(state, &intent.event_id, &intent.buyer_id, now);
    (!limit.admits(counted, intent.request.quantity())).then(|| limit.reason())
}

/// The seats the decision needs: the requested ones that exist; for a section, its free seats
/// and then its lapsed holds, the best first, enough of each to satisfy the request (every one
/// for a block).
fn candidate_seats(event: &StoredEvent, request: &SeatRequest, now: Timestamp) -> Vec<Seat> {
    match request {
        SeatRequest::Seats(wanted) => wanted
            .iter()
            .filter_map(|id| event.position.get(id).map(|at| event.seats[*at].clone()))
            .collect(),
        SeatRequest::Section {
            section,
            quantity,
            together,
        } => {
            let most = if *together {
                usize::MAX
            } else {
                usize::from(*quantity)
            };
            claimable_in(event, section, now, most)
        }
    }
}

/// Claimable seats of `section` in the event's order of preference, free ones first and then
/// lapsed holds, at most `most` of each.
pub(super) fn claimable_in(
    event: &StoredEvent,
    section: &Section,
    now: Timestamp,
    most: usize,
) -> Vec<Seat> {
    let seats = best_first(event.seats.iter().filter(|seat| &seat.section == section));
    let in_section = || seats.iter().copied();
    let free = in_section().filter(|seat| seat.state == SeatState::Available);
    let lapsed = in_section()
        .filter(|seat| matches!(seat.state, SeatState::Held { until, .. } if until <= now));
    free.take(most).chain(lapsed.take(most)).cloned().collect()
}

/// The conditional write: every seat moves to HELD only if each is still claimable at `now`;
/// if any is not, none moves (all or none).
pub(super) fn hold_seats(
    state: &mut State,
    job: &Job,
    seat_ids: &[SeatId],
    now: Timestamp,
    until: Timestamp,
) -> bool {
    let Some(event) = state.events.get(&job.event_id) else {
        return false;
    };
    let positions: Option<Vec<usize>> = seat_ids
        .iter()
        .map(|id| {
            event
                .position
                .get(id)
                .copied()
                .filter(|at| event.seats[*at].state.is_claimable(now))
        })
        .collect();
    let Some(positions) = positions else {
        return false;
    };
    let held = SeatState::Held {
        job_id: job.job_id,
        until,
    };
    for at in positions {
        state.put_seat(&job.event_id, at, held);
    }
    true
}

/// Confirms, cancels, expires or extends a job as the domain decides, each seat write conditioned on the
/// seat still being held by this job: a seat re-claimed after this hold lapsed stays its new
/// holder's.
fn settle_one(
    state: &mut State,
    job_id: JobId,
    action: JobAction,
    payment: Option<&Payment>,
    now: Timestamp,
) -> Result<Settled, BackendError> {
    let job = state.job(job_id).cloned();
    let extension = match (&job, action) {
        (Some(job), JobAction::Extend) => state.event(&job.event_id)?.extension,
        _ => HoldExtension::NONE,
    };
    let (job, Settling { transition, seats }) =
        match Settled::plan(job, action, payment, extension, now) {
            Ok(plan) => plan,
            Err(answer) => return Ok(answer),
        };
    let held_by_job: Vec<usize> = state.event(&job.event_id).map(|event| {
        job.seat_ids
            .iter()
            .filter_map(|id| event.position.get(id).copied())
            .filter(|at| matches!(event.seats[*at].state, SeatState::Held { job_id: holder, .. } if holder == job_id))
            .collect()
    })?;
    if seats != Settlement::Release && held_by_job.len() != job.seat_ids.len() {
        // Only possible if a seat was taken over after its hold lapsed, which `settle` already
        // refuses; the check keeps a confirm from selling part of a hold regardless.
        return Err(BackendError::permanent(format!(
            "job {job_id} holds {} of its {} seats",
            held_by_job.len(),
            job.seat_ids.len()
        )));
    }
    let to = match seats {
        Settlement::Sell => SeatState::Sold { job_id },
        Settlement::Release => SeatState::Available,
        Settlement::Extend { until, .. } => SeatState::Held { job_id, until },
    };
    for at in held_by_job {
        state.put_seat(&job.event_id, at, to);
    }
    state.save_transition(&transition)?;
    if seats == Settlement::Release {
        waitlist::serve_after(state, &transition.job, now)?;
    }
    Ok(Settled::Done(Box::new(transition.job)))
}
