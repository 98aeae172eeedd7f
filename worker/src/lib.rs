//! The claim worker: receives intents in batches and decides them against the inventory, releases
//! lapsed holds, and relays recorded reservation events to the publisher.
//!
//! It is a library so that the API binary can run it in-process for a one-command local setup;
//! `seatclaim-worker` runs the same [`Worker`] as its own process (its shape on Fargate).

mod backoff;
mod process;
mod relay;
mod settings;
mod sweeper;

use seatclaim_shared::Backend;
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

pub use process::{BatchOutcome, process_batch};
pub use relay::relay_once;
pub use settings::WorkerSettings;
pub use sweeper::sweep_once;

/// The worker's three loops over one backend.
pub struct Worker {
    backend: Backend,
    settings: WorkerSettings,
    max_attempts: u32,
}

impl Worker {
    /// A worker that gives each intent `max_attempts` receives before dead-lettering it.
    #[must_use]
    pub fn new(backend: Backend, settings: WorkerSettings, max_attempts: u32) -> Self {
        Self {
            backend,
            settings,
            max_attempts,
        }
    }

    /// Runs until `stop` is cancelled, then finishes the batch in hand (its claims commit and are
    /// acknowledged), lets the relay publish what is recorded, and returns.
    pub async fn run(self, stop: CancellationToken) {
        let claims = tokio::spawn(claim_loop(
            self.backend.clone(),
            self.settings.clone(),
            self.max_attempts,
            stop.clone(),
        ));
        let sweeps = tokio::spawn(sweeper::run(
            self.backend.clone(),
            self.settings.sweep_interval(),
            stop.clone(),
        ));
        let relay = tokio::spawn(relay::run(
            self.backend.clone(),
            self.settings.relay_interval(),
            stop.clone(),
        ));
        for (name, task) in [("claims", claims), ("sweeper", sweeps), ("relay", relay)] {
            if let Err(error) = task.await {
                warn!(%error, name, "worker task ended abnormally");
            }
        }
        info!("worker stopped");
    }
}

/// Receive, decide, repeat. A receive is never abandoned half-way (that could hide messages for a
/// visibility timeout), so shutdown waits at most one receive wait plus one batch.
async fn claim_loop(
    backend: Backend,
    settings: WorkerSettings,
    max_attempts: u32,
    stop: CancellationToken,
) {
    let mut failures = 0_u32;
    while !stop.is_cancelled() {
        match backend
            .queue
            .receive(usize::from(settings.batch_size), settings.receive_wait())
            .await
        {
            Ok(deliveries) if deliveries.is_empty() => {}
            Ok(deliveries) => {
                failures = 0;
                let size = deliveries.len();
                let outcome = process_batch(&backend, deliveries, max_attempts).await;
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
}
