//! Jobs: the buyer-visible record of one intent, and the rules for how it may end.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{Access, BuyerId, EventId, Intent, JobId, Money, ReasonCode, SeatId, SeatRequest};

/// Where a job stands. `Pending`, `Waitlisted` and `Held` are the only states that can still
/// change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// Accepted and durable, not decided yet.
    Pending,
    /// Waiting in its section's line for seats to come free (an event with a waitlist).
    Waitlisted,
    /// Seats held until the job's `hold_expires_at`.
    Held,
    /// The seats were not available; final.
    Rejected,
    /// Processing failed for good; final, with a reason.
    Failed,
    /// The buyer confirmed the hold; final.
    Sold,
    /// The hold lapsed and its seats were released; final.
    Expired,
    /// The buyer let the hold go; final.
    Cancelled,
}

impl JobStatus {
    /// Every status, for parsing and for exhaustive tests.
    pub const ALL: [Self; 8] = [
        Self::Pending,
        Self::Waitlisted,
        Self::Held,
        Self::Rejected,
        Self::Failed,
        Self::Sold,
        Self::Expired,
        Self::Cancelled,
    ];

    /// The wire and storage spelling.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Waitlisted => "WAITLISTED",
            Self::Held => "HELD",
            Self::Rejected => "REJECTED",
            Self::Failed => "FAILED",
            Self::Sold => "SOLD",
            Self::Expired => "EXPIRED",
            Self::Cancelled => "CANCELLED",
        }
    }

    /// Whether a decision is still to come by itself: PENDING (the claim) or WAITLISTED (the
    /// line), the statuses a long poll waits on.
    #[must_use]
    pub fn awaits_decision(self) -> bool {
        matches!(self, Self::Pending | Self::Waitlisted)
    }

    /// Reads the storage spelling back; `None` means the store holds something this build does not know.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// What a buyer (or the sweeper) asks of a held job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobAction {
    /// Buy the held seats.
    Confirm,
    /// Give the held seats back.
    Cancel,
    /// Release a hold whose deadline has passed.
    Expire,
    /// Move a live hold's deadline later, as the event's terms allow.
    Extend,
}

/// What happens to a job's seats when it is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// HELD -> SOLD.
    Sell,
    /// HELD -> AVAILABLE.
    Release,
    /// HELD stays HELD, its deadline moved from `from` (the deadline read: the write's
    /// condition) to `until`.
    Extend {
        /// The deadline the extension was decided on.
        from: Timestamp,
        /// The new deadline.
        until: Timestamp,
    },
}

/// Why an action cannot be applied to a job in its current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[serde(tag = "conflict", rename_all = "snake_case")]
pub enum JobConflict {
    /// The job is not in a state the action applies to.
    #[error("the job is {}, so it cannot be {}", .status.as_str(), action_past(*.action))]
    WrongStatus {
        /// The job's status.
        status: JobStatus,
        /// The action refused.
        action: JobAction,
    },
    /// A confirm arrived after the hold's deadline.
    #[error("the hold has expired")]
    HoldLapsed,
    /// An expiry was attempted before the deadline.
    #[error("the hold has not expired yet")]
    HoldLive,
    /// A payment's amount or currency is not the hold's amount due.
    #[error("the payment is not the amount due ({})", .due.map_or_else(|| "nothing".to_owned(), |m| m.to_string()))]
    PaymentMismatch {
        /// What the hold costs (`None`: nothing is due).
        due: Option<Money>,
    },
    /// A confirm without a payment of a priced hold, where payments are taken: the hold is
    /// sold by its payment alone.
    #[error("the hold costs {due} and is sold by its payment")]
    PaymentRequired {
        /// What the hold costs.
        due: Money,
    },
    /// The job was sold already, paid by another payment.
    #[error("the job was already paid by another payment")]
    PaidOtherwise,
    /// The event's terms allow no hold extension.
    #[error("this event's holds cannot be extended")]
    NotExtendable,
    /// The hold has had every extension the event allows.
    #[error("the hold was already extended {max} times, the most this event allows")]
    ExtensionsUsedUp {
        /// The event's most extensions per hold.
        max: u32,
    },
}

impl JobConflict {
    /// The conflict's reason code, as the API's problem and an unmatched payment carry it.
    #[must_use]
    pub fn code(&self) -> ReasonCode {
        match self {
            Self::WrongStatus { .. } => ReasonCode::WrongStatus,
            Self::HoldLapsed => ReasonCode::HoldLapsed,
            Self::HoldLive => ReasonCode::HoldLive,
            Self::PaymentMismatch { .. } => ReasonCode::PaymentMismatch,
            Self::PaymentRequired { .. } => ReasonCode::PaymentRequired,
            Self::PaidOtherwise => ReasonCode::PaidOtherwise,
            Self::NotExtendable => ReasonCode::NotExtendable,
            Self::ExtensionsUsedUp { .. } => ReasonCode::ExtensionsUsedUp,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn action_past(action: JobAction) -> &'static str {
    match action {
        JobAction::Confirm => "confirmed",
        JobAction::Cancel => "cancelled",
        JobAction::Expire => "expired",
        JobAction::Extend => "extended",
    }
}

/// A job as stored and shown to the buyer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// The job's id.
    pub job_id: JobId,
    /// The event asked for.
    pub event_id: EventId,
    /// The buyer.
    pub buyer_id: BuyerId,
    /// What was asked for.
    pub request: SeatRequest,
    /// Where it stands.
    pub status: JobStatus,
    /// The seats held or sold (empty until a claim succeeds; kept after release, for the record).
    pub seat_ids: Vec<SeatId>,
    /// The hold's deadline, once held.
    pub hold_expires_at: Option<Timestamp>,
    /// Why the job was rejected or failed.
    pub reason: Option<String>,
    /// The code of `reason`, for clients to match (`None` exactly when `reason` is).
    #[serde(default, deserialize_with = "super::reason::lenient")]
    pub reason_code: Option<ReasonCode>,
    /// What the held seats cost, fixed when they were claimed; `None` when they are free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount_due: Option<Money>,
    /// The payment that sold the job, if a payment provider confirmed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_ref: Option<String>,
    /// How many times the buyer extended the hold.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub hold_extensions: u32,
    /// When admission accepted it.
    pub accepted_at: Timestamp,
    /// The first transient failure met while processing it, for operators (never shown to buyers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// The latest transient failure met while processing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// The sales channel and access code it was admitted under (its intent's), which its
    /// seats count against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
}

impl Job {
    /// The PENDING job an accepted intent creates: nothing decided, nothing held.
    #[must_use]
    pub fn pending(intent: &Intent) -> Self {
        Self {
            job_id: intent.job_id,
            event_id: intent.event_id.clone(),
            buyer_id: intent.buyer_id.clone(),
            request: intent.request.clone(),
            status: JobStatus::Pending,
            seat_ids: Vec::new(),
            hold_expires_at: None,
            reason: None,
            reason_code: None,
            amount_due: None,
            payment_ref: None,
            hold_extensions: 0,
            accepted_at: intent.accepted_at,
            first_error: None,
            last_error: None,
            access: intent.access.clone(),
        }
    }
}

impl Job {
    /// Whether the job's hold, if it has one, has reached its deadline by `now`. From that
    /// instant the hold can no longer be confirmed and its seats may be claimed again.
    #[must_use]
    pub fn hold_lapsed(&self, now: Timestamp) -> bool {
        self.hold_expires_at.is_none_or(|until| until <= now)
    }

    /// The seats this job counts against a limit at `now` (its buyer's, its access code's): a
    /// sale's seats, a live hold's, and the quantity a place in line waits for.
    #[must_use]
    pub fn counted_seats(&self, now: Timestamp) -> usize {
        match self.status {
            JobStatus::Sold => self.seat_ids.len(),
            JobStatus::Held if !self.hold_lapsed(now) => self.seat_ids.len(),
            JobStatus::Waitlisted => self.request.quantity(),
            _ => 0,
        }
    }

    /// The access code the job was admitted with, if any.
    #[must_use]
    pub fn code(&self) -> Option<&super::CodeHash> {
        self.access.as_ref().and_then(|access| access.code.as_ref())
    }

    /// Whether the held seats cost anything.
    #[must_use]
    pub fn is_priced(&self) -> bool {
        self.amount_due.is_some_and(|due| due.amount > 0)
    }

    /// Whether a confirm without a payment must be refused at `now` where payments are taken: a
    /// live hold whose seats are not free is sold by its payment, never by the buyer's word (a
    /// lapsed one is refused as lapsed).
    #[must_use]
    pub fn awaits_payment(&self, now: Timestamp) -> bool {
        self.status == JobStatus::Held && !self.hold_lapsed(now) && self.is_priced()
    }

    /// The job as every view shows it at `now`: a HELD job whose deadline has passed reads as
    /// EXPIRED at once, whether or not the sweeper has released its seats yet. The seat map
    /// already shows those seats available, so no reader ever sees two live holds of one seat.
    #[must_use]
    pub fn as_of(mut self, now: Timestamp) -> Self {
        if self.status == JobStatus::Held && self.hold_lapsed(now) {
            self.status = JobStatus::Expired;
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_round_trip_through_their_storage_spelling() {
        for status in JobStatus::ALL {
            assert_eq!(JobStatus::parse(status.as_str()), Some(status));
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
        assert_eq!(JobStatus::parse("held"), None);
    }

    fn held_until(until: Timestamp) -> Job {
        let request = SeatRequest::Seats(vec![SeatId::parse("A-1-1").unwrap()]);
        Job {
            access: None,
            job_id: JobId::new(),
            event_id: EventId::parse("e1").unwrap(),
            buyer_id: BuyerId::parse("b1").unwrap(),
            seat_ids: vec![SeatId::parse("A-1-1").unwrap()],
            request,
            status: JobStatus::Held,
            hold_expires_at: Some(until),
            reason: None,
            reason_code: None,
            amount_due: None,
            payment_ref: None,
            hold_extensions: 0,
            accepted_at: until,
            first_error: None,
            last_error: None,
        }
    }

    #[test]
    fn a_hold_reads_as_expired_from_its_deadline_on() {
        let until: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let second = jiff::SignedDuration::from_secs(1);
        let job = held_until(until);
        assert_eq!(job.clone().as_of(until - second).status, JobStatus::Held);
        assert_eq!(job.clone().as_of(until).status, JobStatus::Expired);
        let later = job.clone().as_of(until + second);
        assert_eq!(later.status, JobStatus::Expired);
        assert_eq!(later.seat_ids, job.seat_ids, "the record keeps its seats");
    }

    #[test]
    fn only_a_held_job_changes_with_time() {
        let until: Timestamp = "2026-12-01T12:00:00Z".parse().unwrap();
        let later = until + jiff::SignedDuration::from_secs(3600);
        for status in JobStatus::ALL.into_iter().filter(|s| *s != JobStatus::Held) {
            let job = Job {
                status,
                ..held_until(until)
            };
            assert_eq!(job.clone().as_of(later), job, "{status:?}");
        }
    }
}
