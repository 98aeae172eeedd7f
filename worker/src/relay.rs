//! The outbox relay's loop: `app::relay_once` round after round, pausing when the outbox is
//! drained, and draining it once more at shutdown.

use std::time::Duration;

use seatclaim_shared::Backend;
use seatclaim_shared::app::{RELAY_PAGE, relay_once};
use tokio_util::sync::CancellationToken;
use tracing::warn;

pub(crate) async fn run(backend: Backend, idle: Duration, stop: CancellationToken) {
    loop {
        let (pause, drained) = match relay_once(&backend).await {
            Ok(RELAY_PAGE) => (Duration::ZERO, false),
            Ok(_) => (idle, true),
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
