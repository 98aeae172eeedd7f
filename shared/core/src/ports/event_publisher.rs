use async_trait::async_trait;

use super::BackendError;
use crate::domain::{Notice, ReservationEvent};

/// Where reservation events go for follow-on work (EventBridge in production, a log file locally).
/// Follow-on work never rolls a seat back, so publication happens after the transition commits.
#[async_trait]
pub trait EventPublisher: Send + Sync {
    /// Publishes the events and returns the indices of those that failed, to be retried alone.
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError>;

    /// Publishes a notice at once, not through the outbox, since no transition goes with it: a
    /// payment that sold nothing (for the refund workflow) or a sale's opening. An error means it
    /// was not published: the payment provider is answered so that it reports the payment
    /// again, and an opening stays recorded as unpublished.
    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError>;
}
