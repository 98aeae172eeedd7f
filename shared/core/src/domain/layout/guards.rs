//! The seats a block's strand judgement rests on. A block is chosen because it strands no single
//! free seat (or none could avoid it), judged on the seats beside it as they were read. A store
//! whose claims run at once (DynamoDB: each process decides on its own read) writes those seats
//! as conditions of the hold, so the block that commits strands no more than a claim made alone
//! would: two claims that chose around the same free seats cannot both commit.

use super::super::{Seat, SeatId};

/// How far beside a block its strand judgement looks: the seat next to it and the one beyond.
const BESIDE: i64 = 2;

/// The claimable seats (of `claimable`, as the choice read them) within [`BESIDE`] positions of
/// `block` in its row: the hold is written on condition that each is still claimable. Empty for
/// seats without a row, whose adjacency no rule judges.
#[must_use]
pub fn block_guards(claimable: &[&Seat], block: &[SeatId]) -> Vec<SeatId> {
    let placed: Vec<(u32, i64)> = claimable
        .iter()
        .filter(|seat| block.contains(&seat.seat_id))
        .filter_map(|seat| Some((seat.place?.row?, seat.place?.position)))
        .collect();
    let Some(&(row, _)) = placed.first() else {
        return Vec::new();
    };
    let first = placed.iter().map(|(_, p)| *p).min().unwrap_or(0);
    let last = placed.iter().map(|(_, p)| *p).max().unwrap_or(0);
    let beside = |position: i64| {
        (first - BESIDE..first).contains(&position)
            || (last + 1..=last + BESIDE).contains(&position)
    };
    claimable
        .iter()
        .filter(|seat| !block.contains(&seat.seat_id))
        .filter(|seat| {
            seat.place
                .is_some_and(|p| p.row == Some(row) && beside(p.position))
        })
        .map(|seat| seat.seat_id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Place, SeatState, Section};

    fn seat(row: u32, position: i64) -> Seat {
        Seat {
            seat_id: SeatId::parse(&format!("S-{}-{position}", row + 1)).unwrap(),
            section: Section::parse("S").unwrap(),
            state: SeatState::Available,
            place: Some(Place {
                row: Some(row),
                position,
                middle2: 0,
                rank: None,
                preference: 0,
            }),
        }
    }

    fn ids(seats: &[Seat]) -> Vec<SeatId> {
        seats.iter().map(|s| s.seat_id.clone()).collect()
    }

    #[test]
    fn the_guards_are_the_free_seats_two_either_side_in_the_blocks_row() {
        // Row 0: 1 2 _ 4 5 6 7 8 9; row 1: 5 (beside by position, in another row).
        let row: Vec<Seat> = [1, 2, 4, 5, 6, 7, 8, 9].map(|p| seat(0, p)).into();
        let other = seat(1, 5);
        let claimable: Vec<&Seat> = row.iter().chain([&other]).collect();
        let block = ids(&row[3..5]); // seats 5 and 6
        let guards = block_guards(&claimable, &block);
        assert_eq!(guards, ids(&[seat(0, 4), seat(0, 7), seat(0, 8)]));
    }

    #[test]
    fn seats_without_a_row_have_no_guards() {
        let mut loose = seat(0, 1);
        loose.place = None;
        let beside = seat(0, 2);
        let claimable = [&loose, &beside];
        assert!(block_guards(&claimable, &ids(&[loose.clone()])).is_empty());
    }
}
