//! Releases lapsed holds, so a seat whose buyer walked away returns to sale and the job ends EXPIRED.
//! Claims may already take a lapsed seat on their own; the sweeper makes the release deterministic
//! for the buyer's job and the seat map even when nobody asks for the seat.

use std::time::Duration;

use seatclaim_shared::Backend;
use seatclaim_shared::ports::BackendError;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

/// Jobs expired per backend call; a large backlog is worked through in several calls.
const SWEEP_PAGE: usize = 500;

/// Expires every hold that has lapsed by now; returns how many.
pub async fn sweep_once(backend: &Backend) -> Result<usize, BackendError> {
    let mut total = 0;
    loop {
        let released = backend
            .inventory
            .release_lapsed_holds(backend.clock.now(), SWEEP_PAGE)
            .await?;
        total += released;
        if released < SWEEP_PAGE {
            return Ok(total);
        }
    }
}

/// Calls `work` every `period` until `stop`; a tick missed while `work` ran is skipped, not bunched.
async fn every<F, Fut>(period: Duration, stop: CancellationToken, mut work: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => work().await,
        }
    }
}

/// Samples the queue depth into gauges, for dashboards and the worker's autoscaling.
pub(crate) async fn sample_depth(backend: Backend, period: Duration, stop: CancellationToken) {
    every(period, stop, || async {
        match backend.queue.depth().await {
            Ok(depth) => {
                for (state, count) in [
                    ("ready", depth.ready),
                    ("in_flight", depth.in_flight),
                    ("dead", depth.dead),
                ] {
                    metrics::gauge!("seatclaim_queue_messages", "state" => state).set(count as f64);
                }
            }
            Err(error) => warn!(%error, "cannot read the queue depth"),
        }
    })
    .await;
}

pub(crate) async fn run(backend: Backend, period: Duration, stop: CancellationToken) {
    every(period, stop, || async {
        match sweep_once(&backend).await {
            Ok(0) => {}
            Ok(released) => {
                metrics::counter!("seatclaim_holds_expired_total").increment(released as u64);
                info!(released, "released lapsed holds");
            }
            Err(error) => warn!(%error, "sweep failed; will try again"),
        }
    })
    .await;
}
