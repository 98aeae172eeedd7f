//! A plan: the conditional writes of one claim, settlement or hand-out, each with the condition
//! the domain names, for a store's [`Commit`](super::Commit) to run atomically. The core
//! builds it ([`super::optimistic`]) and reads which condition failed; a store only encodes it
//! (DynamoDB: one `TransactWriteItems`; the memory store: under its lock).

use jiff::Timestamp;

use crate::domain::{Job, ReservationEvent, SeatId, Transition};

/// What a seat must be for a plan's write to it to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatCondition {
    /// AVAILABLE, or HELD past its deadline at the plan's `now`.
    Claimable,
    /// Not claimable at the plan's `now`: another claim holds it (a block's neighbour that
    /// another claim of this process was writing).
    Taken,
    /// HELD by the plan's job; with `until`, until exactly then (racing extensions add up to no
    /// more than one).
    HeldBy {
        /// The deadline the seat must still have.
        until: Option<Timestamp>,
    },
}

/// What a plan's write does to a seat once its condition holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatChange {
    /// Nothing: the write is a check of its condition alone.
    Check,
    /// HELD by the plan's job until `until`.
    Hold {
        /// The hold's deadline.
        until: Timestamp,
    },
    /// SOLD to the job holding it.
    Sell,
    /// AVAILABLE again.
    Release,
    /// Held longer, until `until`.
    Extend {
        /// The new deadline.
        until: Timestamp,
    },
}

/// How a plan moves the buyer's seat count, where a store keeps one (DynamoDB's count item);
/// a store that counts the buyer's jobs inside its step checks the conditions on that count
/// and writes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CountChange {
    /// A hold of `seats` until `until`, if the buyer counts at most `ceiling` seats before it.
    Hold {
        /// Seats the hold adds.
        seats: u32,
        /// The hold's deadline, remembered for an expiry on the buyer's behalf.
        until: Timestamp,
        /// The most seats the buyer may count before it.
        ceiling: u32,
    },
    /// A wait in line for `seats`, if the buyer counts at most `ceiling` seats before it.
    Wait {
        /// Seats the wait adds.
        seats: u32,
        /// The most seats the buyer may count before it.
        ceiling: u32,
    },
    /// The counted wait becomes a hold until `until`, if the count remembers the wait (a job
    /// that joined before waits counted does not: it is counted as a [`Self::Hold`] instead).
    Served {
        /// The hold's deadline.
        until: Timestamp,
    },
    /// A wait that ended without seats gives its quantity back.
    Unwait,
    /// A sale keeps its `seats` counted (a code's count also counts them as sold).
    Sold {
        /// Seats sold.
        seats: u32,
    },
    /// A release gives `seats` back.
    Released {
        /// Seats given back.
        seats: u32,
    },
    /// An extension moves the remembered deadline.
    Extended {
        /// The new deadline.
        until: Timestamp,
    },
}

/// One write of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// A seat's change, under its condition.
    Seat {
        /// The seat.
        seat_id: SeatId,
        /// What it becomes.
        change: SeatChange,
        /// What it must be.
        condition: SeatCondition,
    },
    /// The job's transition, its history and its event, on condition that the job is still in
    /// the status it moved from.
    Job(Box<Transition>),
    /// The buyer's count (conditional for a hold, a wait and a serving; see [`CountChange`]).
    Count(CountChange),
    /// The count of the access code the job was admitted with, as the buyer's (its ceiling
    /// the code's `max_seats` less the seats wanted); a hold or a wait also on condition that
    /// the code is not revoked, so a revocation racing a claim is never passed.
    CodeCount(CountChange),
    /// The job's access code bound to the job's buyer, on condition that it is unbound or
    /// bound to that buyer already.
    BindCode,
    /// The job's place at the end of its section's line; `forms` when the section had no line
    /// as the claim read it (the store marks the line as existing).
    Join {
        /// Whether this join forms the line.
        forms: bool,
    },
    /// A check that the event's waitlist is still open.
    LineOpen,
    /// The deletion of the job's place in its line.
    Leave,
}

/// The writes of one decision, all or none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The job the plan moves, as read before it (its event, buyer and line).
    pub job: Job,
    /// The instant the conditions are judged at.
    pub now: Timestamp,
    /// The writes, in order; a failed condition is named by its index here.
    pub writes: Vec<Write>,
}

impl Plan {
    /// A plan of `writes` for `job` at `now`.
    #[must_use]
    pub fn new(job: &Job, now: Timestamp, writes: Vec<Write>) -> Self {
        Self {
            job: job.clone(),
            now,
            writes,
        }
    }

    /// Whether the write at `index` is of the kind `kind` says.
    fn is(&self, index: usize, kind: impl Fn(&Write) -> bool) -> bool {
        self.writes.get(index).is_some_and(kind)
    }
}

/// How a store ran a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Committed {
    /// Every write applied. The event the store left out of its outbox, if any: DynamoDB writes
    /// a claim's rejection as the job's update alone and hands its event back to be published
    /// and recorded (`Claims::unrecorded`).
    Written(Option<ReservationEvent>),
    /// Nothing applied: the indexes of the writes whose condition failed.
    Failed(Vec<usize>),
}

/// Which conditions of a plan failed, by kind, for the step to decide what a lost race means.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Misses {
    /// The job had moved on: another delivery or settlement decided it.
    pub job: bool,
    /// The buyer's count left no room.
    pub count: bool,
    /// The access code's count left no room.
    pub code_count: bool,
    /// The access code was bound to another buyer meanwhile.
    pub code_bound: bool,
    /// The event's waitlist closed.
    pub line_closed: bool,
    /// Seats that were to be claimable (taken or held) and were not.
    pub seats: Vec<SeatId>,
    /// Seats that were to be taken by another claim and were not (yet).
    pub untaken: Vec<SeatId>,
}

impl Misses {
    /// The failed conditions `failed` of `plan`, by kind.
    #[must_use]
    pub fn of(plan: &Plan, failed: &[usize]) -> Self {
        let mut misses = Self::default();
        for &index in failed {
            misses.job |= plan.is(index, |w| matches!(w, Write::Job(_)));
            misses.count |= plan.is(index, |w| matches!(w, Write::Count(_)));
            misses.code_count |= plan.is(index, |w| matches!(w, Write::CodeCount(_)));
            misses.code_bound |= plan.is(index, |w| matches!(w, Write::BindCode));
            misses.line_closed |= plan.is(index, |w| matches!(w, Write::LineOpen));
            if let Some(Write::Seat {
                seat_id, condition, ..
            }) = plan.writes.get(index)
            {
                match condition {
                    SeatCondition::Taken => misses.untaken.push(seat_id.clone()),
                    _ => misses.seats.push(seat_id.clone()),
                }
            }
        }
        misses
    }
}
