//! The dead-letter queue on SQS. A dead-lettered message is copied to the DLQ with its reason
//! and receive count as attributes, then deleted from the main queue; replay is receive-send-delete
//! the other way. Each move sends before it deletes, so a failure duplicates and never loses.

use std::collections::HashSet;
use std::time::Duration;

use aws_sdk_sqs::types::{Message as SqsMessage, MessageSystemAttributeName};
use jiff::Timestamp;

use crate::dynamo::error::classify;
use crate::queue::send_batcher::{Outgoing, SQS_BATCH, send_batch};
use crate::queue::sqs::{
    JOB_ID_ATTRIBUTE, REASON_ATTRIBUTE, RECEIVE_COUNT_ATTRIBUTE, SqsQueue, handle, seconds,
};
use seatclaim_core::codec::{decode_message, encode_message};
use seatclaim_core::domain::JobId;
use seatclaim_core::ports::{BackendError, DeadLetter, DeadLetterHandle, Delivery};

impl SqsQueue {
    /// Copies the message to the DLQ with the reason, then deletes it from the main queue. A crash
    /// in between leaves it in both: the DLQ copy is then a replay of a decided job, which is safe.
    pub(crate) async fn move_to_dead(
        &self,
        delivery: &Delivery,
        reason: &str,
    ) -> Result<(), BackendError> {
        let mut attributes = vec![
            (REASON_ATTRIBUTE, reason.to_owned()),
            (RECEIVE_COUNT_ATTRIBUTE, delivery.receive_count.to_string()),
        ];
        attributes.extend(delivery.job_id.map(|id| (JOB_ID_ATTRIBUTE, id.to_string())));
        let copy = Outgoing {
            body: encode_message(&delivery.message)?,
            attributes,
        };
        send_batch(&self.sqs, &self.dlq_url, &[copy])
            .await
            .into_iter()
            .collect::<Result<(), _>>()?;
        self.sqs
            .delete_message()
            .queue_url(&self.url)
            .receipt_handle(handle(&delivery.receipt))
            .send()
            .await
            .map_err(|e| classify("DeleteMessage", e))?;
        Ok(())
    }

    /// Up to `limit` dead letters, each hidden for `hold` (none with a zero hold: then a receive
    /// that brings nothing new ends the listing, and a large DLQ may be listed in part).
    pub(crate) async fn list_dead(
        &self,
        limit: usize,
        hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        let mut letters: Vec<DeadLetter> = Vec::new();
        let mut seen = HashSet::new();
        while letters.len() < limit {
            let output = self
                .sqs
                .receive_message()
                .queue_url(&self.dlq_url)
                .max_number_of_messages(
                    i32::try_from((limit - letters.len()).min(SQS_BATCH)).unwrap_or(10),
                )
                .wait_time_seconds(1)
                .visibility_timeout(seconds(hold))
                .message_attribute_names("All")
                .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
                .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
                .send()
                .await
                .map_err(|e| classify("ReceiveMessage DLQ", e))?;
            let before = letters.len();
            letters.extend(
                output
                    .messages()
                    .iter()
                    .filter(|m| seen.insert(m.message_id().unwrap_or_default().to_owned()))
                    .map(letter_of),
            );
            if letters.len() == before {
                break;
            }
        }
        Ok(letters)
    }

    /// Receive-send-delete: each message is sent to the main queue, and only then deleted from the
    /// DLQ (StartMessageMoveTask would move everything, with no per-job choice).
    pub(crate) async fn redrive_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let messages = letters
            .iter()
            .map(|letter| {
                Ok(Outgoing {
                    body: encode_message(&letter.message)?,
                    attributes: letter
                        .job_id
                        .map(|id| (JOB_ID_ATTRIBUTE, id.to_string()))
                        .into_iter()
                        .collect(),
                })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        for chunk in messages.chunks(SQS_BATCH) {
            send_batch(&self.sqs, &self.url, chunk)
                .await
                .into_iter()
                .collect::<Result<(), _>>()?;
        }
        self.delete_from(&self.dlq_url, &dead_handles(letters))
            .await
    }

    /// Ends the listing's hold on letters a command did not act on.
    pub(crate) async fn release_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.change_visibility(&self.dlq_url, &dead_handles(letters), Duration::ZERO)
            .await
    }

    /// Deletes listed dead letters for good.
    pub(crate) async fn purge_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.delete_from(&self.dlq_url, &dead_handles(letters))
            .await
    }
}

/// A DLQ message as a dead letter, with what its attributes say.
fn letter_of(message: &SqsMessage) -> DeadLetter {
    let attribute = |name: &str| {
        message
            .message_attributes()
            .and_then(|a| a.get(name))
            .and_then(|v| v.string_value())
            .map(str::to_owned)
    };
    let system = |name: MessageSystemAttributeName| {
        message
            .attributes()
            .and_then(|a| a.get(&name))
            .and_then(|v| v.parse::<i64>().ok())
    };
    DeadLetter {
        handle: DeadLetterHandle(message.receipt_handle().unwrap_or_default().to_owned()),
        message: decode_message(message.body().unwrap_or_default().to_owned()),
        job_id: attribute(JOB_ID_ATTRIBUTE)
            .as_deref()
            .and_then(JobId::parse),
        receive_count: attribute(RECEIVE_COUNT_ATTRIBUTE)
            .and_then(|n| n.parse().ok())
            .or_else(|| {
                system(MessageSystemAttributeName::ApproximateReceiveCount)
                    .and_then(|n| u32::try_from(n).ok())
            })
            .unwrap_or(0),
        reason: attribute(REASON_ATTRIBUTE)
            .or_else(|| Some("redriven by SQS after too many receives".to_owned())),
        dead_lettered_at: system(MessageSystemAttributeName::SentTimestamp)
            .and_then(|ms| Timestamp::from_millisecond(ms).ok())
            .unwrap_or_else(Timestamp::now),
    }
}

/// The SQS receipt handles the letters' handles are (another backend's is refused by SQS).
fn dead_handles(letters: &[DeadLetter]) -> Vec<&str> {
    letters
        .iter()
        .map(|letter| letter.handle.0.as_str())
        .collect()
}
