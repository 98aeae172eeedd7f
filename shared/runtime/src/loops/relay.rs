//! The outbox relay's loop: `app::relay_once` round after round, pausing when the outbox is
//! drained, and draining it once more at shutdown.

use std::time::Duration;

use seatclaim_core::Backend;
use seatclaim_core::app::relay_once;
use tokio_util::sync::CancellationToken;
use tracing::warn;

/// How far the idle pause grows while round after round finds nothing: an idle relay's reads
/// (one per outbox shard and round on DynamoDB) fall to an eighth, and the first event after a
/// quiet spell waits at most this many idle pauses.
const MAX_IDLE_STEPS: u32 = 8;

pub(crate) async fn run(backend: Backend, idle: Duration, stop: CancellationToken) {
    let mut quiet_rounds = 0_u32;
    loop {
        let (pause, drained) = match relay_once(&backend).await {
            // A page, full or not, may have been one relay's share of more: go on at once.
            Ok(published) if published > 0 => {
                quiet_rounds = 0;
                (Duration::ZERO, false)
            }
            Ok(_) => {
                quiet_rounds = (quiet_rounds + 1).min(MAX_IDLE_STEPS);
                (idle * quiet_rounds, true)
            }
            Err(error) => {
                warn!(%error, "relay failed; will try again");
                (idle, true)
            }
        };
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
