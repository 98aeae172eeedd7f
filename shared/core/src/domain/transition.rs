//! Every change of a job's status, decided in one place. Each function takes the job as stored
//! and returns a [`Transition`]: the job as it must be stored next, the reservation event that
//! records the change, and the status the stored job must still have for the change to apply.
//! Adapters persist a transition under that condition, with its event, in one atomic step; they
//! never set a status themselves.

use jiff::Timestamp;

use super::{
    HoldExtension, Job, JobAction, JobConflict, JobStatus, Money, Reason, ReservationEvent, SeatId,
    Settlement, Tender,
};

/// A decided change of one job, ready to persist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The status the stored job must still have; if it has moved on, the change is void.
    pub from: JobStatus,
    /// The job after the change.
    pub job: Job,
    /// The event that records the change, written with it (the outbox).
    pub event: ReservationEvent,
}

/// A settlement of a held job: the job's transition and what it does to the job's seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settling {
    /// The job's move from HELD.
    pub transition: Transition,
    /// Sell the seats, or give them back.
    pub seats: Settlement,
}

/// Why a PENDING job is closed without a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closure {
    /// Processing failed for good (an undecodable intent, attempts exhausted): FAILED.
    Failed {
        /// Why, for the buyer and operators.
        reason: String,
    },
    /// The intent waited longer than the maximum age: REJECTED, "request expired".
    RequestExpired,
}

impl Job {
    /// The job after `change`, and the event recording it at `now`.
    fn moved(&self, now: Timestamp, change: impl FnOnce(&mut Job)) -> Transition {
        let mut job = self.clone();
        change(&mut job);
        let event = ReservationEvent::of(&job, now);
        Transition {
            from: self.status,
            job,
            event,
        }
    }

    /// The job moved by `change` if it is still in `from`; any other status is returned as the
    /// error, so the caller can report it unchanged (a redelivery of a decided job, a line that
    /// moved on).
    fn move_from(
        &self,
        from: JobStatus,
        now: Timestamp,
        change: impl FnOnce(&mut Job),
    ) -> Result<Transition, JobStatus> {
        if self.status == from {
            Ok(self.moved(now, change))
        } else {
            Err(self.status)
        }
    }

    /// PENDING -> HELD: the claim's conditional seat writes succeeded; the seats cost
    /// `amount_due` (`None`: they are free).
    pub fn hold(
        &self,
        seat_ids: Vec<SeatId>,
        until: Timestamp,
        amount_due: Option<Money>,
        now: Timestamp,
    ) -> Result<Transition, JobStatus> {
        let change = holding(seat_ids, until, amount_due);
        self.move_from(JobStatus::Pending, now, change)
    }

    /// PENDING -> WAITLISTED: too few seats, and the event keeps a line for its sections.
    pub fn join_waitlist(&self, now: Timestamp) -> Result<Transition, JobStatus> {
        self.move_from(JobStatus::Pending, now, |job| {
            job.status = JobStatus::Waitlisted;
        })
    }

    /// WAITLISTED -> HELD: the line handed it seats that came free.
    pub fn hold_waiting(
        &self,
        seat_ids: Vec<SeatId>,
        until: Timestamp,
        amount_due: Option<Money>,
        now: Timestamp,
    ) -> Result<Transition, JobStatus> {
        let change = holding(seat_ids, until, amount_due);
        self.move_from(JobStatus::Waitlisted, now, change)
    }

    /// WAITLISTED -> REJECTED: its buyer is over the limit by now, or the waitlist closed.
    pub fn reject_waiting(&self, reason: &Reason, now: Timestamp) -> Result<Transition, JobStatus> {
        let change = ending(JobStatus::Rejected, reason);
        self.move_from(JobStatus::Waitlisted, now, change)
    }

    /// PENDING -> REJECTED: the seats were not available, for `reason`.
    pub fn reject(&self, reason: &Reason, now: Timestamp) -> Result<Transition, JobStatus> {
        let change = ending(JobStatus::Rejected, reason);
        self.move_from(JobStatus::Pending, now, change)
    }

    /// PENDING -> FAILED: processing failed for good, for `reason` (its code `failed`).
    pub fn fail(&self, reason: &str, now: Timestamp) -> Result<Transition, JobStatus> {
        let failed = Reason::failed(reason);
        self.move_from(JobStatus::Pending, now, ending(JobStatus::Failed, &failed))
    }

    /// Closes a PENDING job without a claim, as `closure` says.
    pub fn close(&self, closure: &Closure, now: Timestamp) -> Result<Transition, JobStatus> {
        match closure {
            Closure::Failed { reason } => self.fail(reason, now),
            Closure::RequestExpired => self.reject(&Reason::request_expired(), now),
        }
    }

    /// FAILED -> PENDING, before the job's intent is replayed, so the replay is decided like a
    /// new intent. `Ok(None)`: it is PENDING already (a repeated replay); any other status was
    /// decided for good and a replay must not touch it.
    pub fn reopen(&self, now: Timestamp) -> Result<Option<Transition>, JobStatus> {
        match self.status {
            JobStatus::Failed => Ok(Some(self.moved(now, |job| {
                job.status = JobStatus::Pending;
                job.reason = None;
                job.reason_code = None;
            }))),
            JobStatus::Pending => Ok(None),
            other => Err(other),
        }
    }

    /// HELD -> SOLD, while the hold is live, with what `tender` brings toward its price.
    pub fn confirm(
        &self,
        tender: &Tender,
        now: Timestamp,
    ) -> Result<Option<Settling>, JobConflict> {
        self.settle(JobAction::Confirm, tender, now)
    }

    /// HELD -> CANCELLED: the buyer gives the seats back.
    pub fn cancel(&self, now: Timestamp) -> Result<Option<Settling>, JobConflict> {
        self.settle(JobAction::Cancel, &Tender::Nothing, now)
    }

    /// HELD -> EXPIRED, once the deadline has passed.
    pub fn expire(&self, now: Timestamp) -> Result<Option<Settling>, JobConflict> {
        self.settle(JobAction::Expire, &Tender::Nothing, now)
    }

    /// HELD stays HELD with its deadline `extension.step` later (from the deadline, not from
    /// `now`), while the hold is live and the event's terms leave an extension. The seats'
    /// writes are conditioned on the deadline read, so racing extensions add up to no more.
    pub fn extend(
        &self,
        extension: HoldExtension,
        now: Timestamp,
    ) -> Result<Settling, JobConflict> {
        let from = match (self.status, self.hold_expires_at) {
            (JobStatus::Held, Some(until)) if until > now => until,
            (JobStatus::Held, _) => return Err(JobConflict::HoldLapsed),
            (status, _) => {
                return Err(JobConflict::WrongStatus {
                    status,
                    action: JobAction::Extend,
                });
            }
        };
        if !extension.allowed() {
            return Err(JobConflict::NotExtendable);
        }
        if self.hold_extensions >= extension.max {
            return Err(JobConflict::ExtensionsUsedUp { max: extension.max });
        }
        let until = from + extension.step;
        let transition = self.moved(now, |job| {
            job.hold_expires_at = Some(until);
            job.hold_extensions += 1;
        });
        Ok(Settling {
            transition,
            seats: Settlement::Extend { from, until },
        })
    }

    /// What `action` at `now` does to this job: `Ok(Some(..))` is the transition and what to do
    /// to its seats, `Ok(None)` means the action already happened (a repeat is a no-op so
    /// clients may retry), and `Err` is a conflict the client must be told about.
    ///
    /// A confirm sells a priced hold only for its payment (`tender`), unless the deployment
    /// waived payments: a payment must be exactly its amount due, and its reference is recorded,
    /// so the same payment reported again is a repeat, another payment of a sold job a conflict
    /// (its money must go back). Decided on the job as the settlement's step reads it, so a
    /// confirm sent while the claim was still running cannot slip past the price.
    pub fn settle(
        &self,
        action: JobAction,
        tender: &Tender,
        now: Timestamp,
    ) -> Result<Option<Settling>, JobConflict> {
        let lapsed = self.hold_lapsed(now);
        let payment = tender.payment();
        let (status, seats) = match (action, self.status) {
            // A lapsed hold already reads EXPIRED (`Job::as_of`): it can end no other way.
            (JobAction::Confirm | JobAction::Cancel, JobStatus::Held) if lapsed => {
                return Err(JobConflict::HoldLapsed);
            }
            (JobAction::Confirm, JobStatus::Held) if *tender == Tender::Nothing => {
                if let Some(due) = self.amount_due.filter(|due| due.amount > 0) {
                    return Err(JobConflict::PaymentRequired { due });
                }
                (JobStatus::Sold, Settlement::Sell)
            }
            (JobAction::Confirm, JobStatus::Held)
                if payment.is_some_and(|p| Some(p.paid) != self.amount_due) =>
            {
                return Err(JobConflict::PaymentMismatch {
                    due: self.amount_due,
                });
            }
            (JobAction::Confirm, JobStatus::Sold)
                if payment.is_some_and(|p| self.payment_ref.as_ref() != Some(&p.reference)) =>
            {
                return Err(JobConflict::PaidOtherwise);
            }
            (JobAction::Confirm, JobStatus::Held) => (JobStatus::Sold, Settlement::Sell),
            (JobAction::Cancel, JobStatus::Held) => (JobStatus::Cancelled, Settlement::Release),
            // A job waiting in line holds no seats: the release gives back none.
            (JobAction::Cancel, JobStatus::Waitlisted) => {
                (JobStatus::Cancelled, Settlement::Release)
            }
            (JobAction::Expire, JobStatus::Held) if lapsed => {
                (JobStatus::Expired, Settlement::Release)
            }
            (JobAction::Expire, JobStatus::Held) => return Err(JobConflict::HoldLive),
            // Settling knows no event's terms, so it extends nothing: `Job::extend` decides
            // an extension with them.
            (JobAction::Extend, JobStatus::Held) => return Err(JobConflict::NotExtendable),
            (JobAction::Confirm, JobStatus::Sold)
            | (JobAction::Cancel, JobStatus::Cancelled)
            | (JobAction::Expire, JobStatus::Expired) => return Ok(None),
            (action, status) => return Err(JobConflict::WrongStatus { status, action }),
        };
        let transition = self.moved(now, |job| {
            job.status = status;
            if status == JobStatus::Sold {
                job.payment_ref = payment.map(|p| p.reference.clone());
            }
        });
        Ok(Some(Settling { transition, seats }))
    }
}

/// The change of a job that comes to hold `seat_ids` until `until`, for `amount_due`.
fn holding(
    seat_ids: Vec<SeatId>,
    until: Timestamp,
    amount_due: Option<Money>,
) -> impl FnOnce(&mut Job) {
    move |job| {
        job.status = JobStatus::Held;
        job.seat_ids = seat_ids;
        job.hold_expires_at = Some(until);
        job.amount_due = amount_due;
    }
}

/// The change of a job that ends in `status` (REJECTED, FAILED) for `reason`: its text and,
/// beside it, its code.
fn ending(status: JobStatus, reason: &Reason) -> impl FnOnce(&mut Job) + '_ {
    move |job| {
        job.status = status;
        job.reason = Some(reason.text.clone());
        job.reason_code = Some(reason.code);
    }
}

#[cfg(test)]
mod tests;
