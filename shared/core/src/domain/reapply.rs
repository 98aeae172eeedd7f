//! Re-applying published reservation events to a store restored from a backup. Buyers were told
//! of every published transition, so a restore must not forget one: each job the log speaks of
//! after the backup's moment is brought to the state its events leave it in (the last one wins),
//! and its seats follow that state. The rules of what a state means for the seats, and of when
//! a seat may be taken, are the domain's, decided here once; the adapter reads and writes.

use jiff::Timestamp;
use serde::Serialize;

use super::{Job, JobId, JobStatus, ReservationEvent, SeatId, SeatRequest, SeatState};

/// A job brought to the state its published events leave it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reapplied {
    /// The job as it must be stored.
    pub job: Job,
    /// Whether the restored store lacked the job (its intent was accepted after the backup).
    pub created: bool,
    /// When the events first gave the job its seats: another job's hold on them that had
    /// lapsed by then was claimable, as it was for the claim itself.
    pub taken_at: Timestamp,
}

/// Why a job's published state is not re-applied; the operator reconciles it by hand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(tag = "why", rename_all = "snake_case")]
pub enum NotReapplied {
    /// The log leaves the job undecided (PENDING or WAITLISTED): its intent is in the restored
    /// queue, or its buyer retries it.
    #[error("the log leaves it {}: decided again from its intent, if the queue has it", .status.as_str())]
    Undecided {
        /// Its status in the log.
        status: JobStatus,
    },
    /// The job's event is not in the restored store (it was created after the backup).
    #[error("its event is not in the restored database")]
    NoSuchEvent,
    /// One of the job's seats is not in the restored store.
    #[error("seat {seat_id} does not exist in the restored database")]
    NoSuchSeat {
        /// The seat.
        seat_id: SeatId,
    },
    /// One of the job's seats belongs to another job in the restored store, and was not free to
    /// take when the events gave it to this job: one of the two was sold or held twice.
    #[error("seat {seat_id} is {} by job {holder} in the restored database", if *.sold { "SOLD" } else { "HELD" })]
    SeatTaken {
        /// The seat.
        seat_id: SeatId,
        /// The job that has it.
        holder: JobId,
        /// Whether that job bought it (else it holds it).
        sold: bool,
    },
}

/// Folds one job's published events (oldest first) onto the job as the restored store has it
/// (`None`: not there). `Ok(None)`: nothing to do, the store already has that state or has
/// the job ended (SOLD, REJECTED, EXPIRED, CANCELLED: no transition leaves those, so an event
/// of the same instant as the backup's last change is not newer than it).
pub fn reapply(
    stored: Option<&Job>,
    events: &[ReservationEvent],
) -> Result<Option<Reapplied>, NotReapplied> {
    let Some(first) = events.first() else {
        return Ok(None);
    };
    if stored.is_some_and(|job| ended(job.status)) {
        return Ok(None);
    }
    let mut job = stored.cloned().unwrap_or_else(|| recreated(first));
    let mut taken_at = None;
    for event in events {
        fold(&mut job, event);
        if matches!(event.status, JobStatus::Held | JobStatus::Sold) {
            taken_at.get_or_insert(event.occurred_at);
        }
    }
    if stored == Some(&job) {
        return Ok(None);
    }
    if job.status.awaits_decision() {
        return Err(NotReapplied::Undecided { status: job.status });
    }
    Ok(Some(Reapplied {
        created: stored.is_none(),
        taken_at: taken_at.unwrap_or(first.occurred_at),
        job,
    }))
}

/// A job the store lacks, from its first published event. The event carries no request and no
/// idempotency key: the request reads as the seats the job got, and it was accepted no later
/// than that event.
fn recreated(event: &ReservationEvent) -> Job {
    Job {
        access: None,
        job_id: event.job_id,
        event_id: event.event_id.clone(),
        buyer_id: event.buyer_id.clone(),
        request: SeatRequest::Seats(event.seat_ids.clone()),
        status: JobStatus::Pending,
        seat_ids: Vec::new(),
        hold_expires_at: None,
        reason: None,
        reason_code: None,
        amount_due: None,
        payment_ref: None,
        hold_extensions: 0,
        accepted_at: event.occurred_at,
        first_error: None,
        last_error: None,
    }
}

/// Whether no transition leaves `status` (FAILED does: a replay reopens it).
fn ended(status: JobStatus) -> bool {
    matches!(
        status,
        JobStatus::Sold | JobStatus::Rejected | JobStatus::Expired | JobStatus::Cancelled
    )
}

/// The job after the transition `event` records (what `Transition`'s moves did to it).
fn fold(job: &mut Job, event: &ReservationEvent) {
    job.status = event.status;
    job.seat_ids.clone_from(&event.seat_ids);
    job.reason.clone_from(&event.reason);
    job.reason_code = event.reason_code;
    match event.status {
        JobStatus::Held => {
            job.hold_expires_at = event.hold_expires_at;
            job.amount_due = event.amount_due;
            job.hold_extensions = event.hold_extensions.unwrap_or(0);
        }
        JobStatus::Sold => job.payment_ref.clone_from(&event.payment_ref),
        _ => {}
    }
}

impl Reapplied {
    /// What `seat` (of this job, in `state` in the restored store) must become: `Ok(Some(..))`
    /// the state to write, `Ok(None)` nothing to write. A HELD job holds its seats until its
    /// own deadline (one without a deadline has lapsed, and reads EXPIRED: it holds none), a
    /// SOLD job owns them; an ended job gives back the seats it still holds, and no other.
    pub fn seat_after(
        &self,
        seat_id: &SeatId,
        state: &SeatState,
    ) -> Result<Option<SeatState>, NotReapplied> {
        let job_id = self.job.job_id;
        let wanted = match (self.job.status, self.job.hold_expires_at) {
            (JobStatus::Held, Some(until)) => SeatState::Held { job_id, until },
            (JobStatus::Sold, _) => SeatState::Sold { job_id },
            _ => {
                let held_here =
                    matches!(state, SeatState::Held { job_id: holder, .. } if *holder == job_id);
                return Ok(held_here.then_some(SeatState::Available));
            }
        };
        match *state {
            same if same == wanted => Ok(None),
            SeatState::Held { job_id: holder, .. } | SeatState::Sold { job_id: holder }
                if holder != job_id && !state.is_claimable(self.taken_at) =>
            {
                Err(NotReapplied::SeatTaken {
                    seat_id: seat_id.clone(),
                    holder,
                    sold: matches!(state, SeatState::Sold { .. }),
                })
            }
            _ => Ok(Some(wanted)),
        }
    }
}

#[cfg(test)]
mod tests;
