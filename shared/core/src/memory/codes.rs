//! Access codes in memory: each event's codes by hash, and their seats counted from the jobs
//! admitted with them, as SQLite counts them in its transaction.

use jiff::Timestamp;

use super::state::State;
use crate::domain::{CodeHash, CodeRecord, EventId, JobStatus};
use crate::ports::{CodeStanding, CodesCreation, EventTallies};

/// Stores `codes` for the event, all or none.
pub(super) fn create(state: &mut State, event_id: &EventId, codes: &[CodeRecord]) -> CodesCreation {
    let Some(event) = state.events.get(event_id) else {
        return CodesCreation::NoSuchEvent;
    };
    let channels = &event.channels;
    if codes
        .iter()
        .any(|code| channels.get(&code.terms.channel).is_none())
    {
        return CodesCreation::NoSuchChannel;
    }
    let key = |code: &CodeRecord| (event_id.clone(), code.hash.clone());
    let mut fresh = std::collections::BTreeSet::new();
    if codes
        .iter()
        .any(|code| state.codes.contains_key(&key(code)) || !fresh.insert(key(code)))
    {
        return CodesCreation::Exists;
    }
    for code in codes {
        state.codes.insert(key(code), code.clone());
    }
    CodesCreation::Created(codes.len())
}

/// The seats the code counts at `now` (see `Job::counted_seats`).
pub(super) fn used(state: &State, event_id: &EventId, hash: &CodeHash, now: Timestamp) -> u32 {
    let seats: usize = (state.jobs())
        .filter(|job| &job.event_id == event_id && job.code() == Some(hash))
        .map(|job| job.counted_seats(now))
        .sum();
    u32::try_from(seats).unwrap_or(u32::MAX)
}

/// The code with its seats held (and waited for) and sold at `now`.
pub(super) fn standing(
    state: &State,
    event_id: &EventId,
    hash: &CodeHash,
    now: Timestamp,
) -> Option<CodeStanding> {
    let record = state.codes.get(&(event_id.clone(), hash.clone()))?.clone();
    let used = used(state, event_id, hash, now);
    let sold: usize = (state.jobs())
        .filter(|job| &job.event_id == event_id && job.code() == Some(hash))
        .filter(|job| job.status == JobStatus::Sold)
        .map(|job| job.seat_ids.len())
        .sum();
    let sold = u32::try_from(sold).unwrap_or(u32::MAX);
    Some(CodeStanding {
        record,
        held: used.saturating_sub(sold),
        sold,
    })
}

/// The event's tallies: its codes and their seats, its lines, and its holds lapsing in
/// `(now, horizon]`.
pub(super) fn tallies(
    state: &State,
    event_id: &EventId,
    now: Timestamp,
    horizon: Timestamp,
) -> EventTallies {
    let mut tallies = EventTallies::default();
    for (event, hash) in state.codes.keys() {
        if event == event_id {
            let standing = standing(state, event_id, hash, now);
            tallies.codes_issued += 1;
            tallies.code_seats_held += standing.as_ref().map_or(0, |s| u64::from(s.held));
            tallies.code_seats_sold += standing.as_ref().map_or(0, |s| u64::from(s.sold));
        }
    }
    for job in state.jobs().filter(|job| &job.event_id == event_id) {
        match job.status {
            JobStatus::Waitlisted => tallies.waitlisted += 1,
            JobStatus::Held
                if job
                    .hold_expires_at
                    .is_some_and(|at| now < at && at <= horizon) =>
            {
                tallies.holds_expiring += 1;
            }
            _ => {}
        }
    }
    tallies
}
