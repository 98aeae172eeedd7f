//! The audit: the invariants checked from the outside, over an event's seats and jobs as stored,
//! or over a log of the reservation events published (no seat sold to two jobs, which a restore
//! of an older backup could bring about). Operators run it after a sale (`seatclaimctl audit`);
//! the fault tests run it after every fault.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use super::{EventId, Job, JobId, JobStatus, ReservationEvent, Seat, SeatId, SeatState};

/// How long is too long.
#[derive(Debug, Clone, Copy)]
pub struct AuditLimits {
    /// A job PENDING longer than this has been lost or stuck.
    pub max_pending: SignedDuration,
    /// An event recorded longer ago than this and still unpublished means the relay is stuck.
    pub max_outbox_lag: SignedDuration,
    /// When the event's sale opens, if it announced a start: a job pending before then waits for
    /// the opening, and counts as pending only from it.
    pub opens_at: Option<Timestamp>,
}

/// One broken invariant, in words an operator can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// Two jobs both claim to own a seat.
    SeatClaimedTwice {
        /// The seat.
        seat: SeatId,
        /// The jobs.
        jobs: (JobId, JobId),
    },
    /// A HELD (in time) or SOLD job does not own one of its seats in the inventory.
    JobLacksSeat {
        /// The job.
        job: JobId,
        /// The seat it should own.
        seat: SeatId,
    },
    /// A seat is HELD or SOLD for a job that is not HELD or SOLD.
    SeatWithoutLiveJob {
        /// The seat.
        seat: SeatId,
        /// The job it names.
        job: JobId,
        /// That job's status, if it exists at all.
        status: Option<JobStatus>,
    },
    /// A job has been PENDING too long.
    PendingTooLong {
        /// The job.
        job: JobId,
        /// For how long.
        pending_for: SignedDuration,
    },
    /// Recorded events have waited too long for publication.
    OutboxLag {
        /// The oldest unpublished event's age.
        oldest: SignedDuration,
    },
    /// The published events sold a seat to two jobs.
    SeatSoldTwice {
        /// The event the seat belongs to.
        event: EventId,
        /// The seat.
        seat: SeatId,
        /// The job it was sold to first, and the other.
        jobs: (JobId, JobId),
    },
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SeatClaimedTwice { seat, jobs } => write!(
                f,
                "seat {seat} is claimed by jobs {} and {}",
                jobs.0, jobs.1
            ),
            Self::JobLacksSeat { job, seat } => write!(f, "job {job} does not own its seat {seat}"),
            Self::SeatWithoutLiveJob { seat, job, status } => match status {
                Some(status) => write!(
                    f,
                    "seat {seat} is taken for job {job}, which is {}",
                    status.as_str()
                ),
                None => write!(
                    f,
                    "seat {seat} is taken for job {job}, which does not exist"
                ),
            },
            Self::PendingTooLong { job, pending_for } => {
                write!(f, "job {job} has been PENDING for {pending_for:#}")
            }
            Self::OutboxLag { oldest } => {
                write!(f, "the oldest unpublished event is {oldest:#} old")
            }
            Self::SeatSoldTwice { event, seat, jobs } => write!(
                f,
                "seat {seat} of event {event} was sold to job {} and again to job {}",
                jobs.0, jobs.1
            ),
        }
    }
}

/// Checks the invariants at `now`: no seat owned by two live jobs, every live job owns exactly its
/// seats, no seat taken for a job that is not live, nothing PENDING too long, no stuck outbox.
/// A HELD job past its deadline is not live: its seats may already belong to a new claim.
#[must_use]
pub fn audit(
    seats: &[Seat],
    jobs: &[Job],
    oldest_unpublished: Option<Timestamp>,
    now: Timestamp,
    limits: AuditLimits,
) -> Vec<Violation> {
    let mut violations = Vec::new();
    let owners = check_owners(jobs, now, &mut violations);
    check_owned_seats(seats, &owners, &mut violations);
    check_seat_jobs(seats, jobs, now, &mut violations);
    for job in jobs.iter().filter(|job| job.status == JobStatus::Pending) {
        let since = limits
            .opens_at
            .map_or(job.accepted_at, |opens| opens.max(job.accepted_at));
        let pending_for = now.duration_since(since);
        if pending_for > limits.max_pending {
            violations.push(Violation::PendingTooLong {
                job: job.job_id,
                pending_for,
            });
        }
    }
    if let Some(oldest) = oldest_unpublished
        .map(|at| now.duration_since(at))
        .filter(|lag| *lag > limits.max_outbox_lag)
    {
        violations.push(Violation::OutboxLag { oldest });
    }
    violations
}

/// The seats `events` (published reservation events, in any order) sell to two jobs: SOLD is
/// final, so a second job's `Sold` event for a seat means it was sold twice.
#[must_use]
pub fn sold_twice<'a>(events: impl IntoIterator<Item = &'a ReservationEvent>) -> Vec<Violation> {
    let mut buyers: HashMap<(&EventId, &SeatId), JobId> = HashMap::new();
    let mut violations = Vec::new();
    for event in events {
        if event.status != JobStatus::Sold {
            continue;
        }
        for seat in &event.seat_ids {
            let first = *buyers
                .entry((&event.event_id, seat))
                .or_insert(event.job_id);
            if first != event.job_id {
                violations.push(Violation::SeatSoldTwice {
                    event: event.event_id.clone(),
                    seat: seat.clone(),
                    jobs: (first, event.job_id),
                });
            }
        }
    }
    violations
}

/// A live job: SOLD, or HELD before its deadline.
fn is_live(job: &Job, now: Timestamp) -> bool {
    match job.status {
        JobStatus::Sold => true,
        JobStatus::Held => job.hold_expires_at.is_some_and(|until| until > now),
        _ => false,
    }
}

/// Which live job owns each seat; a seat two live jobs claim is a violation.
fn check_owners<'a>(
    jobs: &'a [Job],
    now: Timestamp,
    violations: &mut Vec<Violation>,
) -> HashMap<&'a SeatId, JobId> {
    let mut owners: HashMap<&SeatId, JobId> = HashMap::new();
    for job in jobs.iter().filter(|job| is_live(job, now)) {
        for seat in &job.seat_ids {
            if let Some(other) = owners.insert(seat, job.job_id) {
                violations.push(Violation::SeatClaimedTwice {
                    seat: seat.clone(),
                    jobs: (other, job.job_id),
                });
            }
        }
    }
    owners
}

/// Every live job's seats name it in the inventory.
fn check_owned_seats(
    seats: &[Seat],
    owners: &HashMap<&SeatId, JobId>,
    violations: &mut Vec<Violation>,
) {
    let state_of: HashMap<&SeatId, SeatState> = seats
        .iter()
        .map(|seat| (&seat.seat_id, seat.state))
        .collect();
    for (seat, job) in owners {
        let owned = match state_of.get(seat) {
            Some(SeatState::Held { job_id, .. } | SeatState::Sold { job_id }) => job_id == job,
            _ => false,
        };
        if !owned {
            violations.push(Violation::JobLacksSeat {
                job: *job,
                seat: (*seat).clone(),
            });
        }
    }
}

/// Every taken seat names a job in the matching status (or a lapsed hold not yet swept).
fn check_seat_jobs(seats: &[Seat], jobs: &[Job], now: Timestamp, violations: &mut Vec<Violation>) {
    let by_id: HashMap<JobId, &Job> = jobs.iter().map(|job| (job.job_id, job)).collect();
    for seat in seats {
        let (SeatState::Held { job_id, .. } | SeatState::Sold { job_id }) = seat.state else {
            continue;
        };
        let job = by_id.get(&job_id);
        let fits = match (seat.state, job.map(|j| j.status)) {
            (SeatState::Held { .. }, Some(JobStatus::Held))
            | (SeatState::Sold { .. }, Some(JobStatus::Sold)) => true,
            // A lapsed hold not yet swept: the seat still names the job, which is no longer live.
            (SeatState::Held { until, .. }, _) if until <= now => true,
            _ => false,
        };
        if !fits {
            violations.push(Violation::SeatWithoutLiveJob {
                seat: seat.seat_id.clone(),
                job: job_id,
                status: job.map(|j| j.status),
            });
        }
    }
}

#[cfg(test)]
mod tests;
