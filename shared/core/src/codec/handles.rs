//! The handles the SQLite and in-memory adapters hand out, as the text the ports carry: a
//! queue delivery is `<message>.<delivery>`, a dead letter and an outbox entry their number. A
//! handle another backend made does not read as one of these, and is refused.

use crate::ports::{BackendError, DeadLetterHandle, OutboxId, Receipt};

/// The receipt of delivery `delivery` of message `message_id`.
#[must_use]
pub fn delivery_receipt(message_id: i64, delivery: i64) -> Receipt {
    Receipt(format!("{message_id}.{delivery}"))
}

/// The message and delivery a receipt names.
pub fn delivery_of(receipt: &Receipt) -> Result<(i64, i64), BackendError> {
    receipt
        .0
        .split_once('.')
        .and_then(|(message, delivery)| Some((message.parse().ok()?, delivery.parse().ok()?)))
        .ok_or_else(|| foreign("receipt"))
}

/// The handle of dead letter `message_id`.
#[must_use]
pub fn dead_letter_handle(message_id: i64) -> DeadLetterHandle {
    DeadLetterHandle(message_id.to_string())
}

/// The message a dead letter's handle names.
pub fn dead_letter_of(handle: &DeadLetterHandle) -> Result<i64, BackendError> {
    handle.0.parse().map_err(|_| foreign("dead letter handle"))
}

/// The handle of outbox entry `seq`.
#[must_use]
pub fn outbox_id(seq: i64) -> OutboxId {
    OutboxId(seq.to_string())
}

/// The sequence number an outbox handle names.
pub fn outbox_seq(id: &OutboxId) -> Result<i64, BackendError> {
    id.0.parse().map_err(|_| foreign("outbox id"))
}

fn foreign(what: &str) -> BackendError {
    BackendError::permanent(format!(
        "a {what} another backend made was handed to this one"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_read_back_and_another_backends_are_refused() {
        assert_eq!(delivery_of(&delivery_receipt(42, 3)).unwrap(), (42, 3));
        assert_eq!(dead_letter_of(&dead_letter_handle(7)).unwrap(), 7);
        assert_eq!(outbox_seq(&outbox_id(9)).unwrap(), 9);
        let sqs = "AQEBzbVbQ1w2KX+receipt/handle==";
        assert!(delivery_of(&Receipt(sqs.into())).is_err());
        assert!(dead_letter_of(&DeadLetterHandle(sqs.into())).is_err());
        assert!(outbox_seq(&OutboxId("e1#shard-3#0193".into())).is_err());
    }
}
