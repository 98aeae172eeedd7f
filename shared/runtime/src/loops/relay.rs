//! The outbox relay's loop: `app::relay_once` round after round, pausing when the outbox is
//! drained, and draining it once more at shutdown.

use std::time::Duration;

use seatclaim_core::Backend;
use seatclaim_core::app::{RELAY_PAGE, relay_once};
use seatclaim_core::ports::BackendError;
use tokio_util::sync::CancellationToken;
use tracing::warn;

/// How far the idle pause grows while round after round finds nothing: an idle relay's reads
/// (one per outbox shard and round on DynamoDB) fall to an eighth, and the first event after a
/// quiet spell waits at most this many idle pauses.
const MAX_IDLE_STEPS: u32 = 8;

pub(crate) async fn run(backend: Backend, idle: Duration, stop: CancellationToken) {
    let mut pacing = Pacing {
        idle,
        short_page_drains: backend.outbox.short_page_drains(),
        quiet_rounds: 0,
    };
    loop {
        let outcome = relay_once(&backend).await;
        if let Err(error) = &outcome {
            warn!(%error, "relay failed; will try again");
        }
        let (pause, drained) = pacing.after(&outcome);
        // On shutdown, keep going until a round finds the outbox drained (or failing), so events
        // recorded by the last batch leave with this process rather than waiting for the next one.
        if stop.is_cancelled() && drained {
            return;
        }
        tokio::select! {
            () = stop.cancelled() => {}
            () = tokio::time::sleep(pause) => {}
        }
    }
}

/// When the relay looks again, from what its last round published.
struct Pacing {
    idle: Duration,
    /// The outbox's [`seatclaim_core::ports::Outbox::short_page_drains`].
    short_page_drains: bool,
    quiet_rounds: u32,
}

impl Pacing {
    /// The pause before the next round, and whether this round left the outbox drained.
    ///
    /// Each round costs the same whatever it carries (on the embedded backend an fsync of the
    /// event log, a read of the outbox and a write of its cursor), so a relay that went on at
    /// once after a page of a few events spent as much on a sale's stream of decisions as on
    /// the page of a hundred. A short page that drained the outbox is now followed by one idle
    /// pause: at most that long later, what was decided meanwhile leaves in full pages.
    fn after(&mut self, outcome: &Result<usize, BackendError>) -> (Duration, bool) {
        match outcome {
            Ok(0) => {
                self.quiet_rounds = (self.quiet_rounds + 1).min(MAX_IDLE_STEPS);
                (self.idle * self.quiet_rounds, true)
            }
            Ok(published) => {
                self.quiet_rounds = 0;
                if *published < RELAY_PAGE && self.short_page_drains {
                    (self.idle, true)
                } else {
                    // A full page, or one relay's share of more: go on at once.
                    (Duration::ZERO, false)
                }
            }
            Err(_) => (self.idle, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const IDLE: Duration = Duration::from_millis(200);

    fn pacing(short_page_drains: bool) -> Pacing {
        Pacing {
            idle: IDLE,
            short_page_drains,
            quiet_rounds: 0,
        }
    }

    #[test]
    fn a_short_page_that_drained_the_outbox_is_followed_by_an_idle_pause() {
        let mut relay = pacing(true);
        assert_eq!(relay.after(&Ok(3)), (IDLE, true));
        assert_eq!(relay.after(&Ok(RELAY_PAGE)), (Duration::ZERO, false));
    }

    #[test]
    fn a_short_page_of_one_share_among_several_goes_on_at_once() {
        let mut relay = pacing(false);
        assert_eq!(relay.after(&Ok(3)), (Duration::ZERO, false));
    }

    #[test]
    fn the_pause_grows_while_the_outbox_stays_empty_and_drops_back_at_an_event() {
        let mut relay = pacing(true);
        let pauses: Vec<Duration> = (0..10).map(|_| relay.after(&Ok(0)).0).collect();
        assert_eq!(pauses[0], IDLE);
        assert_eq!(pauses[2], IDLE * 3);
        assert_eq!(pauses[9], IDLE * MAX_IDLE_STEPS);
        relay.after(&Ok(1));
        assert_eq!(relay.after(&Ok(0)).0, IDLE);
    }

    #[test]
    fn a_failed_round_waits_one_idle_pause() {
        let mut relay = pacing(false);
        let failed = Err(BackendError::transient("down"));
        assert_eq!(relay.after(&failed), (IDLE, true));
    }
}
