//! What a batch of intents is decided under, and what happened to it: the values the worker's
//! loop passes to [`super::decide_batch`] and logs from it, shared by the deciding and the giving
//! up (`decide.rs`, `give_up.rs`).

use jiff::SignedDuration;

/// The limits a batch is decided under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Receives an intent gets before its job is failed and the message dead-lettered.
    pub max_attempts: u32,
    /// An intent older than this when it is processed is rejected as "request expired".
    pub max_intent_age: SignedDuration,
}

impl Limits {
    /// `max_attempts` with the default maximum age (15 minutes).
    #[must_use]
    pub fn attempts(max_attempts: u32) -> Self {
        Self {
            max_attempts,
            max_intent_age: SignedDuration::from_mins(15),
        }
    }
}

/// What happened to each message of a batch; the loop logs it and the tests assert on it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Jobs that now hold their seats.
    pub held: usize,
    /// Jobs rejected because the seats were not available.
    pub rejected: usize,
    /// Jobs that joined their section's line (an event with a waitlist).
    pub waitlisted: usize,
    /// Jobs rejected because their intent was too old ("request expired").
    pub expired: usize,
    /// Redeliveries of jobs decided earlier; acknowledged without change.
    pub already_decided: usize,
    /// Messages left in the queue to be retried after a backoff.
    pub retried: usize,
    /// Messages dead-lettered, their jobs FAILED.
    pub dead_lettered: usize,
}
