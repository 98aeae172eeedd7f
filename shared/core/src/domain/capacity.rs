//! What a section can ever give one request, whatever is sold or returned: its seats, and its
//! longest run of adjacent seats in a row. A request beyond either can never be served, so it is
//! refused at admission (the client can fix it) instead of being rejected later or, on an event
//! with a waitlist, waiting in a line it would never leave.

use std::collections::{BTreeMap, HashMap};

use super::{Place, SeatRequest, Section};

/// The most one request may take from a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SectionCapacity {
    /// Every seat of the section.
    pub seats: usize,
    /// The longest run of adjacent seats in one of its rows (1 where seats have no row).
    pub longest_block: usize,
}

impl SectionCapacity {
    /// Why `request`, a request for this section, can never be served, if it cannot.
    #[must_use]
    pub fn refusal(&self, request: &SeatRequest) -> Option<String> {
        let SeatRequest::Section {
            section,
            quantity,
            together,
        } = request
        else {
            return None;
        };
        let wanted = usize::from(*quantity);
        if wanted > self.seats {
            return Some(format!(
                "section {section} has {} seats in all: {wanted} can never be held at once",
                self.seats
            ));
        }
        (*together && wanted > self.longest_block).then(|| {
            format!(
                "section {section}'s longest run of adjacent seats is {}: {wanted} together can \
                 never be held",
                self.longest_block
            )
        })
    }
}

/// The capacity of each section of an event's `seats` (each seat's section and place, if it has
/// one).
#[must_use]
pub fn capacities<'a>(
    seats: impl IntoIterator<Item = (&'a Section, Option<Place>)>,
) -> HashMap<Section, SectionCapacity> {
    let mut rows: HashMap<&Section, BTreeMap<u32, Vec<i64>>> = HashMap::new();
    let mut found: HashMap<Section, SectionCapacity> = HashMap::new();
    for (section, place) in seats {
        let capacity = found.entry(section.clone()).or_default();
        capacity.seats += 1;
        capacity.longest_block = capacity.longest_block.max(1);
        if let Some((row, position)) = place.and_then(|p| Some((p.row?, p.position))) {
            rows.entry(section)
                .or_default()
                .entry(row)
                .or_default()
                .push(position);
        }
    }
    for (section, rows) in rows {
        let longest = rows.into_values().map(longest_run).max().unwrap_or(1);
        if let Some(capacity) = found.get_mut(section) {
            capacity.longest_block = capacity.longest_block.max(longest);
        }
    }
    found
}

/// The longest run of consecutive positions among `positions`.
fn longest_run(mut positions: Vec<i64>) -> usize {
    positions.sort_unstable();
    positions.dedup();
    let (mut longest, mut run) = (0, 0);
    let mut last = None;
    for position in positions {
        run = if last == Some(position - 1) {
            run + 1
        } else {
            1
        };
        longest = longest.max(run);
        last = Some(position);
    }
    longest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(row: u32, position: i64) -> Option<Place> {
        Some(Place {
            row: Some(row),
            position,
            middle2: 0,
            rank: None,
            preference: 0,
        })
    }

    #[test]
    fn a_section_can_serve_at_most_its_seats_and_its_longest_run_together() {
        let a = Section::parse("A").unwrap();
        let b = Section::parse("B").unwrap();
        // Row 0: 1 2 _ 4 5 6 ; row 1: 1 2 ; B: two seats with no row.
        let seats = [
            (&a, place(0, 1)),
            (&a, place(0, 2)),
            (&a, place(0, 4)),
            (&a, place(0, 5)),
            (&a, place(0, 6)),
            (&a, place(1, 1)),
            (&a, place(1, 2)),
            (&b, None),
            (&b, None),
        ];
        let found = capacities(seats);
        assert_eq!(
            found[&a],
            SectionCapacity {
                seats: 7,
                longest_block: 3
            }
        );
        assert_eq!(
            found[&b],
            SectionCapacity {
                seats: 2,
                longest_block: 1
            }
        );
        let together = |n| SeatRequest::together_in("A", n).unwrap();
        let any = |n| SeatRequest::in_section("A", n).unwrap();
        assert_eq!(found[&a].refusal(&together(3)), None);
        assert!(found[&a].refusal(&together(4)).unwrap().contains("3"));
        assert_eq!(found[&a].refusal(&any(7)), None);
        assert!(found[&a].refusal(&any(8)).unwrap().contains("7 seats"));
        let exact = SeatRequest::exact(&["A-1".to_owned()]).unwrap();
        assert_eq!(found[&b].refusal(&exact), None);
    }
}
