use async_trait::async_trait;

use super::BackendError;
use jiff::{SignedDuration, Timestamp};

use crate::domain::{
    EventId, HoldExtension, NewEvent, Prices, SaleOpened, Seat, SeatLimit, Waitlist,
};

/// What creating an event did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventCreation {
    /// Created with this many seats.
    Created(usize),
    /// An event with that id exists already; nothing was changed.
    AlreadyExists,
}

/// What the event list shows of an event, besides its seats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventInfo {
    /// The event's id.
    pub event_id: EventId,
    /// Its human name.
    pub name: String,
    /// How long its holds last.
    pub hold: SignedDuration,
    /// Its per-buyer seat limit, if any.
    pub max_seats_per_buyer: Option<SeatLimit>,
    /// What its seats cost, for buyers to see before they reserve.
    pub prices: Prices,
    /// How its holds may be extended.
    pub extension: HoldExtension,
    /// Whether its sections keep lines.
    pub waitlist: Waitlist,
    /// When its sale starts, if announced.
    pub sale_starts_at: Option<Timestamp>,
}

/// Where an event's opening stands, for operators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// The announced start.
    pub sale_starts_at: Timestamp,
    /// Intents admitted before it.
    pub prequeued: u64,
    /// The draw, once made.
    pub draw: Option<SaleOpened>,
}

/// Events and their seats, for organisers and the advisory seat map.
#[async_trait]
pub trait Catalog: Send + Sync {
    /// Stores a new event with all its seats AVAILABLE, atomically: a half-created event is never visible.
    async fn create_event(&self, event: &NewEvent) -> Result<EventCreation, BackendError>;

    /// Every seat of the event in the organiser's order, or `None` for an unknown event. Advisory:
    /// it may be stale by the time the buyer acts, which is why claims re-check in the inventory.
    async fn seat_map(&self, event_id: &EventId) -> Result<Option<Vec<Seat>>, BackendError>;

    /// Every event that is ready to sell, oldest first where the backend knows the order.
    /// Advisory, like the seat map.
    async fn events(&self) -> Result<Vec<EventInfo>, BackendError>;

    /// Where the event's opening stands: `None` for an unknown event, or one whose sale was
    /// open from the start.
    async fn opening(&self, event_id: &EventId) -> Result<Option<Opening>, BackendError>;

    /// The openings drawn and not yet published, oldest first: the relay publishes each and
    /// then marks it with [`Catalog::opening_published`].
    async fn unpublished_openings(&self) -> Result<Vec<SaleOpened>, BackendError>;

    /// Marks an event's opening published.
    async fn opening_published(&self, event_id: &EventId) -> Result<(), BackendError>;

    /// Succeeds when the backend answers; backs `/readyz`.
    async fn ping(&self) -> Result<(), BackendError>;
}
