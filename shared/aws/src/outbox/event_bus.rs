use async_trait::async_trait;
use aws_sdk_eventbridge::types::PutEventsRequestEntry;

use crate::dynamo::error::classify;
use seatclaim_core::codec::{encode_event, to_json};
use seatclaim_core::domain::{EVENT_SOURCE, Notice, ReservationEvent};
use seatclaim_core::ports::{BackendError, EventPublisher};

/// EventBridge's limit on entries per PutEvents call.
const PUT_EVENTS_BATCH: usize = 10;

/// Publishes reservation events to a custom EventBridge bus: `source` is `seatclaim.reservations`,
/// `detail-type` is "Reservation Held" (Rejected, Failed, Sold, Expired, Cancelled), and `detail`
/// is the event's JSON.
pub struct EventBus {
    client: aws_sdk_eventbridge::Client,
    bus: String,
}

impl EventBus {
    /// A publisher to `bus`.
    pub(crate) fn new(client: aws_sdk_eventbridge::Client, bus: String) -> Self {
        Self { client, bus }
    }
}

#[async_trait]
impl EventPublisher for EventBus {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        let mut failed = Vec::new();
        for (chunk_index, chunk) in events.chunks(PUT_EVENTS_BATCH).enumerate() {
            let entries = chunk
                .iter()
                .map(|event| {
                    let detail = encode_event(event)?;
                    Ok(PutEventsRequestEntry::builder()
                        .event_bus_name(&self.bus)
                        .source(EVENT_SOURCE)
                        .detail_type(event.detail_type())
                        .detail(detail)
                        .build())
                })
                .collect::<Result<Vec<_>, BackendError>>()?;
            let output = self
                .client
                .put_events()
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| classify("PutEvents", e))?;
            // Entries come back in request order; one with an error code was not published and
            // is reported so the relay retries it alone.
            let base = chunk_index * PUT_EVENTS_BATCH;
            failed.extend(
                output
                    .entries()
                    .iter()
                    .enumerate()
                    .filter(|(_, entry)| entry.error_code().is_some())
                    .map(|(i, _)| base + i),
            );
        }
        Ok(failed)
    }

    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError> {
        let entry = PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(EVENT_SOURCE)
            .detail_type(notice.detail_type())
            .detail(to_json(notice)?)
            .build();
        let output = self
            .client
            .put_events()
            .entries(entry)
            .send()
            .await
            .map_err(|e| classify("PutEvents", e))?;
        match output
            .entries()
            .first()
            .and_then(|entry| entry.error_code())
        {
            Some(code) => Err(BackendError::transient(format!(
                "EventBridge refused the {}: {code}",
                notice.detail_type()
            ))),
            None => Ok(()),
        }
    }
}
