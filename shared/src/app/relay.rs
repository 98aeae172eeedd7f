//! The use case "relay the outbox": publish reservation events recorded with each transition.
//! Publication is at-least-once (a crash between publishing and marking repeats a page), and it
//! never touches seats: follow-on work cannot roll a reservation back.

use crate::ports::{Backend, BackendError, OutboxEntry};

/// Events read from the outbox per round; a full page means more may be waiting.
pub const RELAY_PAGE: usize = 100;

/// Publishes one page of the outbox (this relay's share of it); returns how many events were
/// published. Entries the
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
    let published: Vec<OutboxEntry> = entries
        .into_iter()
        .enumerate()
        .filter(|(index, _)| !failed.contains(index))
        .map(|(_, entry)| entry)
        .collect();
    backend.outbox.mark_published(&published).await?;
    metrics::counter!("seatclaim_events_published_total").increment(published.len() as u64);
    if !failed.is_empty() {
        metrics::counter!("seatclaim_publish_failures_total").increment(failed.len() as u64);
    }
    Ok(published.len())
}
