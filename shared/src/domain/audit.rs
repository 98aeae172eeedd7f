//! The audit: the invariants checked from the outside, over an event's seats and jobs as stored.
//! Operators run it after a sale (`seatclaimctl audit`); the fault tests run it after every fault.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use super::{Job, JobId, JobStatus, Seat, SeatId, SeatState};

/// How long is too long.
#[derive(Debug, Clone, Copy)]
pub struct AuditLimits {
    /// A job PENDING longer than this has been lost or stuck.
    pub max_pending: SignedDuration,
    /// An event recorded longer ago than this and still unpublished means the relay is stuck.
    pub max_outbox_lag: SignedDuration,
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
    let by_id: HashMap<JobId, &Job> = jobs.iter().map(|job| (job.job_id, job)).collect();
    let live = |job: &Job| match job.status {
        JobStatus::Sold => true,
        JobStatus::Held => job.hold_expires_at.is_some_and(|until| until > now),
        _ => false,
    };
    let mut owners: HashMap<&SeatId, JobId> = HashMap::new();
    for job in jobs.iter().filter(|job| live(job)) {
        for seat in &job.seat_ids {
            if let Some(other) = owners.insert(seat, job.job_id) {
                violations.push(Violation::SeatClaimedTwice {
                    seat: seat.clone(),
                    jobs: (other, job.job_id),
                });
            }
        }
    }
    let state_of: HashMap<&SeatId, SeatState> = seats
        .iter()
        .map(|seat| (&seat.seat_id, seat.state))
        .collect();
    for (seat, job) in &owners {
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
    for job in jobs.iter().filter(|job| job.status == JobStatus::Pending) {
        let pending_for = now.duration_since(job.accepted_at);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{BuyerId, EventId, SeatRequest, Section};

    const LIMITS: AuditLimits = AuditLimits {
        max_pending: SignedDuration::from_secs(60),
        max_outbox_lag: SignedDuration::from_secs(60),
    };

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).unwrap()
    }

    fn seat(id: &str, state: SeatState) -> Seat {
        Seat {
            seat_id: SeatId::parse(id).unwrap(),
            section: Section::parse("A").unwrap(),
            state,
        }
    }

    fn job(status: JobStatus, seats: &[&str], until: i64) -> Job {
        Job {
            job_id: JobId::new(),
            event_id: EventId::parse("e").unwrap(),
            buyer_id: BuyerId::parse("b").unwrap(),
            request: SeatRequest::in_section("A", 1).unwrap(),
            status,
            seat_ids: seats.iter().map(|s| SeatId::parse(s).unwrap()).collect(),
            hold_expires_at: Some(at(until)),
            reason: None,
            accepted_at: at(0),
            first_error: None,
            last_error: None,
        }
    }

    #[test]
    fn a_consistent_sale_passes() {
        let held = job(JobStatus::Held, &["a"], 100);
        let sold = job(JobStatus::Sold, &["b"], 100);
        let seats = [
            seat(
                "a",
                SeatState::Held {
                    job_id: held.job_id,
                    until: at(100),
                },
            ),
            seat(
                "b",
                SeatState::Sold {
                    job_id: sold.job_id,
                },
            ),
            seat("c", SeatState::Available),
        ];
        let rejected = job(JobStatus::Rejected, &[], 0);
        assert_eq!(
            audit(&seats, &[held, sold, rejected], None, at(50), LIMITS),
            []
        );
    }

    #[test]
    fn two_live_jobs_on_one_seat_are_reported() {
        let first = job(JobStatus::Held, &["a"], 100);
        let second = job(JobStatus::Sold, &["a"], 100);
        let seats = [seat(
            "a",
            SeatState::Sold {
                job_id: second.job_id,
            },
        )];
        let found = audit(
            &seats,
            &[first.clone(), second.clone()],
            None,
            at(50),
            LIMITS,
        );
        assert!(
            found.contains(&Violation::SeatClaimedTwice {
                seat: SeatId::parse("a").unwrap(),
                jobs: (first.job_id, second.job_id)
            }),
            "{found:?}"
        );
    }

    #[test]
    fn a_seat_held_for_a_rejected_job_and_a_sold_job_without_its_seat_are_reported() {
        let rejected = job(JobStatus::Rejected, &[], 0);
        let sold = job(JobStatus::Sold, &["b"], 100);
        let seats = [
            seat(
                "a",
                SeatState::Held {
                    job_id: rejected.job_id,
                    until: at(100),
                },
            ),
            seat("b", SeatState::Available),
        ];
        let found = audit(&seats, &[rejected, sold], None, at(50), LIMITS);
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn a_lapsed_hold_taken_over_by_a_new_claim_is_fine() {
        let lapsed = job(JobStatus::Held, &["a"], 10);
        let taker = job(JobStatus::Held, &["a"], 100);
        let seats = [seat(
            "a",
            SeatState::Held {
                job_id: taker.job_id,
                until: at(100),
            },
        )];
        assert_eq!(audit(&seats, &[lapsed, taker], None, at(50), LIMITS), []);
    }

    #[test]
    fn long_pending_jobs_and_a_stuck_outbox_are_reported() {
        let pending = job(JobStatus::Pending, &[], 0);
        let found = audit(&[], &[pending], Some(at(0)), at(61), LIMITS);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(audit(&[], &[], Some(at(0)), at(60), LIMITS), []);
    }
}
