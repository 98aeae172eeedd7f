//! Where a PENDING job stands in its event's line: how many of the event's intents admitted
//! before it are still undecided, and when it may be decided at the rate the event's intents
//! are being decided. The stores count; the rate is learnt here from samples of how many of the
//! event's intents have been decided, taken as buyers ask.

use std::collections::VecDeque;

use jiff::{SignedDuration, Timestamp};
use serde::Serialize;

/// A PENDING job's place in line, as `GET /v1/jobs/{id}` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum QueuePosition {
    /// In the pre-queue of a sale that has not opened: its place is drawn at the opening.
    Opening {
        /// The sale's start.
        opens_at: Timestamp,
    },
    /// In line.
    InLine {
        /// Intents of the same event to be decided before this one and not decided yet.
        ahead: u64,
        /// When this one may be decided, from the event's decision rate; `None` while no rate
        /// is known (before the first decisions, or while none are being made).
        estimated_decision_at: Option<Timestamp>,
    },
}

/// What a store knows of a job's line: intents ahead of it, and how many of its event's
/// intents have been decided so far (a running count, for the rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    /// Intents of the same event to be decided before the job and not decided yet: admitted
    /// before it, or drawn before it at the opening.
    pub ahead: u64,
    /// The event's decisions so far.
    pub decided: u64,
    /// The sale's start, while the job waits in the pre-queue for it (then `ahead` means
    /// nothing yet).
    pub opens_at: Option<Timestamp>,
}

/// How far back the rate looks: long enough to smooth batches, short enough to follow a sale
/// that speeds up or stalls.
const WINDOW: SignedDuration = SignedDuration::from_secs(30);
/// Samples closer together than this add nothing.
const SAMPLE_EVERY: SignedDuration = SignedDuration::from_millis(500);

/// One event's decision rate, from samples of its decided count over the last [`WINDOW`].
#[derive(Debug, Clone, Default)]
pub struct DecisionRate {
    samples: VecDeque<(Timestamp, u64)>,
}

impl DecisionRate {
    /// Adds the decided count read at `now`, and forgets samples older than the window (but
    /// keeps the newest old one, so that a slow sale still spans a window).
    pub fn record(&mut self, now: Timestamp, decided: u64) {
        if self
            .samples
            .back()
            .is_some_and(|(at, _)| now.duration_since(*at) < SAMPLE_EVERY)
        {
            return;
        }
        self.samples.push_back((now, decided));
        while self.samples.len() > 2
            && self
                .samples
                .get(1)
                .is_some_and(|(at, _)| now.duration_since(*at) >= WINDOW)
        {
            self.samples.pop_front();
        }
    }

    /// Decisions per second over the samples, if they span time and show progress.
    #[must_use]
    pub fn per_second(&self) -> Option<f64> {
        let ((first_at, first), (last_at, last)) = (self.samples.front()?, self.samples.back()?);
        let seconds = last_at.duration_since(*first_at).as_secs_f64();
        let decided = last.checked_sub(*first)?;
        (seconds > 0.0 && decided > 0).then(|| decided as f64 / seconds)
    }

    /// The position of a job with `ahead` intents before it, at `now`: it is decided once those
    /// and itself are.
    #[must_use]
    pub fn position(&self, ahead: u64, now: Timestamp) -> QueuePosition {
        let estimated_decision_at = self.per_second().and_then(|rate| {
            let wait = SignedDuration::try_from_secs_f64((ahead + 1) as f64 / rate).ok()?;
            now.checked_add(wait).ok()
        });
        QueuePosition::InLine {
            ahead,
            estimated_decision_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(seconds)
    }

    #[test]
    fn no_rate_is_known_before_two_samples_show_progress() {
        let mut rate = DecisionRate::default();
        assert_eq!(
            rate.position(5, at(0)),
            QueuePosition::InLine {
                ahead: 5,
                estimated_decision_at: None
            }
        );
        rate.record(at(0), 100);
        assert_eq!(rate.per_second(), None);
        rate.record(at(2), 100);
        assert_eq!(rate.per_second(), None, "no decisions, no rate");
    }

    #[test]
    fn the_estimate_is_the_line_ahead_at_the_recent_rate() {
        let mut rate = DecisionRate::default();
        rate.record(at(0), 0);
        rate.record(at(10), 1_000);
        assert_eq!(rate.per_second(), Some(100.0));
        assert_eq!(
            rate.position(499, at(10)),
            QueuePosition::InLine {
                ahead: 499,
                estimated_decision_at: Some(at(15))
            }
        );
    }

    #[test]
    fn old_samples_leave_the_window_so_the_rate_follows_the_sale() {
        let mut rate = DecisionRate::default();
        rate.record(at(0), 0);
        rate.record(at(40), 4_000);
        rate.record(at(80), 4_400);
        assert_eq!(rate.per_second(), Some(10.0), "only the last 40 s count");
        rate.record(at(80), 9_999);
        assert_eq!(
            rate.per_second(),
            Some(10.0),
            "a sample within 0.5 s adds nothing"
        );
    }
}
