use async_trait::async_trait;
use jiff::Timestamp;

use super::BackendError;
use crate::domain::ReservationEvent;

/// The handle of an outbox entry, for marking it published. Opaque: each outbox writes its own
/// (DynamoDB's item key, the embedded row's sequence number) and refuses one it cannot read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OutboxId(pub String);

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
    /// Up to `limit` unpublished events for this relay to publish now, oldest first (a job's
    /// events always in the order they happened). A backend that runs several relays side by
    /// side hands each its own share (DynamoDB: the shards it leases until it marks the page).
    /// One relay loop per backend instance: the instance is the relay.
    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError>;

    /// Marks these entries published so no relay publishes them again.
    async fn mark_published(&self, entries: &[OutboxEntry]) -> Result<(), BackendError>;

    /// Records events decided without an entry ([`crate::ports::Claims::unrecorded`]): each as
    /// published (the job's history), except those at the positions in `refused`, which the
    /// publisher did not take and which wait for the relay. Recording an event again replaces
    /// its record.
    async fn record(
        &self,
        events: &[ReservationEvent],
        refused: &[usize],
    ) -> Result<(), BackendError>;

    /// When the oldest unpublished event happened, over every relay's share: the audit's
    /// measure of a stuck relay.
    async fn oldest_unpublished(&self) -> Result<Option<Timestamp>, BackendError>;

    /// Whether a page of [`Outbox::unpublished`] shorter than its limit means the outbox is
    /// drained: true where one relay reads the whole outbox in order (SQLite), so the relay may
    /// rest after it and publish what follows in larger pages; false where a page is one relay's
    /// share of some shards (DynamoDB) and more may wait in the others.
    fn short_page_drains(&self) -> bool {
        false
    }
}
