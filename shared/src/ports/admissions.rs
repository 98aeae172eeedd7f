use async_trait::async_trait;

use super::BackendError;
use crate::domain::{IdempotencyKey, Intent, JobId, SeatId, Section};

/// What admitting an intent did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// A new job was created and its intent enqueued.
    Accepted(JobId),
    /// The buyer sent this key with this request before; this is its job, nothing new was enqueued.
    Duplicate(JobId),
    /// The buyer used this key for a different request.
    KeyReused,
    /// No such event.
    UnknownEvent,
    /// The event has none of these seats.
    UnknownSeats(Vec<SeatId>),
    /// The event has no seats in this section.
    UnknownSection(Section),
}

/// Admission: the one write the API makes for a reservation.
#[async_trait]
pub trait Admissions: Send + Sync {
    /// Records the idempotency key, the PENDING job and the queued intent. When this returns
    /// `Accepted` or `Duplicate` the intent is durable and will be decided, even if the API dies
    /// the next instant; that is what lets the API answer 202 without waiting for the worker.
    async fn admit(&self, key: &IdempotencyKey, intent: &Intent)
    -> Result<Admission, BackendError>;

    /// The id of a new job: the store that keeps jobs chooses the kind that suits its keys
    /// (random by default, see [`JobId::new`]).
    fn new_job_id(&self) -> JobId {
        JobId::new()
    }
}
