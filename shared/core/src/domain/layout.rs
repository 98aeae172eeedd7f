//! Where seats sit, and which ones are best: the rows and positions that make seats adjacent,
//! the event's preference (front and centre, or the organiser's ranks), and the choice of a
//! block of adjacent seats that strands no single seat when it can.
//!
//! Everything static about a seat's place is worked out once, when the event is created
//! ([`Place`]): its row's order in the section, its row's middle, and its place in the event's
//! order of preference. A claim then needs only the seats that are claimable now: a seat that
//! is missing from them (taken, or not there at all) is a boundary, which is what the strand
//! rule asks ("between it and a taken seat or the row's end").

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Place, Seat, SeatId, ValidationError};
use super::{Reason, ReasonCode};

/// Which seats an event prefers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Best {
    /// The lowest row first; within a row, closest to the row's middle.
    #[default]
    FrontCenter,
    /// The organiser's ranks, lower first (a block: the lowest sum).
    Rank,
}

impl Best {
    /// Reads the organiser's `best`.
    pub fn parse(text: &str) -> Result<Self, ValidationError> {
        match text {
            "front-center" => Ok(Self::FrontCenter),
            "rank" => Ok(Self::Rank),
            _ => Err(ValidationError::new(
                "best",
                "must be \"front-center\" or \"rank\"",
            )),
        }
    }

    /// The stored and shown name.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::FrontCenter => "front-center",
            Self::Rank => "rank",
        }
    }
}

/// Where the organiser put one seat: its row's label and its position in the row (both, or
/// neither), and its rank.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seating {
    /// The row and the position in it; `None`: adjacent to no other seat.
    pub row: Option<(String, i64)>,
    /// The organiser's rank, lower is better.
    pub rank: Option<i64>,
}

/// The places of an event's seats (`sections[i]` is seat `i`'s section, `seating[i]` where the
/// organiser put it): rows ordered front to back (numeric labels by value, then the others by
/// name), each row's middle, and the event's order of preference under `best`.
#[must_use]
pub fn places(sections: &[&str], seating: &[Seating], best: Best) -> Vec<Place> {
    let mut rows: BTreeMap<(&str, &str), (i64, i64)> = BTreeMap::new();
    for (section, seat) in sections.iter().zip(seating) {
        if let Some((label, position)) = &seat.row {
            let span = rows
                .entry((section, label.as_str()))
                .or_insert((*position, *position));
            *span = (span.0.min(*position), span.1.max(*position));
        }
    }
    let mut order: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (section, label) in rows.keys() {
        order.entry(section).or_default().push(label);
    }
    for labels in order.values_mut() {
        labels.sort_by_key(|label| {
            (
                label.parse::<i64>().map_or(1, |_| 0),
                label.parse::<i64>().ok(),
                label.to_string(),
            )
        });
    }
    let row_of = |section: &str, label: &str| {
        order
            .get(section)
            .and_then(|labels| labels.iter().position(|l| *l == label))
            .and_then(|at| u32::try_from(at).ok())
    };
    let mut placed: Vec<Place> = sections
        .iter()
        .zip(seating)
        .map(|(section, seat)| {
            let (row, position, middle2) = seat.row.as_ref().map_or((None, 0, 0), |(label, at)| {
                let (first, last) = rows
                    .get(&(*section, label.as_str()))
                    .copied()
                    .unwrap_or((*at, *at));
                (row_of(section, label), *at, first + last)
            });
            Place {
                row,
                position,
                middle2,
                rank: seat.rank,
                preference: 0,
            }
        })
        .collect();
    let mut ranked: Vec<usize> = (0..placed.len()).collect();
    ranked.sort_by_key(|&at| {
        let place = &placed[at];
        match (best, place.row) {
            (Best::Rank, _) => (place.rank.unwrap_or(i64::MAX), 0, 0, 0, at),
            (Best::FrontCenter, Some(row)) => (
                0,
                i64::from(row),
                (2 * place.position - place.middle2).abs(),
                place.position,
                at,
            ),
            (Best::FrontCenter, None) => (1, 0, 0, 0, at),
        }
    });
    for (preference, at) in ranked.into_iter().enumerate() {
        placed[at].preference = u32::try_from(preference).unwrap_or(u32::MAX);
    }
    placed
}

/// The reason a block request finds no block.
#[must_use]
pub fn no_block_reason(quantity: usize, section: &str) -> Reason {
    let text = format!("no {quantity} adjacent seats in section {section}");
    Reason::new(ReasonCode::NoAdjacentSeats, text)
}

/// Claimable seats best first, by their place in the event's order of preference (seats with
/// no place after, in the order given).
#[must_use]
pub fn best_first<'a>(claimable: impl Iterator<Item = &'a Seat>) -> Vec<&'a Seat> {
    let mut seats: Vec<&Seat> = claimable.collect();
    seats.sort_by_key(|seat| seat.place.map_or(u32::MAX, |p| p.preference));
    seats
}

/// A candidate block: its seats, how good it is (lower is better), and whether it strands a
/// single free seat.
struct Block<'a> {
    seats: &'a [(i64, &'a Seat)],
    score: (i64, i64, i64),
    strands: bool,
}

/// The best block of `quantity` adjacent claimable seats in `claimable` (the section's seats that
/// may be held now): one that strands no single free seat if any does not, else the best one
/// that does. `None` when no row has that many adjacent claimable seats.
#[must_use]
pub fn choose_block(claimable: &[&Seat], quantity: usize, best: Best) -> Option<Vec<SeatId>> {
    let mut rows: BTreeMap<u32, Vec<&Seat>> = BTreeMap::new();
    let mut loose: Vec<&Seat> = Vec::new();
    for seat in claimable {
        match seat.place.and_then(|p| p.row) {
            Some(row) => rows.entry(row).or_default().push(seat),
            None => loose.push(seat),
        }
    }
    let mut search = BlockSearch::new(quantity, best);
    for seats in rows.values() {
        if search.row(seats) {
            break;
        }
    }
    search.loose(&loose);
    search.chosen()
}

/// The search for the best block, fed one row at a time from the front (a store may read rows
/// lazily): under `"front-center"` a block that strands nothing ends it, since no later row can
/// beat it; under `"rank"` every row is looked at.
#[derive(Debug)]
pub struct BlockSearch {
    quantity: usize,
    best: Best,
    /// The best block that strands nothing, and the best that does, with their scores.
    clean: Option<((i64, i64, i64), Vec<SeatId>)>,
    stranding: Option<((i64, i64, i64), Vec<SeatId>)>,
}

impl BlockSearch {
    /// A search for `quantity` adjacent seats under `best`.
    #[must_use]
    pub const fn new(quantity: usize, best: Best) -> Self {
        Self {
            quantity,
            best,
            clean: None,
            stranding: None,
        }
    }

    /// Looks at the claimable seats of the next row (all of one row, any order); `true` once
    /// no later row can change the choice.
    pub fn row(&mut self, seats: &[&Seat]) -> bool {
        let Some(row) = seats.first().and_then(|s| s.place).and_then(|p| p.row) else {
            return false;
        };
        let mut by_position: Vec<(i64, &Seat)> = seats
            .iter()
            .filter_map(|s| Some((s.place?.position, *s)))
            .collect();
        by_position.sort_by_key(|(position, _)| *position);
        for block in blocks_in_row(row, &by_position, self.quantity, self.best) {
            let kept = if block.strands {
                &mut self.stranding
            } else {
                &mut self.clean
            };
            if kept.as_ref().is_none_or(|(score, _)| block.score < *score) {
                let ids = block.seats.iter().map(|(_, s)| s.seat_id.clone()).collect();
                *kept = Some((block.score, ids));
            }
        }
        self.best == Best::FrontCenter && self.clean.is_some()
    }

    /// Looks at the claimable seats that have no row: each a block of one on its own.
    pub fn loose(&mut self, seats: &[&Seat]) {
        if self.quantity != 1 || self.clean.is_some() || self.stranding.is_some() {
            return;
        }
        if let Some(seat) = best_first(seats.iter().copied()).first() {
            self.clean = Some(((i64::MAX, 0, 0), vec![seat.seat_id.clone()]));
        }
    }

    /// The block chosen: the best that strands nothing, else the best that does.
    #[must_use]
    pub fn chosen(self) -> Option<Vec<SeatId>> {
        self.clean.or(self.stranding).map(|(_, ids)| ids)
    }
}

/// Every run of `quantity` consecutive positions in one row (its claimable seats, by position).
fn blocks_in_row<'a>(
    row: u32,
    seats: &'a [(i64, &'a Seat)],
    quantity: usize,
    best: Best,
) -> impl Iterator<Item = Block<'a>> {
    let free = |position: i64| seats.binary_search_by_key(&position, |(p, _)| *p).is_ok();
    // One free seat beside the block, then a boundary (taken, or the row's end).
    let strands = move |beside: i64, beyond: i64| free(beside) && !free(beyond);
    seats
        .windows(quantity.max(1))
        .filter(move |window| {
            window.len() == quantity && window.windows(2).all(|pair| pair[1].0 == pair[0].0 + 1)
        })
        .map(move |window| {
            let (first, last) = (window[0].0, window[window.len() - 1].0);
            let score = match best {
                Best::FrontCenter => {
                    let middle2 = window[0].1.place.map_or(0, |p| p.middle2);
                    (i64::from(row), (first + last - middle2).abs(), first)
                }
                Best::Rank => {
                    let ranks = window
                        .iter()
                        .map(|(_, s)| s.place.and_then(|p| p.rank).unwrap_or(i64::MAX / 16))
                        .sum();
                    (ranks, i64::from(row), first)
                }
            };
            Block {
                seats: window,
                score,
                strands: strands(first - 1, first - 2) || strands(last + 1, last + 2),
            }
        })
}

mod guards;

pub use guards::block_guards;

#[cfg(test)]
mod tests;
