use std::time::Duration;

use crate::config::BackendKind;
use clap::Args;

// Each default once, for the flags and for `WorkerSettings::default()` alike.
const RECEIVE_WAIT_MS: u64 = 1_000;
const SWEEP_INTERVAL_MS: u64 = 1_000;
const MAX_INTENT_AGE_SECS: u64 = 900;
const RELAY_INTERVAL_MS: u64 = 200;

/// How the worker paces itself; read from `SEATCLAIM_*` variables like the rest of the configuration.
#[derive(Debug, Clone, Args)]
pub struct WorkerSettings {
    /// Intents taken per receive and decided together. SQS returns at most 10 per receive (the
    /// default on AWS); the embedded backend takes up to 100 (its default), all claimed in one
    /// transaction (one durable commit).
    #[arg(long, env = "SEATCLAIM_BATCH_SIZE",
          value_parser = clap::value_parser!(u16).range(1..=100))]
    pub batch_size: Option<u16>,

    /// Milliseconds a receive waits for messages when the queue is empty (long polling). Also
    /// bounds how long shutdown waits for an idle receive to return.
    #[arg(long, env = "SEATCLAIM_RECEIVE_WAIT_MS", default_value_t = RECEIVE_WAIT_MS)]
    pub receive_wait_ms: u64,

    /// Milliseconds between sweeps that release lapsed holds.
    #[arg(long, env = "SEATCLAIM_SWEEP_INTERVAL_MS", default_value_t = SWEEP_INTERVAL_MS)]
    pub sweep_interval_ms: u64,

    /// Seconds after which an intent still undecided is rejected as "request expired" rather than
    /// claimed (after a long outage or a late replay the buyer has stopped waiting).
    #[arg(long, env = "SEATCLAIM_MAX_INTENT_AGE_SECS", default_value_t = MAX_INTENT_AGE_SECS,
          value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub max_intent_age_secs: u64,

    /// Milliseconds the event relay rests when the outbox is empty; the pause grows to eight
    /// times this while round after round finds nothing, and drops back at the first event.
    /// Where a short page means the outbox is drained (embedded), it also rests this long after
    /// one, so a steady stream of decisions is published in full pages.
    #[arg(long, env = "SEATCLAIM_RELAY_INTERVAL_MS", default_value_t = RELAY_INTERVAL_MS)]
    pub relay_interval_ms: u64,

    /// Claim loops run at once, each receiving and deciding its own batches. On AWS a loop spends
    /// most of its time waiting on the network, so several keep a task's CPU busy (default 4, for
    /// a 1 vCPU task); on the embedded backend one loop already keeps the one writer busy
    /// (default 1).
    #[arg(long, env = "SEATCLAIM_CLAIM_LOOPS",
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub claim_loops: Option<u16>,
}

impl WorkerSettings {
    /// The long-poll wait.
    #[must_use]
    pub fn receive_wait(&self) -> Duration {
        Duration::from_millis(self.receive_wait_ms)
    }

    /// The maximum age of an intent.
    #[must_use]
    pub fn max_intent_age(&self) -> jiff::SignedDuration {
        jiff::SignedDuration::from_secs(i64::try_from(self.max_intent_age_secs).unwrap_or(i64::MAX))
    }

    /// The sweeper's period.
    #[must_use]
    pub fn sweep_interval(&self) -> Duration {
        Duration::from_millis(self.sweep_interval_ms)
    }

    /// How many intents a claim loop takes at once on `backend` (see
    /// [`WorkerSettings::batch_size`]).
    #[must_use]
    pub fn batch_size(&self, backend: BackendKind) -> usize {
        or_default(self.batch_size, backend, (100, 10))
    }

    /// How many claim loops to run on `backend` (see [`WorkerSettings::claim_loops`]).
    #[must_use]
    pub fn claim_loops(&self, backend: BackendKind) -> usize {
        or_default(self.claim_loops, backend, (1, 4))
    }

    /// The relay's idle pause.
    #[must_use]
    pub fn relay_interval(&self) -> Duration {
        Duration::from_millis(self.relay_interval_ms)
    }
}

/// A setting as given, else its default on `backend`: `(embedded, aws)`.
fn or_default(set: Option<u16>, backend: BackendKind, (embedded, aws): (u16, u16)) -> usize {
    let default = match backend {
        BackendKind::Embedded => embedded,
        BackendKind::Aws => aws,
    };
    usize::from(set.unwrap_or(default))
}

impl Default for WorkerSettings {
    fn default() -> Self {
        Self {
            batch_size: None,
            receive_wait_ms: RECEIVE_WAIT_MS,
            sweep_interval_ms: SWEEP_INTERVAL_MS,
            max_intent_age_secs: MAX_INTENT_AGE_SECS,
            relay_interval_ms: RELAY_INTERVAL_MS,
            claim_loops: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_loops_default_by_backend_and_follow_the_setting() {
        let defaults = WorkerSettings::default();
        assert_eq!(defaults.claim_loops(BackendKind::Embedded), 1);
        assert_eq!(defaults.claim_loops(BackendKind::Aws), 4);
        let set = WorkerSettings {
            claim_loops: Some(7),
            ..WorkerSettings::default()
        };
        assert_eq!(set.claim_loops(BackendKind::Embedded), 7);
        assert_eq!(set.claim_loops(BackendKind::Aws), 7);
    }

    #[test]
    fn batch_sizes_default_by_backend_and_follow_the_setting() {
        let defaults = WorkerSettings::default();
        assert_eq!(defaults.batch_size(BackendKind::Embedded), 100);
        assert_eq!(defaults.batch_size(BackendKind::Aws), 10);
        let set = WorkerSettings {
            batch_size: Some(3),
            ..WorkerSettings::default()
        };
        assert_eq!(set.batch_size(BackendKind::Embedded), 3);
        assert_eq!(set.batch_size(BackendKind::Aws), 3);
    }
}
