//! The waitlist of a section: on an event that has one, a section request that finds too few
//! seats waits in line instead of being rejected, and seats that come free again go to the line
//! first fit in line order: to the earliest waiter they can serve. A waiter they cannot serve
//! (it wants more seats, or more together, than came free) keeps its place and gets the next
//! release that fits it, so seats never sit unsold while a waiter they fit waits. Exact requests
//! for the seats of a section with a line are refused, so nobody passes the line that way.

use std::collections::HashMap;

use jiff::Timestamp;

use super::{BuyerId, ClaimDecision, Job, SaleTerms, Seat, SeatId, Transition};

/// A waiting job's place in its section's line, as a key that sorts in line order: the order
/// jobs were admitted in, except that a sale's pre-queue (every job of it admitted before the
/// opening) waits at the opening in the order its draw gave (`drawn`: the sale's start and the
/// job's place in the draw), ahead of anyone admitted at or after the start. Arriving early buys
/// no better place in the line than it buys a seat.
#[must_use]
pub fn line_place(job: &Job, drawn: Option<(Timestamp, u64)>) -> String {
    match drawn {
        // '!' sorts before '#': at the start's millisecond the draw comes first.
        Some((opens_at, place)) => format!("{:013}!{place:010}", opens_at.as_millisecond()),
        None => format!("{:013}#{}", job.accepted_at.as_millisecond(), job.job_id),
    }
}

/// One step of a hand-out: the job's move off the line, and the seats it holds (none for a
/// rejection), which the adapter writes under the claim's condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandOut {
    /// WAITLISTED -> HELD, or -> REJECTED.
    pub transition: Transition,
    /// The seats held, empty for a rejection.
    pub seats: Vec<SeatId>,
}

/// Hands `free` seats of a section to its line `waiting` (WAITLISTED jobs, in line order), at
/// `now` under `terms`, first fit: each waiter in turn is claimed as any claim is, all or none
/// with the buyer's seat limit counted (`counted`: the seats a buyer counts now, their waiting
/// jobs' quantities among them); one its buyer's limit no longer allows is rejected; one the
/// seats left cannot serve keeps its place and the next is tried, until no seat is left.
///
/// A waiter's own quantity is already in its buyer's count, so it is taken out before the
/// waiter is checked, and a hold from the line adds nothing (it replaces the wait it counted);
/// a waiter rejected here gives its quantity back for the buyer's later waiters.
pub fn hand_out(
    waiting: &[Job],
    free: &[Seat],
    terms: &SaleTerms,
    now: Timestamp,
    mut counted: impl FnMut(&BuyerId) -> u32,
) -> Vec<HandOut> {
    let mut free = free.to_vec();
    let mut given_back: HashMap<&BuyerId, u32> = HashMap::new();
    let mut steps = Vec::new();
    for job in waiting {
        if free.is_empty() {
            break;
        }
        let quantity = job.request.quantity();
        let own = u32::try_from(quantity).unwrap_or(u32::MAX);
        if let Some(limit) = terms.limit {
            let back = given_back.get(&job.buyer_id).copied().unwrap_or(0);
            let has = counted(&job.buyer_id)
                .saturating_sub(own)
                .saturating_sub(back);
            if !limit.admits(has, quantity) {
                if let Ok(transition) = job.reject_waiting(&limit.reason(), now) {
                    *given_back.entry(&job.buyer_id).or_default() += own;
                    steps.push(HandOut {
                        transition,
                        seats: Vec::new(),
                    });
                }
                continue;
            }
        }
        let ClaimDecision::Hold {
            seat_ids,
            until,
            amount_due,
            ..
        } = terms.decide_freely(&job.request, &free, now)
        else {
            continue;
        };
        let Ok(transition) = job.hold_waiting(seat_ids.clone(), until, amount_due, now) else {
            continue;
        };
        free.retain(|seat| !seat_ids.contains(&seat.seat_id));
        steps.push(HandOut {
            transition,
            seats: seat_ids,
        });
    }
    steps
}

#[cfg(test)]
mod tests;
