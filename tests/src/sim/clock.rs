//! The simulated clock: time moves only when the scheduler moves it, so every seed replays on
//! the same instants.

use std::sync::Mutex;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::ports::Clock;

/// The simulated clock: it moves only when the scheduler moves it.
#[derive(Debug)]
pub struct SimClock {
    now: Mutex<Timestamp>,
}

impl SimClock {
    /// A clock standing at `start`.
    #[must_use]
    pub fn starting_at(start: Timestamp) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Moves time forward to `to` (never back).
    pub fn advance_to(&self, to: Timestamp) {
        let mut now = self.now.lock().expect("clock lock");
        *now = (*now).max(to);
    }

    /// Moves time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let to = self
            .now()
            .saturating_add(signed(by))
            .unwrap_or(Timestamp::MAX);
        self.advance_to(to);
    }
}

impl Clock for SimClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().expect("clock lock")
    }
}

/// A duration as jiff's signed kind, saturating.
pub fn signed(by: Duration) -> SignedDuration {
    SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX)
}
