use async_trait::async_trait;

use super::BackendError;
use crate::domain::ReservationEvent;

/// The handle of an outbox entry, for marking it published.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum OutboxId {
    /// The DynamoDB outbox item's key.
    Dynamo(String),
    /// The embedded outbox row's sequence number.
    Embedded(i64),
}

/// One recorded event awaiting publication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxEntry {
    /// The backend's handle for marking it published.
    pub id: OutboxId,
    /// The event.
    pub event: ReservationEvent,
}

/// The events recorded with each transition, waiting for the relay to publish them.
#[async_trait]
pub trait Outbox: Send + Sync {
    /// Up to `limit` unpublished events, oldest first.
    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError>;

    /// Marks these entries published so the relay moves past them.
    async fn mark_published(&self, ids: &[OutboxId]) -> Result<(), BackendError>;
}
