//! The port of a store without interactive transactions, which the optimistic step runs over.

use async_trait::async_trait;
use jiff::Timestamp;

use super::{Claiming, Committed, Plan};
use crate::domain::{
    BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, ReservationEvent, SaleTerms, Seat,
    SeatId, Section,
};
use crate::ports::{BackendError, ClaimOutcome};

/// How another delivery decided a job, with a rejection's event still to publish and record.
pub type Decided = (ClaimOutcome, Option<ReservationEvent>);

/// What a store's count of a buyer's (or an access code's) seats in an event says, read
/// strongly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuyerCount {
    /// The seats counted (`None`: nothing counted yet).
    pub seats: Option<u32>,
    /// The buyer's holds the count still holds although they lapsed: they count until expired.
    pub lapsed: Vec<JobId>,
}

/// A store without interactive transactions (DynamoDB): the core's optimistic step
/// ([`super::optimistic`]) reads through it, decides, and hands it one [`Plan`] per
/// decision to run atomically. Reads may be stale where the method says so; the plan's
/// conditions, checked by the commit, are the authority.
#[async_trait]
pub trait Commit: Send + Sync {
    /// Runs `plan` atomically: every write applies or none does, and a write applies only if
    /// its condition holds. Which conditions failed comes back, not an error.
    async fn commit(&self, plan: &Plan) -> Result<Committed, BackendError>;

    /// The store's clock: the instant a settlement decides at, read after its reads.
    fn now(&self) -> Timestamp;

    /// The in-flight claims of this process, which its section claims choose around.
    fn claiming(&self) -> &Claiming;

    /// Gives this process's other claims the time their writes take.
    async fn pause(&self);

    /// The event's terms; `None` if there is no such event.
    async fn terms(&self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError>;

    /// The job, read strongly.
    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError>;

    /// How the job was decided by another delivery (a redelivery's or a duplicate's answer): a
    /// rejection whose event the deciding delivery may not have recorded comes with it.
    async fn decided(&self, job_id: JobId, now: Timestamp) -> Result<Decided, BackendError>;

    /// The seats the claim decides on: the requested ones, or the section's claimable ones in
    /// the store's order of preference (enough of them for the request). May be stale.
    async fn candidates(&self, intent: &Intent, now: Timestamp) -> Result<Vec<Seat>, BackendError>;

    /// The event's seats `seat_ids`, read strongly.
    async fn seats(
        &self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Seat>, BackendError>;

    /// Up to a round's worth of `section`'s claimable seats, best first, for its line. May be
    /// stale.
    async fn free_seats(
        &self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError>;

    /// Whether `section` may have a line: `false` means nobody ever joined it, and a join there
    /// forms it ([`super::Write::Join`]).
    async fn line_marked(
        &self,
        event_id: &EventId,
        section: &Section,
    ) -> Result<bool, BackendError>;

    /// Whether anyone has a place in `section`'s line. A store whose reads of a place and of
    /// its job are two requests answers from the places alone: a serving that commits between
    /// them must not make the line look empty to a claim, which would then take the seats the
    /// serving is handing out.
    async fn has_waiters(
        &self,
        event_id: &EventId,
        section: &Section,
    ) -> Result<bool, BackendError> {
        Ok(!self.waiting(event_id, section, 1).await?.is_empty())
    }

    /// The first `depth` WAITLISTED jobs of `section`'s line, in line order.
    async fn waiting(
        &self,
        event_id: &EventId,
        section: &Section,
        depth: usize,
    ) -> Result<Vec<Job>, BackendError>;

    /// The buyer's count in the event (see [`BuyerCount`]).
    async fn buyer_count(
        &self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<BuyerCount, BackendError>;

    /// The event's access code `hash` and its count (the seats held, waited for and sold under
    /// it, and the holds it still counts that lapsed by `now`), read strongly; `None` if the
    /// event has no such code.
    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<(CodeRecord, BuyerCount)>, BackendError>;

    /// The sections of every event whose waitlist is open, for the sweeper's serving.
    async fn open_lines(&self) -> Result<Vec<(EventId, Vec<Section>)>, BackendError>;
}
