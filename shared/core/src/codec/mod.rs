//! One codec per stored shape, shared by every adapter: the intent message, the job, the seat
//! and the reservation event, each encoded and checked in one place. An adapter maps its rows or
//! items to these records and back; what a stored value means is decided here, not per backend.
//! Unreadable stored data is a permanent error: retrying will not change it.

mod channels;
mod handles;
mod job;
mod seat;

use jiff::Timestamp;

pub use channels::{decode_channels, encode_channels};
pub use handles::{
    dead_letter_handle, dead_letter_of, delivery_of, delivery_receipt, outbox_id, outbox_seq,
};
pub use job::{JobRecord, encode_payment, reason_code};
pub use seat::SeatRecord;

use jiff::SignedDuration;

use crate::domain::{
    EventId, HoldExtension, Intent, PAYMENT_UNMATCHED, Prices, ReservationEvent, SeatLimit,
    Waitlist,
};
use crate::ports::{BackendError, EventInfo, Message};

/// An event's list entry from its stored values; a stored value the domain refuses is unreadable data.
pub fn event_info(
    event_id: &str,
    name: String,
    hold_ms: i64,
    limit: Option<i64>,
    prices: Option<&str>,
    extension: Option<&str>,
    waitlist: Waitlist,
) -> Result<EventInfo, BackendError> {
    let unreadable = |what: &str| BackendError::permanent(format!("event {event_id}: {what}"));
    Ok(EventInfo {
        event_id: EventId::parse(event_id).map_err(|e| unreadable(&e.to_string()))?,
        name,
        hold: SignedDuration::from_millis(hold_ms),
        max_seats_per_buyer: seat_limit(event_id, limit)?,
        prices: decode_prices(prices)?,
        extension: decode_extension(extension)?,
        waitlist,
        sale_starts_at: None,
        channels: crate::domain::Channels::default(),
    })
}

/// An event's stored per-buyer seat limit (a count the domain must accept), or none.
pub fn seat_limit(event_id: &str, stored: Option<i64>) -> Result<Option<SeatLimit>, BackendError> {
    stored
        .map(|seats| {
            u32::try_from(seats)
                .ok()
                .and_then(|seats| SeatLimit::parse(seats).ok())
                .ok_or_else(|| {
                    BackendError::permanent(format!(
                        "event {event_id} has an invalid max_seats_per_buyer {seats}"
                    ))
                })
        })
        .transpose()
}

/// An event's stored price list: JSON, or `None` when every seat is free.
pub fn encode_prices(prices: &Prices) -> Result<Option<String>, BackendError> {
    (!prices.is_free()).then(|| to_json(prices)).transpose()
}

/// Reads an event's stored price list back (none stored: every seat is free).
pub fn decode_prices(stored: Option<&str>) -> Result<Prices, BackendError> {
    stored.map_or_else(|| Ok(Prices::default()), from_json)
}

/// An event's extension terms as stored.
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredExtension {
    step_ms: i64,
    max: u32,
}

/// An event's extension terms to store: JSON, or `None` for an event that allows none (and
/// every event created before extensions existed, which reads back the same way).
pub fn encode_extension(extension: HoldExtension) -> Result<Option<String>, BackendError> {
    extension
        .allowed()
        .then(|| {
            to_json(&StoredExtension {
                step_ms: i64::try_from(extension.step.as_millis()).unwrap_or(i64::MAX),
                max: extension.max,
            })
        })
        .transpose()
}

/// Reads an event's stored extension terms back.
pub fn decode_extension(stored: Option<&str>) -> Result<HoldExtension, BackendError> {
    let Some(text) = stored else {
        return Ok(HoldExtension::NONE);
    };
    let stored: StoredExtension = from_json(text)?;
    Ok(HoldExtension {
        step: SignedDuration::from_millis(stored.step_ms),
        max: stored.max,
    })
}

/// Reads an event's stored waitlist state back.
pub fn decode_waitlist(event_id: &str, stored: &str) -> Result<Waitlist, BackendError> {
    Waitlist::parse(stored).ok_or_else(|| {
        BackendError::permanent(format!(
            "event {event_id} has an unknown waitlist {stored:?}"
        ))
    })
}

/// Encodes a value as the JSON text stored in a column or attribute.
pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String, BackendError> {
    serde_json::to_string(value)
        .map_err(|e| BackendError::permanent(format!("cannot encode for storage: {e}")))
}

/// Decodes stored JSON text.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, BackendError> {
    serde_json::from_str(text)
        .map_err(|e| BackendError::permanent(format!("stored JSON is unreadable: {e}")))
}

/// Instants are stored as Unix milliseconds.
#[must_use]
pub fn to_ms(at: Timestamp) -> i64 {
    at.as_millisecond()
}

/// Reads a stored instant back.
pub fn from_ms(ms: i64) -> Result<Timestamp, BackendError> {
    Timestamp::from_millisecond(ms)
        .map_err(|e| BackendError::permanent(format!("stored instant {ms} is out of range: {e}")))
}

/// The body of an intent's queue message.
pub fn encode_intent(intent: &Intent) -> Result<String, BackendError> {
    to_json(intent)
}

/// A received message body as the worker sees it: the intent, or the body kept as it came with
/// why it does not decode (so dead-lettering moves it unchanged).
#[must_use]
pub fn decode_message(body: String) -> Message {
    match serde_json::from_str::<Intent>(&body) {
        Ok(intent) => Message::Intent(intent),
        Err(error) => Message::Undecodable {
            body,
            error: error.to_string(),
        },
    }
}

/// A message's body, to send it on (to the dead-letter queue, or back).
pub fn encode_message(message: &Message) -> Result<String, BackendError> {
    match message {
        Message::Intent(intent) => encode_intent(intent),
        Message::Undecodable { body, .. } => Ok(body.clone()),
    }
}

/// A reservation event as stored in the outbox and published (EventBridge `detail`, log line).
pub fn encode_event(event: &ReservationEvent) -> Result<String, BackendError> {
    to_json(event)
}

/// Reads a stored reservation event back; one recorded before codes gets the code of its
/// reason.
pub fn decode_event(text: &str) -> Result<ReservationEvent, BackendError> {
    from_json(text).map(with_reason_code)
}

/// The event with the code of its reason, read from its status and text if it has none.
fn with_reason_code(mut event: ReservationEvent) -> ReservationEvent {
    if event.reason_code.is_none() {
        event.reason_code = reason_code(event.status, None, event.reason.as_deref());
    }
    event
}

/// Reads the reservation event of one line of an events log: the embedded backend's
/// `events.jsonl`, or the event bus's events exported in the same shape (the event in `detail`).
/// `None`: the line records no job's transition (a `PaymentUnmatched`).
pub fn decode_log_line(line: &str) -> Result<Option<ReservationEvent>, BackendError> {
    #[derive(serde::Deserialize)]
    struct Line {
        #[serde(rename = "detail-type")]
        detail_type: Option<String>,
        detail: serde_json::Value,
    }
    let line: Line = from_json(line)?;
    if line.detail_type.as_deref() == Some(PAYMENT_UNMATCHED) {
        return Ok(None);
    }
    serde_json::from_value(line.detail)
        .map(|event| Some(with_reason_code(event)))
        .map_err(|e| BackendError::permanent(format!("stored JSON is unreadable: {e}")))
}

#[cfg(test)]
mod tests;
