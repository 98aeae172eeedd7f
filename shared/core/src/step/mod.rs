//! The claim and settle algorithm, written once: what a store does inside its own atomic step (a
//! SQLite write transaction, the memory store's lock) to decide a claim, settle a hold and hand
//! seats given back to their section's line. The domain decides; a [`StepStore`] reads and
//! writes, each write under the condition the domain names. The embedded backend ships it and the
//! simulation runs it on the memory store, so the simulation tests the code that ships.
//!
//! DynamoDB has no interactive transaction to run it in: [`optimistic`] decides on reads that
//! may be stale and hands the store a [`Plan`] per decision, which its
//! [`Commit`] port runs atomically (one `TransactWriteItems`).

mod claim;
mod claiming;
mod commit;
pub mod optimistic;
mod plan;
mod settle;
mod waitlist;

use jiff::Timestamp;

use crate::domain::{
    Best, BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, SaleTerms, Seat, SeatId,
    Section, Settlement, Transition,
};
use crate::ports::BackendError;

pub use claim::{claim_one, decide_pending};
pub use claiming::{Claiming, SetAside};
pub use commit::{BuyerCount, Commit, Decided};
pub use plan::{Committed, CountChange, Misses, Plan, SeatChange, SeatCondition, Write};
pub use settle::settle_one;
pub use waitlist::{serve_after, serve_released};

/// The reads and conditional writes of one atomic step of a store. Each runs inside the step:
/// what it reads cannot change before the step's writes, and a failed step writes nothing.
pub trait StepStore {
    /// The job, as stored.
    fn job(&mut self, job_id: JobId) -> Result<Option<Job>, BackendError>;

    /// The event's terms; `None` if there is no such event.
    fn terms(&mut self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError>;

    /// The seats `buyer` counts against the event's limit at `now`: SOLD, HELD not lapsed, and
    /// the quantities WAITLISTED jobs wait for.
    fn counted_seats(
        &mut self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<u32, BackendError>;

    /// The seats the claim's decision needs: the requested ones that exist; for a section, its
    /// free seats and then its lapsed holds in the event's order of preference (`best`), enough
    /// of each to satisfy the request (every one for a block of seats together).
    fn candidate_seats(
        &mut self,
        intent: &Intent,
        best: Best,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError>;

    /// The event's access code `hash`, as stored; `None` if the event has no such code.
    fn code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
    ) -> Result<Option<CodeRecord>, BackendError>;

    /// The seats the code counts at `now`: its jobs' SOLD seats, live holds, and the quantities
    /// its WAITLISTED jobs wait for.
    fn code_used(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<u32, BackendError>;

    /// Binds the code to `buyer`, its first buyer (a code made with `bind`).
    fn bind_code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        buyer: &BuyerId,
    ) -> Result<(), BackendError>;

    /// The events that set seats aside for a channel, whose releases the sweeper serves.
    fn channel_events(&mut self) -> Result<Vec<EventId>, BackendError>;

    /// Whether `section` of the event has a line (WAITLISTED jobs).
    fn has_line(&mut self, event_id: &EventId, section: &Section) -> Result<bool, BackendError>;

    /// The claim's conditional write: every seat moves to HELD by `job` until `until` only if
    /// each is still claimable at `now` (AVAILABLE, or held past its deadline); if any is not,
    /// none moves and the answer is `false`.
    fn hold_seats(
        &mut self,
        job: &Job,
        seat_ids: &[SeatId],
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, BackendError>;

    /// Moves the seats `job` holds as `settlement` says (sold, released, or held longer), each
    /// write conditioned on the seat being held by this job (and, for an extension, until the
    /// old deadline); returns how many seats moved.
    fn settle_seats(&mut self, job: &Job, settlement: Settlement) -> Result<usize, BackendError>;

    /// Stores the transition's job, its history and its event in the outbox, on the condition
    /// that the job is still in the status it moved from.
    fn save_transition(&mut self, transition: &Transition) -> Result<(), BackendError>;

    /// The sections of the event's seats `seat_ids`.
    fn sections_of(
        &mut self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Section>, BackendError>;

    /// Up to `size` WAITLISTED jobs of `section` in admission order, after the job `after`.
    fn line_page(
        &mut self,
        event_id: &EventId,
        section: &Section,
        after: Option<JobId>,
        size: usize,
    ) -> Result<Vec<Job>, BackendError>;

    /// The claimable seats of `section`: free ones in the event's order, then lapsed holds.
    fn claimable(
        &mut self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError>;
}
