//! The seat's stored shape: its state as text, with the job and deadline that go with it.

use super::from_ms;
use crate::domain::{JobId, Seat, SeatId, SeatState, Section};
use crate::ports::BackendError;

/// A seat as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatRecord {
    /// The seat id.
    pub seat_id: String,
    /// Its section.
    pub section: String,
    /// `AVAILABLE`, `HELD` or `SOLD`.
    pub state: String,
    /// The job holding or having bought it.
    pub job_id: Option<String>,
    /// The hold's deadline in milliseconds, while HELD.
    pub hold_until: Option<i64>,
    /// Where it sits (JSON of the domain's `Place`), if its event was created with places.
    pub place: Option<String>,
}

impl SeatRecord {
    /// How an AVAILABLE seat's state is stored. The three spellings are the codec's; the AWS
    /// adapter's conditions take them from here, and the embedded schema's CHECK constraint and
    /// partial index spell the same words (its queries must too, for SQLite to use that index).
    pub const AVAILABLE: &'static str = "AVAILABLE";
    /// How a HELD seat's state is stored.
    pub const HELD: &'static str = "HELD";
    /// How a SOLD seat's state is stored.
    pub const SOLD: &'static str = "SOLD";

    /// Checks the record (a HELD seat names its job and deadline, a SOLD one its job) and turns
    /// it into a domain seat.
    pub fn into_seat(self) -> Result<Seat, BackendError> {
        let id = self.seat_id.clone();
        let corrupt = |what: &str| BackendError::permanent(format!("seat {id} has {what}"));
        let job_id = self.job_id.as_deref().and_then(JobId::parse);
        let state = match (self.state.as_str(), job_id, self.hold_until) {
            (Self::AVAILABLE, _, _) => SeatState::Available,
            (Self::HELD, Some(job_id), Some(until)) => SeatState::Held {
                job_id,
                until: from_ms(until)?,
            },
            (Self::SOLD, Some(job_id), _) => SeatState::Sold { job_id },
            _ => return Err(corrupt("an inconsistent state")),
        };
        Ok(Seat {
            seat_id: SeatId::parse(&self.seat_id).map_err(|_| corrupt("an invalid id"))?,
            section: Section::parse(&self.section).map_err(|_| corrupt("an invalid section"))?,
            state,
            place: self
                .place
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|_| corrupt("an unreadable place"))?,
        })
    }
}
