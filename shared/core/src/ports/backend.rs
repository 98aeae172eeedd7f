//! The bundle of ports a process works with.

use std::sync::Arc;

use super::{Admissions, Catalog, Clock, EventPublisher, IntentQueue, Inventory, Jobs, Outbox};

/// Every port, behind trait objects so the API and the worker never name a concrete backend.
/// Cloning is cheap: the ports are shared.
#[derive(Clone)]
pub struct Backend {
    /// Events and the seat map.
    pub catalog: Arc<dyn Catalog>,
    /// The API's one write per reservation.
    pub admissions: Arc<dyn Admissions>,
    /// Job reads and failures.
    pub jobs: Arc<dyn Jobs>,
    /// The seat authority.
    pub inventory: Arc<dyn Inventory>,
    /// Recorded events awaiting the relay.
    pub outbox: Arc<dyn Outbox>,
    /// The intent queue.
    pub queue: Arc<dyn IntentQueue>,
    /// Where the relay publishes events.
    pub publisher: Arc<dyn EventPublisher>,
    /// "Now", for every decision.
    pub clock: Arc<dyn Clock>,
}
