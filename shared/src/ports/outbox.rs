use async_trait::async_trait;

use super::BackendError;
use crate::domain::ReservationEvent;

/// One recorded event awaiting publication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// The backend's handle for marking it published.
    pub id: String,
    /// The event.
    pub event: ReservationEvent,
}

/// The events recorded with each transition, waiting for the relay to publish them.
#[async_trait]
pub trait Outbox: Send + Sync {
    /// Up to `limit` unpublished events, oldest first.
    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError>;

    /// Marks these entries published so the relay moves past them.
    async fn mark_published(&self, ids: &[String]) -> Result<(), BackendError>;
}
