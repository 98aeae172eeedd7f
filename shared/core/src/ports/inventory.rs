use async_trait::async_trait;
use jiff::Timestamp;

use super::BackendError;
use crate::domain::{
    EventId, HoldExtension, Intent, Job, JobAction, JobConflict, JobId, JobStatus, Reason,
    ReasonCode, ReservationEvent, SeatId, Settling, Tender, Transition,
};

/// How one intent was decided. Losing a race is an outcome, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The seats are held by this job until `until`.
    Held {
        /// The seats held.
        seat_ids: Vec<SeatId>,
        /// The hold's deadline.
        until: Timestamp,
    },
    /// The job was rejected for good.
    Rejected {
        /// Why: its code and its text.
        reason: Reason,
    },
    /// The job waits in its section's line (an event with a waitlist); its seats come later.
    Waitlisted,
    /// The job had been decided before (a redelivery); nothing changed.
    AlreadyDecided(JobStatus),
}

impl ClaimOutcome {
    /// The outcome a claim's transition stands for: HELD with its seats, in line, or the
    /// rejection.
    #[must_use]
    pub fn of(transition: &Transition) -> Self {
        Self::of_decided(&transition.job)
    }

    /// The outcome a job just decided by a claim stands for.
    #[must_use]
    pub fn of_decided(job: &Job) -> Self {
        match (job.status, job.hold_expires_at) {
            (JobStatus::Held, Some(until)) => Self::Held {
                seat_ids: job.seat_ids.clone(),
                until,
            },
            (JobStatus::Waitlisted, _) => Self::Waitlisted,
            _ => Self::Rejected {
                reason: Reason::new(
                    // A job rejected by this build always has its code.
                    job.reason_code.unwrap_or(ReasonCode::SeatUnavailable),
                    job.reason.clone().unwrap_or_default(),
                ),
            },
        }
    }
}

/// A claimed batch: one outcome per intent, and the events the backend left to its caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claims {
    /// One outcome per intent, in the intents' order.
    pub outcomes: Vec<ClaimOutcome>,
    /// Events of this batch's decisions that have no outbox entry (DynamoDB's rejections: a
    /// transaction would make the most common decision of a sale twice as dear). The caller
    /// publishes and records them (`app::claim`) before it acknowledges any intent, so a crash
    /// leaves them to the redelivery, which finds them still unrecorded. Empty on SQLite.
    pub unrecorded: Vec<ReservationEvent>,
}

/// What a confirm, cancel or expiry did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// No such job.
    NotFound,
    /// The job after the action (unchanged if the action had already happened).
    Done(Box<Job>),
    /// The action does not apply to the job as it stands.
    Conflict(JobConflict),
}

impl Settled {
    /// What settling a job (as read, `None` if there is none) comes to before anything is
    /// written: `Ok` with the job and the domain's settling to persist, or `Err` with the answer
    /// that needs no write (no such job, a repeat of what already happened, a conflict). An
    /// extension is decided under the job's event's `extension` terms.
    pub fn plan(
        job: Option<Job>,
        action: JobAction,
        tender: &Tender,
        extension: HoldExtension,
        now: Timestamp,
    ) -> Result<(Job, Settling), Self> {
        let Some(job) = job else {
            return Err(Self::NotFound);
        };
        let settled = match action {
            JobAction::Extend => job.extend(extension, now).map(Some),
            action => job.settle(action, tender, now),
        };
        match settled {
            Ok(Some(settling)) => Ok((job, settling)),
            Ok(None) => Err(Self::Done(Box::new(job))),
            Err(conflict) => Err(Self::Conflict(conflict)),
        }
    }
}

/// The inventory: the authority on who holds which seat. Every transition here is one atomic step
/// that moves the seats, updates the job and records the reservation event together, conditioned
/// on the seats' current state.
#[async_trait]
pub trait Inventory: Send + Sync {
    /// Decides each intent at `now`, in order, one outcome per intent. A seat is held only if it
    /// is still AVAILABLE (or its hold lapsed) when written; a multi-seat intent holds all or none.
    /// An intent whose job was already decided changes nothing, but a rejection whose event
    /// is still unrecorded is handed back in [`Claims::unrecorded`] again. On error none of the
    /// outcomes are known and the caller retries the whole batch, which idempotency makes safe.
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError>;

    /// Confirms, cancels, expires or extends a held job (or cancels a waiting one), as the domain's `Job::settle` (or, for
    /// an extension, `Job::extend` under the event's terms read in the step) decides: the seat
    /// writes conditioned on this job's hold, and the job's transition, in one atomic step. A
    /// confirm's `tender` (a payment, none, or payments waived) is decided against the job as
    /// read in that step, so a payment and a cancel or expiry racing on one hold leave exactly
    /// one outcome, and a confirm sent while the claim ran meets the hold's price.
    ///
    /// The decision's "now" is the store's own, read inside that step (under the write lock, or
    /// just before the conditional write is sent), never the caller's: a confirm that waited for
    /// the store past the hold's deadline finds the hold lapsed, as every view already shows it,
    /// and cannot sell seats a claim in between no longer counted against the buyer's limit.
    /// Seats a cancel or an expiry gives back on an event with a waitlist (or a cancelled place
    /// in line) are served to their section's line in the same atomic step.
    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError>;

    /// Closes `event_id`'s waitlist: every WAITLISTED job is REJECTED ("waitlist closed"), each
    /// with its event, and from then on the event behaves as one without a waitlist. Returns
    /// how many jobs were waiting, or `None` if there is no such event.
    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError>;

    /// Expires up to `limit` jobs whose holds lapsed by `now`, releasing their seats, each release
    /// conditioned on the seat still being held by that job; returns how many it expired. Seats
    /// released on an event with a waitlist go to their section's line in the same atomic step.
    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError>;
}
