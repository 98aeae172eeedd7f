//! Reservation events: what follow-on systems (notifications, analytics, delivery) learn of each
//! decided transition. They are written in the same atomic step as the transition (the outbox)
//! and published later, so an event exists exactly when its transition happened; or, where a
//! backend decides without that step (DynamoDB's rejections), the worker publishes and records
//! the event before it acknowledges the intent, whose redelivery after a crash does it then.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{
    BuyerId, EventId, Job, JobId, JobStatus, Money, ReasonCode, SALE_OPENED, SaleOpened, SeatId,
};

/// The `source` of every published reservation event (EventBridge's field of that name).
pub const EVENT_SOURCE: &str = "seatclaim.reservations";

/// One decided transition of one job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReservationEvent {
    /// The status the job entered; also the event's type.
    pub status: JobStatus,
    /// The job.
    pub job_id: JobId,
    /// Its event.
    pub event_id: EventId,
    /// Its buyer.
    pub buyer_id: BuyerId,
    /// The seats involved.
    pub seat_ids: Vec<SeatId>,
    /// The hold's deadline, for `HELD`.
    pub hold_expires_at: Option<Timestamp>,
    /// Why, for `REJECTED` and `FAILED`.
    pub reason: Option<String>,
    /// The code of `reason`, for consumers to match (absent from events recorded before codes;
    /// they read back with the code of their text).
    #[serde(default, deserialize_with = "super::reason::lenient")]
    pub reason_code: Option<ReasonCode>,
    /// What the hold costs, for a priced `HELD` (what the payment flow charges).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_due: Option<Money>,
    /// The payment that sold it, for `SOLD` by a payment provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_ref: Option<String>,
    /// How many times the hold has been extended, for a `HELD` that records an extension
    /// (a `HoldExtended` event); absent on the hold itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_extensions: Option<u32>,
    /// When the transition was decided.
    pub occurred_at: Timestamp,
}

impl ReservationEvent {
    /// The event recording that `job` has just entered its current status.
    #[must_use]
    pub fn of(job: &Job, occurred_at: Timestamp) -> Self {
        Self {
            status: job.status,
            job_id: job.job_id,
            event_id: job.event_id.clone(),
            buyer_id: job.buyer_id.clone(),
            seat_ids: job.seat_ids.clone(),
            hold_expires_at: job
                .hold_expires_at
                .filter(|_| job.status == JobStatus::Held),
            reason: job.reason.clone(),
            reason_code: job.reason_code,
            amount_due: job.amount_due.filter(|_| job.status == JobStatus::Held),
            payment_ref: job
                .payment_ref
                .clone()
                .filter(|_| job.status == JobStatus::Sold),
            hold_extensions: Some(job.hold_extensions)
                .filter(|n| *n > 0 && job.status == JobStatus::Held),
            occurred_at,
        }
    }

    /// A stable, human-readable type name ("Reservation Held"), used as EventBridge's `detail-type`.
    #[must_use]
    pub fn detail_type(&self) -> &'static str {
        if self.hold_extensions.is_some() {
            return "Reservation HoldExtended";
        }
        match self.status {
            JobStatus::Pending => "Reservation Pending",
            JobStatus::Waitlisted => "Reservation Waitlisted",
            JobStatus::Held => "Reservation Held",
            JobStatus::Rejected => "Reservation Rejected",
            JobStatus::Failed => "Reservation Failed",
            JobStatus::Sold => "Reservation Sold",
            JobStatus::Expired => "Reservation Expired",
            JobStatus::Cancelled => "Reservation Cancelled",
        }
    }
}

/// The `detail-type` of [`PaymentUnmatched`].
pub const PAYMENT_UNMATCHED: &str = "PaymentUnmatched";

/// A payment the provider reported that sold nothing: the job was unknown, no longer HELD, its
/// hold had lapsed, or the amount was not the amount due. Published for the refund workflow,
/// which must give the money back; seats are never touched for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaymentUnmatched {
    /// Always [`PAYMENT_UNMATCHED`], so a consumer of the log tells it from a job's event.
    #[serde(rename = "type")]
    pub kind: String,
    /// The job the payment named, if it named a valid job id.
    pub job_id: Option<JobId>,
    /// The provider's event id (Stripe's `evt_...`): the same event reported again is
    /// published again, and consumers deduplicate on it.
    pub stripe_event_id: String,
    /// The payment's reference (Stripe's payment intent), for the refund.
    pub payment_ref: Option<String>,
    /// What was paid, if the event said.
    pub amount: Option<Money>,
    /// Why it sold nothing.
    pub reason: String,
    /// The code of `reason`: a settlement's conflict, `not_found`, or a `payment_*` code.
    pub reason_code: ReasonCode,
    /// When it was received.
    pub occurred_at: Timestamp,
}

/// What is published at once, not through the outbox, since no job's transition goes with it:
/// a payment that sold nothing, or a sale's opening (recorded with its event, and published
/// again until the publisher takes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Notice {
    /// A payment for the refund workflow.
    PaymentUnmatched(PaymentUnmatched),
    /// The draw of a sale's opening, for its audit.
    SaleOpened(SaleOpened),
}

impl Notice {
    /// Its `detail-type` on the bus.
    #[must_use]
    pub const fn detail_type(&self) -> &'static str {
        match self {
            Self::PaymentUnmatched(_) => PAYMENT_UNMATCHED,
            Self::SaleOpened(_) => SALE_OPENED,
        }
    }
}
