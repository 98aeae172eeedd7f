use super::*;
use crate::domain::{SeatState, Section};

/// The seats of one section of `rows` rows of `per_row` seats, with their places.
fn grid(rows: u32, per_row: u32) -> Vec<Seat> {
    let mut ids = Vec::new();
    let mut seating = Vec::new();
    for row in 1..=rows {
        for number in 1..=per_row {
            ids.push(format!("S-{row}-{number}"));
            seating.push(Seating {
                row: Some((row.to_string(), i64::from(number))),
                rank: None,
            });
        }
    }
    let sections = vec!["S"; ids.len()];
    let placed = places(&sections, &seating, Best::FrontCenter);
    ids.iter()
        .zip(placed)
        .map(|(id, place)| Seat {
            seat_id: SeatId::parse(id).unwrap(),
            section: Section::parse("S").unwrap(),
            state: SeatState::Available,
            place: Some(place),
        })
        .collect()
}

/// The seats of `seats` not named in `taken`.
fn free<'a>(seats: &'a [Seat], taken: &[&str]) -> Vec<&'a Seat> {
    seats
        .iter()
        .filter(|s| !taken.contains(&s.seat_id.as_str()))
        .collect()
}

fn ids(block: Option<Vec<SeatId>>) -> Vec<String> {
    block
        .unwrap_or_default()
        .iter()
        .map(|id| id.as_str().to_owned())
        .collect()
}

#[test]
fn the_first_block_is_the_front_rows_middle() {
    let seats = grid(3, 10);
    // A row of 10 has its middle between seats 5 and 6.
    assert_eq!(
        ids(choose_block(&free(&seats, &[]), 2, Best::FrontCenter)),
        ["S-1-5", "S-1-6"]
    );
    // Three seats: 4-6 and 5-7 are as close; the lower seat numbers win.
    assert_eq!(
        ids(choose_block(&free(&seats, &[]), 3, Best::FrontCenter)),
        ["S-1-4", "S-1-5", "S-1-6"]
    );
}

#[test]
fn a_block_that_strands_one_seat_is_passed_over_when_another_does_not() {
    let seats = grid(1, 6);
    // Taken: 1 and 4. Free: 2 3 | 5 6. Two seats at 2-3 fill a gap exactly; 5-6 too.
    let taken = ["S-1-1", "S-1-4"];
    assert_eq!(
        ids(choose_block(&free(&seats, &taken), 2, Best::FrontCenter)),
        ["S-1-2", "S-1-3"],
        "both strand nothing; 2-3 is as close to the middle (3.5) and lower"
    );
    // One seat: every single free seat leaves its neighbour alone, except none... 2 strands 3,
    // 3 strands 2, 5 strands 6, 6 strands 5: all strand, so the best is taken anyway.
    assert_eq!(
        ids(choose_block(&free(&seats, &taken), 1, Best::FrontCenter)),
        ["S-1-3"]
    );
    // Free: 1 2 3 4 5 | taken 6. Two seats: 2-3 strands 1; 3-4 strands 5; 1-2 and 4-5 do not.
    let seats = grid(1, 6);
    let best = choose_block(&free(&seats, &["S-1-6"]), 2, Best::FrontCenter);
    assert_eq!(
        ids(best),
        ["S-1-4", "S-1-5"],
        "closest to 3.5 among 1-2, 4-5"
    );
}

#[test]
fn a_section_without_room_for_the_block_has_none() {
    let seats = grid(2, 4);
    let taken = ["S-1-2", "S-2-3"];
    assert_eq!(
        choose_block(&free(&seats, &taken), 3, Best::FrontCenter),
        None
    );
    let reason = no_block_reason(3, "S");
    assert_eq!(reason.text, "no 3 adjacent seats in section S");
    assert_eq!(reason.code.as_str(), "no_adjacent_seats");
}

#[test]
fn ranks_choose_the_lowest_sum() {
    let sections = vec!["S"; 4];
    let seating: Vec<Seating> = [9, 1, 2, 7]
        .iter()
        .zip(1..)
        .map(|(rank, position)| Seating {
            row: Some(("A".into(), position)),
            rank: Some(*rank),
        })
        .collect();
    let placed = places(&sections, &seating, Best::Rank);
    let seats: Vec<Seat> = placed
        .into_iter()
        .enumerate()
        .map(|(at, place)| Seat {
            seat_id: SeatId::parse(&format!("s{at}")).unwrap(),
            section: Section::parse("S").unwrap(),
            state: SeatState::Available,
            place: Some(place),
        })
        .collect();
    let all: Vec<&Seat> = seats.iter().collect();
    // s1-s2 has the lowest sum (3) but strands s0 against the row's end: s2-s3 (9) strands
    // nothing; with s0 taken, s1-s2 strands nothing and wins.
    assert_eq!(ids(choose_block(&all, 2, Best::Rank)), ["s2", "s3"]);
    assert_eq!(ids(choose_block(&all[1..], 2, Best::Rank)), ["s1", "s2"]);
    let first: Vec<&str> = best_first(seats.iter())
        .iter()
        .map(|s| s.seat_id.as_str())
        .collect();
    assert_eq!(first, ["s1", "s2", "s3", "s0"]);
}

#[test]
fn seats_one_by_one_come_front_and_centre_first() {
    let seats = grid(2, 4);
    let order: Vec<&str> = best_first(seats.iter())
        .iter()
        .map(|s| s.seat_id.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "S-1-2", "S-1-3", "S-1-1", "S-1-4", "S-2-2", "S-2-3", "S-2-1", "S-2-4"
        ]
    );
}

#[test]
fn rows_named_by_numbers_come_first_by_value() {
    let sections = vec!["S"; 3];
    let seating: Vec<Seating> = ["10", "2", "B"]
        .iter()
        .map(|row| Seating {
            row: Some(((*row).to_owned(), 1)),
            rank: None,
        })
        .collect();
    let rows: Vec<Option<u32>> = places(&sections, &seating, Best::FrontCenter)
        .iter()
        .map(|p| p.row)
        .collect();
    assert_eq!(rows, [Some(1), Some(0), Some(2)]);
}
