//! The per-buyer seat limit of an event: how many of its seats one buyer may hold or have
//! bought at once, so that one client cannot hoard a sale with many reservations. The claim
//! decides it in the same atomic step that holds the seats; admission never has the last word.

use std::fmt;

use super::ValidationError;
use super::{Reason, ReasonCode};

/// The highest per-buyer limit an organiser may set.
pub const MAX_SEAT_LIMIT: u32 = 100;

/// The per-buyer limit an event created without one gets, unless the deployment says otherwise
/// (`SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER`): a sale is never open to hoarding by omission.
pub const DEFAULT_SEAT_LIMIT: u32 = 10;

/// The most seats of one event that one buyer may count: those of their HELD and SOLD jobs and
/// the quantities their WAITLISTED jobs wait for (a place in line is a claim on seats to come,
/// so a buyer cannot queue past the limit and be handed it later). Cancelled and expired holds
/// no longer count (nor do lapsed holds, which can never be confirmed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatLimit(u32);

impl SeatLimit {
    /// Checks an organiser's limit: 1 to [`MAX_SEAT_LIMIT`] seats.
    pub fn parse(seats: u32) -> Result<Self, ValidationError> {
        if (1..=MAX_SEAT_LIMIT).contains(&seats) {
            Ok(Self(seats))
        } else {
            Err(ValidationError::new(
                "max_seats_per_buyer",
                format!("must be between 1 and {MAX_SEAT_LIMIT}"),
            ))
        }
    }

    /// Reads a limit where 0 means none (a spec's explicit "no limit", the default setting):
    /// `None` for 0, otherwise as [`Self::parse`].
    pub fn optional(seats: u32) -> Result<Option<Self>, ValidationError> {
        if seats == 0 {
            return Ok(None);
        }
        Self::parse(seats).map(Some).map_err(|_| {
            ValidationError::new(
                "max_seats_per_buyer",
                format!("must be between 1 and {MAX_SEAT_LIMIT}, or 0 for no limit"),
            )
        })
    }

    /// The limit in seats.
    #[must_use]
    pub fn seats(self) -> u32 {
        self.0
    }

    /// The highest count of seats a buyer may already have for a claim of `wanted` more to be
    /// allowed: the condition an adapter writes the buyer's count under. `None` when `wanted`
    /// alone is over the limit.
    #[must_use]
    pub fn ceiling_for(self, wanted: usize) -> Option<u32> {
        let wanted = u32::try_from(wanted).ok()?;
        self.0.checked_sub(wanted)
    }

    /// Whether a buyer who counts `counted` seats in the event may claim `wanted` more.
    #[must_use]
    pub fn admits(self, counted: u32, wanted: usize) -> bool {
        self.ceiling_for(wanted)
            .is_some_and(|ceiling| counted <= ceiling)
    }

    /// Why a claim over the limit is rejected: `buyer_limit`, with a text that names the limit.
    #[must_use]
    pub fn reason(self) -> Reason {
        let text = format!("buyer limit reached: {self} per buyer");
        Reason::new(ReasonCode::BuyerLimit, text)
    }
}

impl fmt::Display for SeatLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            1 => f.write_str("1 seat"),
            n => write!(f, "{n} seats"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_is_one_to_a_hundred_seats() {
        for bad in [0, 101, u32::MAX] {
            assert_eq!(
                SeatLimit::parse(bad).unwrap_err().field,
                "max_seats_per_buyer"
            );
        }
        assert_eq!(SeatLimit::parse(1).unwrap().seats(), 1);
        assert_eq!(SeatLimit::parse(100).unwrap().seats(), 100);
    }

    #[test]
    fn zero_is_no_limit_where_a_limit_is_optional() {
        assert_eq!(SeatLimit::optional(0).unwrap(), None);
        assert_eq!(
            SeatLimit::optional(10).unwrap().map(SeatLimit::seats),
            Some(10)
        );
        assert!(
            SeatLimit::optional(101)
                .unwrap_err()
                .message
                .contains("0 for no limit")
        );
    }

    #[test]
    fn a_claim_is_admitted_while_the_buyers_count_stays_within_the_limit() {
        let two = SeatLimit::parse(2).unwrap();
        assert!(two.admits(0, 2));
        assert!(two.admits(1, 1));
        assert!(!two.admits(1, 2));
        assert!(!two.admits(2, 1));
        assert!(!two.admits(0, 3), "a request larger than the limit");
        assert_eq!(two.ceiling_for(1), Some(1));
        assert_eq!(two.ceiling_for(3), None);
    }

    #[test]
    fn the_reason_names_the_limit() {
        let two = SeatLimit::parse(2).unwrap().reason();
        assert_eq!(two.text, "buyer limit reached: 2 seats per buyer");
        assert_eq!(two.code, ReasonCode::BuyerLimit);
        assert_eq!(
            SeatLimit::parse(1).unwrap().reason().text,
            "buyer limit reached: 1 seat per buyer"
        );
    }
}
