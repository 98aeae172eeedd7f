//! Seats: where each one sits and where it stands, as the inventory records it.

use jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::{JobId, SeatId, Section};

/// Where a seat stands, as the inventory (the authority) records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatState {
    /// Free to claim.
    Available,
    /// Claimed by `job_id` until `until`; past that instant it may be claimed again.
    Held {
        /// The job holding it.
        job_id: JobId,
        /// The hold's deadline.
        until: Timestamp,
    },
    /// Confirmed by `job_id`; final.
    Sold {
        /// The job that bought it.
        job_id: JobId,
    },
}

impl SeatState {
    /// Whether a claim made at `now` may take this seat: free, or held past its deadline. This
    /// is the condition every adapter's conditional write encodes.
    #[must_use]
    pub fn is_claimable(&self, now: Timestamp) -> bool {
        match self {
            Self::Available => true,
            Self::Held { until, .. } => *until <= now,
            Self::Sold { .. } => false,
        }
    }

    /// How the advisory seat map shows the seat at `now`: a lapsed hold already shows as available.
    #[must_use]
    pub fn view(&self, now: Timestamp) -> SeatView {
        match self {
            Self::Sold { .. } => SeatView::Sold,
            _ if self.is_claimable(now) => SeatView::Available,
            Self::Held { .. } | Self::Available => SeatView::Held,
        }
    }
}

/// The three states a buyer sees on the seat map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SeatView {
    /// Can be asked for.
    Available,
    /// Someone holds it now.
    Held,
    /// Gone for good.
    Sold,
}

/// A seat with its section and current state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seat {
    /// The seat's id.
    pub seat_id: SeatId,
    /// Its section.
    pub section: Section,
    /// Its state in the inventory.
    pub state: SeatState,
    /// Where it sits, for the choice of the best seats (`None`: an event created before seats
    /// had places; its seats are taken in the organiser's order).
    pub place: Option<Place>,
}

/// A seat's place in its section, as the event's creation worked it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The row's order in the section (0 is the front), if the seat has a row and position.
    pub row: Option<u32>,
    /// Its position in the row.
    pub position: i64,
    /// Twice the row's middle (the first plus the last position), so it is exact.
    pub middle2: i64,
    /// The organiser's rank, lower is better.
    pub rank: Option<i64>,
    /// Its place in the event's order of preference, 0 the best.
    pub preference: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Timestamp {
        Timestamp::from_second(secs).unwrap()
    }

    #[test]
    fn a_hold_is_claimable_again_exactly_at_its_deadline() {
        let held = SeatState::Held {
            job_id: JobId::new(),
            until: at(100),
        };
        assert!(!held.is_claimable(at(99)));
        assert!(held.is_claimable(at(100)));
        assert_eq!(held.view(at(99)), SeatView::Held);
        assert_eq!(held.view(at(100)), SeatView::Available);
        assert!(
            !SeatState::Sold {
                job_id: JobId::new()
            }
            .is_claimable(at(1_000))
        );
    }
}
