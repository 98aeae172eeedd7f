//! The worker's periodic loops: the sweeper (`app::sweep_once` every interval, so a lapsed hold's
//! job ends EXPIRED and its seats return to the map even when nobody asks for them) and the queue
//! depth sampler.

use std::time::Duration;

use seatclaim_core::Backend;
use seatclaim_core::app::{purge_once, sweep_once};
use seatclaim_core::domain::Retention;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

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

/// Deletes what `retention` lets go every `period` (`app::purge_once`).
pub(crate) async fn purge(
    backend: Backend,
    period: Duration,
    retention: Retention,
    stop: CancellationToken,
) {
    every(period, stop, || async {
        match purge_once(&backend, retention).await {
            Ok(0) => {}
            Ok(purged) => {
                metrics::counter!("seatclaim_jobs_purged_total").increment(purged as u64);
                info!(purged, "deleted decided jobs past their retention");
            }
            Err(error) => warn!(%error, "retention delete failed; will try again"),
        }
    })
    .await;
}

/// Expires lapsed holds every `period` (`app::sweep_once`).
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
