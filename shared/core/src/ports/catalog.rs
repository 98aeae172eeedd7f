use async_trait::async_trait;

use super::BackendError;
use jiff::{SignedDuration, Timestamp};

use crate::domain::{
    ChannelName, Channels, CodeHash, CodeRecord, EventId, HoldExtension, NewEvent, Prices,
    SaleOpened, Seat, SeatLimit, Waitlist,
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
    /// Its sales channels and the sections set aside for them.
    pub channels: Channels,
}

/// What creating access codes did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodesCreation {
    /// Every code was stored.
    Created(usize),
    /// There is no such event.
    NoSuchEvent,
    /// The event has no such channel.
    NoSuchChannel,
    /// One of the codes exists already for the event; none was stored.
    Exists,
}

/// A code and what it has been used for, for an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeStanding {
    /// The code as stored.
    pub record: CodeRecord,
    /// Seats held under it (live holds, and the quantities of its jobs waiting in line).
    pub held: u32,
    /// Seats sold under it.
    pub sold: u32,
}

/// What an operator's summary of an event counts besides its seats (whose states come from the
/// seat map's snapshot): read from what the store keeps per code, per line and per hold
/// deadline, never from every seat.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventTallies {
    /// Access codes created for the event, revoked ones included.
    pub codes_issued: u64,
    /// Seats held under its codes, or waited for in a line, not sold.
    pub code_seats_held: u64,
    /// Seats sold under its codes.
    pub code_seats_sold: u64,
    /// Jobs waiting in its sections' lines.
    pub waitlisted: u64,
    /// Live holds whose deadline comes before the summary's horizon.
    pub holds_expiring: u64,
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

    /// Where an opening of the event stands: its own (`channel` `None`) or a channel's with a
    /// start of its own. `None` for an unknown event or channel, or a sale open from the start.
    async fn opening(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<Option<Opening>, BackendError>;

    /// The openings drawn and not yet published, oldest first: the relay publishes each and
    /// then marks it with [`Catalog::opening_published`].
    async fn unpublished_openings(&self) -> Result<Vec<SaleOpened>, BackendError>;

    /// Marks an opening published: the event's own (`channel` `None`) or a channel's.
    async fn opening_published(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<(), BackendError>;

    /// Stores an event's new access codes (their hashes and terms), all or none: none if the
    /// event or the codes' channel does not exist or any code exists already.
    async fn create_codes(
        &self,
        event_id: &EventId,
        codes: &[CodeRecord],
    ) -> Result<CodesCreation, BackendError>;

    /// The event's code `hash` and the seats held and sold under it at `now`; `None` if the
    /// event has no such code.
    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<CodeStanding>, BackendError>;

    /// Revokes the event's code `hash`: no claim is admitted under it from then on (holds made
    /// with it stay until decided). `false` if the event has no such code.
    async fn revoke_code(&self, event_id: &EventId, hash: &CodeHash) -> Result<bool, BackendError>;

    /// The event's tallies at `now`, counting the holds that lapse after `now` and by
    /// `horizon`; `None` for an unknown event.
    async fn tallies(
        &self,
        event_id: &EventId,
        now: Timestamp,
        horizon: Timestamp,
    ) -> Result<Option<EventTallies>, BackendError>;

    /// Succeeds when the backend answers; backs `/readyz`.
    async fn ping(&self) -> Result<(), BackendError>;
}
