//! The rules the observer (`invariants.rs`) holds each step to, each on its own: which moves
//! a job may make, what an event must say, the buyers' limits, the product's audit; and the
//! cheap fingerprint that tells the observer whether anything changed since the last step.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::domain::{
    AuditLimits, Job, JobStatus, ReservationEvent, SeatRequest, SeatState, audit,
};
use seatclaim_core::memory::{Lane, State};

/// A cheap fingerprint of what the checks read: the outbox's length, every job's status,
/// every seat's state and which queue holds each message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Look {
    events: usize,
    jobs: u64,
    seats: u64,
    queue: u64,
}

impl Look {
    pub(super) fn of(state: &State) -> Self {
        let mut jobs = Fnv::default();
        for job in state.jobs() {
            job.job_id.hash(&mut jobs);
            job.status.hash(&mut jobs);
        }
        let mut seats = Fnv::default();
        for (_, event_seats, _) in state.events() {
            for seat in event_seats {
                match seat.state {
                    SeatState::Available => 0_u8.hash(&mut seats),
                    SeatState::Held { job_id, until } => {
                        job_id.hash(&mut seats);
                        until.as_millisecond().hash(&mut seats);
                    }
                    SeatState::Sold { job_id } => (1_u8, job_id).hash(&mut seats),
                }
            }
        }
        let mut queue = Fnv::default();
        for (id, message) in state.queue().messages() {
            (id, message.lane == Lane::Main).hash(&mut queue);
        }
        Self {
            events: state.outbox().len(),
            jobs: jobs.finish(),
            seats: seats.finish(),
            queue: queue.finish(),
        }
    }
}

/// FNV-1a: a fingerprint, not a defence against anyone.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// How the memory queue's own move to the dead-letter queue explains itself.
pub(super) const QUEUE_REDRIVE: &str = "received ";

/// Whether a job in `from` may record `event`: a move the state machine allows, or the
/// extension of a hold (which records an event without a move).
pub(super) fn allowed(from: JobStatus, event: &ReservationEvent) -> bool {
    use JobStatus::{Cancelled, Expired, Failed, Held, Pending, Rejected, Sold, Waitlisted};
    matches!(
        (from, event.status),
        (Pending, Held | Rejected | Failed | Waitlisted)
            | (Waitlisted, Held | Rejected | Cancelled)
            | (Held, Sold | Cancelled | Expired)
            | (Failed, Pending)
    ) || (from == Held && event.status == Held && event.hold_extensions.is_some())
}

/// An event says what its move did, when it did: a hold has seats and a deadline; a sale was
/// decided before the deadline; an expiry reached the store (at `now`) no sooner than the
/// deadline, whatever "now" it was decided with; no event is dated after the store's clock.
/// A block's hold is adjacent seats of one row: `S-r-n` with one `r` and consecutive `n`.
pub(super) fn check_block(job: &Job, event: &ReservationEvent) -> Result<(), String> {
    let SeatRequest::Section { together: true, .. } = job.request else {
        return Ok(());
    };
    if event.status != JobStatus::Held || event.hold_extensions.is_some() {
        return Ok(());
    }
    let mut places: Vec<(String, u32)> = event
        .seat_ids
        .iter()
        .filter_map(|id| {
            let (row, number) = id.as_str().rsplit_once('-')?;
            Some((row.to_owned(), number.parse().ok()?))
        })
        .collect();
    places.sort();
    let block = places.len() == event.seat_ids.len()
        && places
            .windows(2)
            .all(|pair| pair[0].0 == pair[1].0 && pair[1].1 == pair[0].1 + 1);
    if block {
        Ok(())
    } else {
        Err(format!(
            "job {} asked for seats together and holds {:?}",
            job.job_id, event.seat_ids
        ))
    }
}

pub(super) fn check_event(
    job: &Job,
    history: &[ReservationEvent],
    event: &ReservationEvent,
    now: Timestamp,
) -> Result<(), String> {
    let deadline = history
        .iter()
        .rev()
        .find(|e| e.status == JobStatus::Held)
        .and_then(|e| e.hold_expires_at);
    let at = event.occurred_at;
    let wrong = match event.status {
        _ if at > now => Some(format!("is dated {at}, after the clock's {now}")),
        _ if event.event_id != job.event_id || event.buyer_id != job.buyer_id => {
            Some("names another event or buyer than its job".to_owned())
        }
        JobStatus::Held if event.seat_ids.is_empty() || event.hold_expires_at.is_none() => {
            Some("has no seats or no deadline".to_owned())
        }
        // An extension moves a live hold's deadline later, one extension at a time.
        JobStatus::Held if event.hold_extensions.is_some() => {
            let before = history
                .iter()
                .rev()
                .find_map(|e| e.hold_extensions)
                .unwrap_or(0);
            match deadline {
                Some(until)
                    if at < until
                        && event.hold_expires_at > Some(until)
                        && event.hold_extensions == Some(before + 1) =>
                {
                    None
                }
                _ => Some(format!(
                    "extended the hold at {at} to {:?} from {deadline:?}",
                    event.hold_expires_at
                )),
            }
        }
        JobStatus::Sold => match deadline {
            Some(until) if at < until => None,
            _ => Some(format!(
                "was decided at {at}, not before the hold's deadline {deadline:?}"
            )),
        },
        JobStatus::Expired => match deadline {
            Some(until) if now >= until => None,
            _ => Some(format!(
                "reached the store at {now}, before the hold's deadline {deadline:?}"
            )),
        },
        _ => None,
    };
    match wrong {
        Some(what) => Err(format!(
            "job {}'s {} event {what}",
            job.job_id,
            event.status.as_str()
        )),
        None => Ok(()),
    }
}

/// The deadline `event` missed, if it is a sale the store made at `now` (the step that wrote
/// it) once its hold had lapsed: a hold ends at its deadline, whatever time the decision read.
pub(super) fn late_sale(
    history: &[ReservationEvent],
    event: &ReservationEvent,
    now: Timestamp,
) -> Option<Timestamp> {
    let held = history.iter().rev().find(|e| e.status == JobStatus::Held);
    let until = held.and_then(|e| e.hold_expires_at)?;
    (event.status == JobStatus::Sold && until <= now).then_some(until)
}

/// No buyer counts more seats than the event's limit: those of their SOLD jobs, live holds and
/// places in line (a waiting job counts the seats it asks for).
pub(super) fn check_limits(state: &State, now: Timestamp) -> Result<(), String> {
    for (event_id, _, limit) in state.events() {
        let Some(limit) = limit else {
            continue;
        };
        let mut counted: BTreeMap<&str, usize> = BTreeMap::new();
        for job in state.jobs().filter(|j| &j.event_id == event_id) {
            let seats = match job.status {
                JobStatus::Sold => job.seat_ids.len(),
                JobStatus::Held if job.hold_expires_at.is_some_and(|until| until > now) => {
                    job.seat_ids.len()
                }
                JobStatus::Waitlisted => job.request.quantity(),
                _ => 0,
            };
            *counted.entry(job.buyer_id.as_str()).or_default() += seats;
        }
        let limit_seats = usize::try_from(limit.seats()).unwrap_or(usize::MAX);
        if let Some((buyer, seats)) = counted.iter().find(|(_, seats)| **seats > limit_seats) {
            return Err(format!(
                "{buyer} counts {seats} seats, over the limit of {limit}"
            ));
        }
    }
    Ok(())
}

/// The product's own audit (`domain::audit`) finds nothing, lax about time: during a storm jobs
/// may wait and events may lag.
pub(super) fn check_audit(state: &State, now: Timestamp) -> Result<(), String> {
    let lax = AuditLimits {
        max_pending: SignedDuration::from_hours(1_000),
        max_outbox_lag: SignedDuration::from_hours(1_000),
        opens_at: None,
    };
    let jobs: Vec<Job> = state.jobs().cloned().collect();
    for (_, seats, _) in state.events() {
        if let Some(violation) = audit(seats, &jobs, None, now, lax).first() {
            return Err(format!("the audit found: {violation}"));
        }
    }
    Ok(())
}

pub(super) fn names(statuses: &[JobStatus]) -> String {
    statuses
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(" -> ")
}
