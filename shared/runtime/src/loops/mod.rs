//! The claim worker: receives intents in batches and decides them against the inventory, releases
//! lapsed holds, and relays recorded reservation events to the publisher; and the backend's own
//! background tasks ([`BackendTasks`]), which run wherever a backend is open.
//!
//! They sit in the runtime, not in the worker's crate, because two binaries run them: the API
//! in-process for the one-command local setup, and `seatclaim-worker` as its own process (its
//! shape on Fargate).

mod backend_tasks;
mod metrics_endpoint;
mod relay;
mod settings;
mod sweeper;

use std::time::Duration;

use crate::config::BackendSettings;
use seatclaim_core::Backend;
use seatclaim_core::domain::Retention;
use seatclaim_core::ports::{Delivery, Receipt};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

pub use backend_tasks::BackendTasks;
pub use metrics_endpoint::serve_metrics;
// The use cases the loops call, re-exported for the callers that drive a step directly.
use seatclaim_core::app::backoff;
pub use seatclaim_core::app::{BatchOutcome, Limits, decide_batch, relay_once, sweep_once};
pub use settings::WorkerSettings;

/// How often the queue depth gauges are refreshed (each sample is two requests on SQS).
const DEPTH_SAMPLE_INTERVAL: Duration = Duration::from_secs(10);
/// How often decided jobs past their retention are deleted (embedded; DynamoDB's TTL on AWS).
const RETENTION_INTERVAL: Duration = Duration::from_secs(60);

/// The worker's loops over one backend.
pub struct Worker {
    backend: Backend,
    settings: WorkerSettings,
    queue: QueuePolicy,
    claim_loops: usize,
    retention: Retention,
}

/// What the worker needs to know of the queue's configuration.
#[derive(Debug, Clone, Copy)]
struct QueuePolicy {
    limits: Limits,
    batch_size: usize,
    visibility_timeout: Duration,
}

impl Worker {
    /// A worker on `backend`, with the attempts and visibility timeout the backend settings give.
    #[must_use]
    pub fn new(
        backend: Backend,
        settings: WorkerSettings,
        backend_settings: &BackendSettings,
    ) -> Self {
        let max_intent_age = settings.max_intent_age();
        let claim_loops = settings.claim_loops(backend_settings.backend);
        let batch_size = settings.batch_size(backend_settings.backend);
        Self {
            claim_loops,
            retention: backend_settings.retention,
            backend,
            settings,
            queue: QueuePolicy {
                limits: Limits {
                    max_attempts: backend_settings.max_attempts,
                    max_intent_age,
                },
                batch_size,
                visibility_timeout: backend_settings.visibility_timeout(),
            },
        }
    }

    /// Runs until `stop` is cancelled, then finishes the batch in hand (its claims commit and are
    /// acknowledged), lets the relay publish what is recorded, and returns.
    pub async fn run(self, stop: CancellationToken) {
        let claims: Vec<_> = (0..self.claim_loops)
            .map(|_| {
                tokio::spawn(claim_loop(
                    self.backend.clone(),
                    self.settings.clone(),
                    self.queue,
                    stop.clone(),
                ))
            })
            .collect();
        info!(claim_loops = claims.len(), "claim loops started");
        let sweeps = tokio::spawn(sweeper::run(
            self.backend.clone(),
            self.settings.sweep_interval(),
            stop.clone(),
        ));
        let purges = tokio::spawn(sweeper::purge(
            self.backend.clone(),
            RETENTION_INTERVAL,
            self.retention,
            stop.clone(),
        ));
        let depth = tokio::spawn(sweeper::sample_depth(
            self.backend.clone(),
            DEPTH_SAMPLE_INTERVAL,
            stop.clone(),
        ));
        // The relay stops only after the last claim loop has decided its batch in hand, so
        // what those decisions recorded leaves with this process.
        let relay_stop = CancellationToken::new();
        let relay = tokio::spawn(relay::run(
            self.backend.clone(),
            self.settings.relay_interval(),
            relay_stop.clone(),
        ));
        for claim in claims {
            if let Err(error) = claim.await {
                warn!(%error, "a claim loop ended abnormally");
            }
        }
        relay_stop.cancel();
        let tasks = [
            ("sweeper", sweeps),
            ("retention", purges),
            ("relay", relay),
            ("depth", depth),
        ];
        for (name, task) in tasks {
            if let Err(error) = task.await {
                warn!(%error, name, "worker task ended abnormally");
            }
        }
        info!("worker stopped");
    }
}

/// Receive, decide, repeat; a batch's acknowledgements go with the next receive (one commit on the
/// embedded backend) and, at shutdown, on their own. A receive is never abandoned half-way (that
/// could hide messages for a visibility timeout), so shutdown waits at most one receive wait plus
/// one batch.
async fn claim_loop(
    backend: Backend,
    settings: WorkerSettings,
    queue: QueuePolicy,
    stop: CancellationToken,
) {
    let mut failures = 0_u32;
    let mut decided: Vec<Receipt> = Vec::new();
    while !stop.is_cancelled() {
        // Acknowledgements are not retried: one that is lost only brings its message back, to be
        // acknowledged as already decided, and a stale one must not wedge the loop.
        let done = std::mem::take(&mut decided);
        match backend
            .queue
            .acknowledge_and_receive(&done, queue.batch_size, settings.receive_wait())
            .await
        {
            Ok(deliveries) => {
                failures = 0;
                if deliveries.is_empty() {
                    continue;
                }
                let size = deliveries.len();
                let outcome;
                (outcome, decided) = decide_with_heartbeat(&backend, deliveries, queue).await;
                info!(size, ?outcome, "batch decided");
            }
            Err(error) => {
                failures = failures.saturating_add(1);
                let delay = backoff::delay_after(failures);
                warn!(%error, ?delay, "receive failed; backing off");
                tokio::select! {
                    () = stop.cancelled() => {}
                    () = tokio::time::sleep(delay) => {}
                }
            }
        }
    }
    if !decided.is_empty()
        && let Err(error) = backend.queue.delete(&decided).await
    {
        // The claims are committed; a redelivery will find them decided.
        warn!(%error, count = decided.len(), "could not acknowledge the last batch");
    }
}

/// Decides a batch while keeping its messages hidden: every half visibility timeout the batch's
/// visibility is extended, so a slow backend does not get the same intents handed to another worker.
async fn decide_with_heartbeat(
    backend: &Backend,
    deliveries: Vec<Delivery>,
    queue: QueuePolicy,
) -> (BatchOutcome, Vec<Receipt>) {
    let receipts: Vec<Receipt> = deliveries.iter().map(|d| d.receipt.clone()).collect();
    let period = queue.visibility_timeout / 2;
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let work = decide_batch(backend, deliveries, queue.limits);
    tokio::pin!(work);
    loop {
        tokio::select! {
            outcome = &mut work => return outcome,
            _ = heartbeat.tick() => {
                if let Err(error) = backend.queue.extend_visibility(&receipts, queue.visibility_timeout).await {
                    warn!(%error, "could not extend the batch's visibility");
                }
            }
        }
    }
}
