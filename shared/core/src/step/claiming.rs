//! The seats this process's section claims are writing now. Concurrent claims of one process
//! would all choose the same best seats and all but one would lose the write: each sets the
//! seats it chose aside until its write ends, so the others choose around them. Claims of other
//! processes that choose the same seats lose the write and choose again without them.

use std::collections::HashSet;
use std::sync::Mutex;

use jiff::Timestamp;

use crate::domain::{EventId, Seat, SeatId, block_guards};

/// The seats this process's claims are writing now, by event and seat.
#[derive(Debug, Default)]
pub struct Claiming(Mutex<HashSet<(EventId, SeatId)>>);

/// Seats set aside for one claim's write, put back when it is dropped.
pub struct SetAside<'a> {
    claiming: &'a Claiming,
    seats: Vec<(EventId, SeatId)>,
}

impl Drop for SetAside<'_> {
    fn drop(&mut self) {
        let mut claiming = self.claiming.lock();
        for seat in &self.seats {
            claiming.remove(seat);
        }
    }
}

impl Claiming {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<(EventId, SeatId)>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Decides on the candidates that no other claim of this process is writing, and sets the
    /// seats `decide` chose aside for this one (the choice and the setting aside are one step).
    /// `None` when `decide` chose nothing while other claims' seats were left out: their writes
    /// may yet fail, so this decision is not final and the claim looks again.
    ///
    /// For a `block` (seats together), also the seats set aside for other claims beside it (the
    /// domain's `block_guards` over every candidate): the choice judged them taken, so the hold
    /// is written on condition that they are (those claims committed), lest a write of theirs
    /// that fails leave a single seat between the two blocks.
    pub fn choose<T>(
        &self,
        event_id: &EventId,
        (candidates, block, now): (Vec<Seat>, bool, Timestamp),
        decide: impl FnOnce(&[Seat]) -> (T, Vec<SeatId>),
    ) -> Option<(T, SetAside<'_>, Vec<SeatId>)> {
        let mut claiming = self.lock();
        let read = candidates.len();
        let aside = |seat: &Seat| claiming.contains(&(event_id.clone(), seat.seat_id.clone()));
        let (others, free): (Vec<Seat>, Vec<Seat>) = candidates.into_iter().partition(aside);
        let (decided, chosen) = decide(&free);
        if chosen.is_empty() && free.len() < read {
            return None;
        }
        let awaited = if block {
            let claimable: Vec<&Seat> = free
                .iter()
                .chain(&others)
                .filter(|seat| seat.state.is_claimable(now))
                .collect();
            block_guards(&claimable, &chosen)
                .into_iter()
                .filter(|seat| others.iter().any(|other| &other.seat_id == seat))
                .collect()
        } else {
            Vec::new()
        };
        let seats: Vec<(EventId, SeatId)> = chosen
            .into_iter()
            .map(|seat| (event_id.clone(), seat))
            .collect();
        claiming.extend(seats.iter().cloned());
        drop(claiming);
        let set_aside = SetAside {
            claiming: self,
            seats,
        };
        Some((decided, set_aside, awaited))
    }
}
