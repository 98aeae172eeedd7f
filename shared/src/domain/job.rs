//! Jobs: the buyer-visible record of one intent, and the rules for how it may end.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{BuyerId, EventId, Intent, JobId, SeatId, SeatRequest};

/// Where a job stands. `Pending` and `Held` are the only states that can still change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// Accepted and durable, not decided yet.
    Pending,
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
    pub const ALL: [Self; 7] = [
        Self::Pending,
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
            Self::Held => "HELD",
            Self::Rejected => "REJECTED",
            Self::Failed => "FAILED",
            Self::Sold => "SOLD",
            Self::Expired => "EXPIRED",
            Self::Cancelled => "CANCELLED",
        }
    }

    /// Reads the storage spelling back; `None` means the store holds something this build does not know.
    #[must_use]
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// A final status never changes again; the buyer can stop polling.
    #[must_use]
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Pending | Self::Held)
    }
}

/// What a buyer (or the sweeper) asks of a held job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobAction {
    /// Buy the held seats.
    Confirm,
    /// Give the held seats back.
    Cancel,
    /// Release a hold whose deadline has passed.
    Expire,
}

/// What happens to a job's seats when it is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settlement {
    /// HELD -> SOLD.
    Sell,
    /// HELD -> AVAILABLE.
    Release,
}

/// Why an action cannot be applied to a job in its current state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
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
}

fn action_past(action: JobAction) -> &'static str {
    match action {
        JobAction::Confirm => "confirmed",
        JobAction::Cancel => "cancelled",
        JobAction::Expire => "expired",
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
    /// When admission accepted it.
    pub accepted_at: Timestamp,
    /// The first transient failure met while processing it, for operators (never shown to buyers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// The latest transient failure met while processing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
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
            accepted_at: intent.accepted_at,
            first_error: None,
            last_error: None,
        }
    }

    /// Prepares a FAILED job for a replay of its intent: back to PENDING, reason cleared, so the
    /// replayed intent is decided like a new one. `Ok(false)`: it is PENDING already (a repeated
    /// replay); any other status was decided for good and a replay must not touch it.
    pub fn reopen(&mut self) -> Result<bool, JobStatus> {
        match self.status {
            JobStatus::Failed => {
                self.status = JobStatus::Pending;
                self.reason = None;
                Ok(true)
            }
            JobStatus::Pending => Ok(false),
            other => Err(other),
        }
    }

    /// Decides what `action` at `now` does to this job: `Ok(Some(..))` is the status to move to and
    /// what to do to its seats, `Ok(None)` means the action already happened (a repeat is a no-op
    /// so clients may retry), and `Err` is a conflict the client must be told about.
    pub fn settle(
        &self,
        action: JobAction,
        now: Timestamp,
    ) -> Result<Option<(JobStatus, Settlement)>, JobConflict> {
        let lapsed = self.hold_expires_at.is_none_or(|until| until <= now);
        match (action, self.status) {
            (JobAction::Confirm, JobStatus::Held) if lapsed => Err(JobConflict::HoldLapsed),
            (JobAction::Confirm, JobStatus::Held) => Ok(Some((JobStatus::Sold, Settlement::Sell))),
            (JobAction::Cancel, JobStatus::Held) => {
                Ok(Some((JobStatus::Cancelled, Settlement::Release)))
            }
            (JobAction::Expire, JobStatus::Held) if lapsed => {
                Ok(Some((JobStatus::Expired, Settlement::Release)))
            }
            (JobAction::Expire, JobStatus::Held) => Err(JobConflict::HoldLive),
            (JobAction::Confirm, JobStatus::Sold)
            | (JobAction::Cancel, JobStatus::Cancelled)
            | (JobAction::Expire, JobStatus::Expired) => Ok(None),
            (action, status) => Err(JobConflict::WrongStatus { status, action }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).unwrap()
    }

    fn job(status: JobStatus) -> Job {
        Job {
            job_id: JobId::new(),
            event_id: EventId::parse("e1").unwrap(),
            buyer_id: BuyerId::parse("b1").unwrap(),
            request: SeatRequest::in_section("A", 1).unwrap(),
            status,
            seat_ids: vec![],
            hold_expires_at: Some(at(100)),
            reason: None,
            accepted_at: at(0),
            first_error: None,
            last_error: None,
        }
    }

    #[test]
    fn only_a_failed_job_reopens_for_a_replay() {
        let mut failed = job(JobStatus::Failed);
        failed.reason = Some("broken".into());
        assert_eq!(failed.reopen(), Ok(true));
        assert_eq!((failed.status, failed.reason), (JobStatus::Pending, None));
        assert_eq!(job(JobStatus::Pending).reopen(), Ok(false));
        for decided in [JobStatus::Held, JobStatus::Rejected, JobStatus::Sold] {
            assert_eq!(job(decided).reopen(), Err(decided));
        }
    }

    #[test]
    fn statuses_round_trip_through_their_storage_spelling() {
        for status in JobStatus::ALL {
            assert_eq!(JobStatus::parse(status.as_str()), Some(status));
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{}\"", status.as_str()));
        }
        assert_eq!(JobStatus::parse("held"), None);
    }

    #[test]
    fn only_pending_and_held_are_not_final() {
        let open: Vec<_> = JobStatus::ALL
            .into_iter()
            .filter(|s| !s.is_final())
            .collect();
        assert_eq!(open, [JobStatus::Pending, JobStatus::Held]);
    }

    #[test]
    fn a_live_hold_can_be_confirmed_and_a_repeat_confirm_is_a_no_op() {
        let held = job(JobStatus::Held);
        assert_eq!(
            held.settle(JobAction::Confirm, at(99)),
            Ok(Some((JobStatus::Sold, Settlement::Sell)))
        );
        assert_eq!(
            job(JobStatus::Sold).settle(JobAction::Confirm, at(500)),
            Ok(None)
        );
    }

    #[test]
    fn a_lapsed_hold_cannot_be_confirmed_but_can_be_expired() {
        let held = job(JobStatus::Held);
        assert_eq!(
            held.settle(JobAction::Confirm, at(100)),
            Err(JobConflict::HoldLapsed)
        );
        assert_eq!(
            held.settle(JobAction::Expire, at(100)),
            Ok(Some((JobStatus::Expired, Settlement::Release)))
        );
        assert_eq!(
            held.settle(JobAction::Expire, at(99)),
            Err(JobConflict::HoldLive)
        );
    }

    #[test]
    fn a_sold_job_cannot_be_cancelled_and_a_pending_one_cannot_be_confirmed() {
        let err = job(JobStatus::Sold)
            .settle(JobAction::Cancel, at(0))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the job is SOLD, so it cannot be cancelled"
        );
        assert!(
            job(JobStatus::Pending)
                .settle(JobAction::Confirm, at(0))
                .is_err()
        );
        assert_eq!(
            job(JobStatus::Cancelled).settle(JobAction::Cancel, at(0)),
            Ok(None)
        );
    }
}
