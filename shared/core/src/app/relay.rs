//! The use case "relay the outbox": publish reservation events recorded with each transition.
//! Publication is at-least-once (a crash between publishing and marking repeats a page), and it
//! never touches seats: follow-on work cannot roll a reservation back.

use crate::domain::{Notice, ReservationEvent};
use crate::ports::{Backend, BackendError, OutboxEntry};

/// Events read from the outbox per round; a full page means more may be waiting.
pub const RELAY_PAGE: usize = 100;

/// Publishes one page of the outbox (this relay's share of it); returns how many events were
/// published. Entries the
/// publisher reports as failed stay unpublished and are retried on the next round, alone.
pub async fn relay_once(backend: &Backend) -> Result<usize, BackendError> {
    let openings = publish_openings(backend).await?;
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
        return Ok(openings);
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
    Ok(openings + published.len())
}

/// Publishes the sales' openings drawn since the last round (`SaleOpened`), each marked once
/// the publisher took it: at least once, like every event.
async fn publish_openings(backend: &Backend) -> Result<usize, BackendError> {
    let openings = backend.catalog.unpublished_openings().await?;
    for opened in &openings {
        backend
            .publisher
            .publish_notice(&Notice::SaleOpened(opened.clone()))
            .await?;
        backend
            .catalog
            .opening_published(&opened.event_id, opened.channel.as_ref())
            .await?;
    }
    Ok(openings.len())
}

/// Publishes events decided without an outbox entry (`Claims::unrecorded`) and records them:
/// as published, or, for those the publisher refused (all of them if it failed), as waiting for
/// the relay. Either way each event is durable when this returns.
pub async fn publish_and_record(
    backend: &Backend,
    events: &[ReservationEvent],
) -> Result<(), BackendError> {
    if events.is_empty() {
        return Ok(());
    }
    let refused = match backend.publisher.publish(events).await {
        Ok(refused) => refused,
        Err(error) => {
            tracing::warn!(%error, count = events.len(), "events left to the relay: publishing failed");
            (0..events.len()).collect()
        }
    };
    backend.outbox.record(events, &refused).await?;
    let published = events.len() - refused.len();
    metrics::counter!("seatclaim_events_published_total").increment(published as u64);
    if !refused.is_empty() {
        metrics::counter!("seatclaim_publish_failures_total").increment(refused.len() as u64);
    }
    Ok(())
}
