//! The outbox relay: publishes reservation events recorded with each transition. Publication is
//! at-least-once (a crash between publishing and marking repeats a page), and it never touches
//! seats: follow-on work cannot roll a reservation back.

use std::time::Duration;

use seatclaim_shared::Backend;
use seatclaim_shared::ports::BackendError;
use tokio_util::sync::CancellationToken;
use tracing::warn;

/// Events read from the outbox per round.
const RELAY_PAGE: usize = 100;

/// Publishes one page of the outbox; returns how many events were published. Entries the
/// publisher reports as failed stay unpublished and are retried on the next round, alone.
pub async fn relay_once(backend: &Backend) -> Result<usize, BackendError> {
    let entries = backend.outbox.unpublished(RELAY_PAGE).await?;
    let lag = entries.first().map_or(0.0, |oldest| {
        backend
            .clock
            .now()
            .duration_since(oldest.event.occurred_at)
            .as_secs_f64()
            .max(0.0)
    });
    metrics::gauge!("seatclaim_outbox_lag_seconds").set(lag);
    if entries.is_empty() {
        return Ok(0);
    }
    let events: Vec<_> = entries.iter().map(|entry| entry.event.clone()).collect();
    let failed = backend.publisher.publish(&events).await?;
    let published: Vec<String> = entries
        .into_iter()
        .enumerate()
        .filter(|(index, _)| !failed.contains(index))
        .map(|(_, entry)| entry.id)
        .collect();
    backend.outbox.mark_published(&published).await?;
    metrics::counter!("seatclaim_events_published_total").increment(published.len() as u64);
    if !failed.is_empty() {
        metrics::counter!("seatclaim_publish_failures_total").increment(failed.len() as u64);
    }
    Ok(published.len())
}

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
