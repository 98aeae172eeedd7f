//! Seats together on DynamoDB. A new event's free list is kept best first (each seat ranked by
//! the event's order of preference) and a row's seats share one free-list shard, so a block
//! request reads whole rows from the front of one shard, page by page, only as far as the domain's
//! block search needs (`BlockSearch`: front and centre stops at the first row with a block that
//! strands nothing; by rank reads the whole shard). The domain then chooses the block from those
//! rows, and the claim writes it as any hold, conditioned on every seat.
//!
//! Concurrent claims of one process would all choose the same best block: the seats a claim is
//! writing are set aside (`seatclaim_core::step::Claiming`) until its write ends, so the others choose around them
//! (and write on condition that the seats set aside beside their block were taken). Claims of
//! other processes that choose the same block, or around the same free seats, lose the write
//! and try again without the seats they lost.

use std::collections::BTreeMap;

use crate::DynamoStore;
use crate::dynamo::keys::free_key;
use seatclaim_core::domain::{Best, BlockSearch, EventId, Seat};
use seatclaim_core::ports::BackendError;

/// Seats read per page of a free-list shard.
const PAGE: i32 = 250;

impl DynamoStore {
    /// The free seats a block request of `quantity` decides on: whole rows of one free-list
    /// shard, best first, as far as the block search needs; the next shards only while none
    /// has a block. Eventually consistent, as every free-list read.
    pub(crate) async fn free_rows(
        &self,
        event_id: &EventId,
        section: &str,
        quantity: u8,
    ) -> Result<Vec<Seat>, BackendError> {
        let best = self
            .event_meta(event_id)
            .await?
            .map_or(Best::FrontCenter, |meta| meta.best);
        let shards = self.free_shards(event_id, section).await?;
        let first = fastrand::u32(..shards);
        for step in 0..shards {
            let key = free_key(event_id, section, (first + step) % shards, shards);
            let (seats, found) = self.rows_of_shard(&key, section, quantity, best).await?;
            if found || step + 1 == shards {
                return Ok(seats);
            }
        }
        Ok(Vec::new())
    }

    /// The rows of one shard the search needs, and whether they hold a block.
    async fn rows_of_shard(
        &self,
        key: &str,
        section: &str,
        quantity: u8,
        best: Best,
    ) -> Result<(Vec<Seat>, bool), BackendError> {
        let mut search = BlockSearch::new(usize::from(quantity), best);
        let mut read: Vec<Seat> = Vec::new();
        let mut searched = 0;
        let mut start = None;
        loop {
            let (page, next) = self.free_page(key, section, PAGE, start).await?;
            read.extend(page);
            let upto = whole_upto(&read, searched, next.is_some(), best);
            if feed_rows(&mut search, &read[searched..upto]) {
                read.truncate(upto);
                return Ok((read, true));
            }
            searched = upto;
            if next.is_none() {
                let loose: Vec<&Seat> = read.iter().filter(|s| row_of(s).is_none()).collect();
                search.loose(&loose);
                return Ok((read, search.chosen().is_some()));
            }
            start = next;
        }
    }
}

/// Where the whole rows read so far end, from `searched` on: a row is whole once a seat of a
/// later row is read (the list is row by row, front and centre, then the seats without a row),
/// or the list has ended (`more` is false); by rank, only at the end.
fn whole_upto(read: &[Seat], searched: usize, more: bool, best: Best) -> usize {
    let whole = |seat: &Seat| match (more, best, read.last().map(row_of)) {
        (false, _, _) => true,
        (true, Best::Rank, _) | (true, _, None) => false,
        // Past the rows: every row is whole.
        (true, Best::FrontCenter, Some(None)) => true,
        (true, Best::FrontCenter, Some(Some(last))) => row_of(seat).is_some_and(|r| r < last),
    };
    searched + read[searched..].iter().take_while(|s| whole(s)).count()
}

fn row_of(seat: &Seat) -> Option<u32> {
    seat.place.and_then(|p| p.row)
}

/// Feeds whole rows to the search, in row order; `true` once no later row can change its choice.
fn feed_rows(search: &mut BlockSearch, seats: &[Seat]) -> bool {
    let mut rows: BTreeMap<u32, Vec<&Seat>> = BTreeMap::new();
    for seat in seats {
        if let Some(row) = row_of(seat) {
            rows.entry(row).or_default().push(seat);
        }
    }
    rows.values().any(|row| search.row(row))
}

#[cfg(test)]
mod tests {
    use super::*;
    use seatclaim_core::domain::SeatId;
    use seatclaim_core::domain::{Place, SeatState, Section};

    fn seat(row: Option<u32>, position: i64) -> Seat {
        Seat {
            seat_id: SeatId::parse(&format!("s-{}-{position}", row.map_or(0, |r| r + 1))).unwrap(),
            section: Section::parse("S").unwrap(),
            state: SeatState::Available,
            place: Some(Place {
                row,
                position,
                middle2: 0,
                rank: None,
                preference: 0,
            }),
        }
    }

    #[test]
    fn rows_are_whole_once_a_later_row_or_the_end_is_read() {
        let read = [seat(Some(0), 1), seat(Some(0), 2), seat(Some(1), 1)];
        // More to come: row 0 is whole, row 1 may go on.
        assert_eq!(whole_upto(&read, 0, true, Best::FrontCenter), 2);
        assert_eq!(whole_upto(&read, 2, true, Best::FrontCenter), 2);
        // The list has ended: every row is whole.
        assert_eq!(whole_upto(&read, 0, false, Best::FrontCenter), 3);
        // By rank rows interleave: nothing is whole before the end.
        assert_eq!(whole_upto(&read, 0, true, Best::Rank), 0);
        assert_eq!(whole_upto(&read, 0, false, Best::Rank), 3);
    }

    #[test]
    fn seats_without_a_row_come_after_every_whole_row() {
        let read = [seat(Some(0), 1), seat(Some(1), 1), seat(None, 0)];
        assert_eq!(whole_upto(&read, 0, true, Best::FrontCenter), 3);
    }
}
