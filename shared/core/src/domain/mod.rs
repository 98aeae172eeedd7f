//! The pure heart of seatclaim: seats, jobs, intents and the rules that move them between states.
//!
//! Nothing here does I/O or knows about time beyond the `now` it is handed, so every rule is
//! decided here and merely *executed* by an adapter, and every rule is tested without a database.

mod audit;
mod capacity;
mod channels;
mod claim;
mod codes;
mod event;
mod ids;
mod intent;
mod job;
mod layout;
mod line;
mod money;
mod opening;
mod reapply;
mod reason;
mod reservation_event;
mod retention;
mod seat;
mod seat_limit;
mod terms;
mod transition;
mod waitlist;

pub use audit::{AuditLimits, Violation, audit, sold_twice};
pub use capacity::{SectionCapacity, capacities};
pub use channels::{Channel, ChannelSpec, Channels, MAX_CHANNELS};
pub use claim::{ClaimDecision, decide_claim};
pub use codes::{
    AccessCode, CodeHash, CodeKey, CodeRecord, CodeTerms, MAX_CODES_PER_REQUEST,
    MAX_SEATS_PER_CODE, unknown_code,
};
pub use event::{EventSpec, MAX_SEATS_PER_EVENT, NewEvent, SeatSpec, SectionSpec};
pub use ids::{BuyerId, ChannelName, EventId, IdempotencyKey, JobId, SeatId, Section};
pub use intent::{Access, Intent, MAX_SEATS_PER_INTENT, SeatRequest};
pub use job::{Job, JobAction, JobConflict, JobStatus, Settlement};
pub use layout::{
    Best, BlockSearch, Seating, best_first, block_guards, choose_block, no_block_reason, places,
};
pub use line::{DecisionRate, Line, QueuePosition};
pub use money::{Currency, MAX_PRICE, Money, Payment, Prices, Tender};
pub use opening::{Draw, SALE_OPENED, SaleOpened, Seed, Start, digest, shuffle};
pub use reapply::{NotReapplied, Reapplied, reapply};
pub use reason::{
    REASON_EXPIRED, REASON_RESERVED, REASON_UNAVAILABLE, REASON_WAITLIST_CLOSED, Reason, ReasonCode,
};
pub use reservation_event::{
    EVENT_SOURCE, Notice, PAYMENT_UNMATCHED, PaymentUnmatched, ReservationEvent,
};
pub use retention::{DEFAULT_RETENTION_DAYS, MIN_RETENTION_DAYS, Retention};
pub use seat::{Place, Seat, SeatState, SeatView};
pub use seat_limit::{DEFAULT_SEAT_LIMIT, MAX_SEAT_LIMIT, SeatLimit};
pub use terms::{HoldExtension, MAX_HOLD_EXTENSIONS, SaleTerms, Waitlist};
pub use transition::{Closure, Settling, Transition};
pub use waitlist::{HandOut, hand_out, line_place};

/// A client-supplied value broke a rule; `field` names it so the API can say exactly what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {message}")]
pub struct ValidationError {
    /// The request field (or header) at fault, as the client spelled it.
    pub field: &'static str,
    /// What is wrong with it, phrased to follow the field name.
    pub message: String,
}

impl ValidationError {
    /// Builds the error; kept short because validation code calls it on every rule.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod model_tests;
