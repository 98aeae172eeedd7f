//! The intent queue on SQS: the port and the main queue. The redrive policy (to the DLQ after a
//! number of receives) is set on the queue itself by `seatclaimctl init` or the deploy templates.
//! The dead-letter queue is in `queue/dead_letters.rs`, depth in `queue/depth.rs`.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    Message as SqsMessage, MessageSystemAttributeName,
};
use jiff::Timestamp;

use crate::AwsNames;
use crate::AwsSettings;
use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::queue::send_batcher::{Outgoing, SQS_BATCH, SendBatcher};
use crate::setup::provision::queue_url;
use seatclaim_core::codec::{decode_message, encode_intent};
use seatclaim_core::domain::{Intent, JobId};
use seatclaim_core::ports::{BackendError, DeadLetter, Delivery, IntentQueue, QueueDepth, Receipt};

/// SQS's longest long poll.
const MAX_WAIT_SECONDS: u64 = 20;
/// The message attribute that carries the job id beside the body, so even an undecodable
/// message can fail its job, and so one job can be followed across processes in the logs.
pub(crate) const JOB_ID_ATTRIBUTE: &str = "job_id";
/// The attribute the DLQ copy of a message carries to say why it was dead-lettered.
pub(crate) const REASON_ATTRIBUTE: &str = "dead_letter_reason";
/// The attribute the DLQ copy carries with the original message's receive count.
pub(crate) const RECEIVE_COUNT_ATTRIBUTE: &str = "receive_count";

/// The main queue and its dead-letter queue.
pub struct SqsQueue {
    pub(crate) sqs: aws_sdk_sqs::Client,
    sender: SendBatcher,
    pub(crate) url: String,
    pub(crate) dlq_url: String,
    visibility_timeout: Duration,
    /// The store whose due sales each receive opens first (`opening/state.rs`): the first receive
    /// after a start releases the pre-queue ahead of everything sent after it.
    opener: std::sync::OnceLock<std::sync::Weak<DynamoStore>>,
    /// The settlements queue (`queue/settlements.rs`), where this process sends or serves them.
    pub(crate) settlements_url: Option<String>,
}

/// SQS waits in whole seconds: a wait under one second becomes one, never a short poll, which
/// would turn an idle worker into a busy loop.
fn long_poll_seconds(wait: Duration) -> i32 {
    let seconds = wait
        .as_millis()
        .div_ceil(1000)
        .min(u128::from(MAX_WAIT_SECONDS));
    i32::try_from(seconds).unwrap_or(1)
}

/// A duration in SQS's whole seconds.
pub(crate) fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs()).unwrap_or(i32::MAX)
}

impl SqsQueue {
    /// Resolves the queue URLs (overrides first, else by name).
    pub(crate) async fn connect(
        sqs: aws_sdk_sqs::Client,
        settings: &AwsSettings,
        names: &AwsNames,
        visibility_timeout: Duration,
    ) -> Result<Self, BackendError> {
        let url = match &settings.queue_url {
            Some(url) => url.clone(),
            None => queue_url(&sqs, &names.queue).await?,
        };
        let dlq_url = match &settings.dlq_url {
            Some(url) => url.clone(),
            None => queue_url(&sqs, &names.dlq).await?,
        };
        // Only the API and the worker use the settlements queue (and a stack older than it has none).
        let settlements_url = match settings.settlements {
            crate::Settlements::Here => None,
            _ => Some(queue_url(&sqs, &names.settlements_queue).await?),
        };
        Ok(Self {
            settlements_url,
            sender: SendBatcher::start(sqs.clone(), url.clone(), settings.send_linger()),
            sqs,
            url,
            dlq_url,
            visibility_timeout,
            opener: std::sync::OnceLock::new(),
        })
    }

    /// Makes each receive open `store`'s due sales first.
    pub(crate) fn open_sales_with(&self, store: &std::sync::Arc<DynamoStore>) {
        let _ = self.opener.set(std::sync::Arc::downgrade(store));
    }

    /// Deletes received messages of `url` by their receipt handles, in batches.
    pub(crate) async fn delete_from(
        &self,
        url: &str,
        handles: &[&str],
    ) -> Result<(), BackendError> {
        for chunk in handles.chunks(SQS_BATCH) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(index, handle)| {
                    DeleteMessageBatchRequestEntry::builder()
                        .id(index.to_string())
                        .receipt_handle(*handle)
                        .build()
                        .map_err(build_error)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let output = self
                .sqs
                .delete_message_batch()
                .queue_url(url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| classify("DeleteMessageBatch", e))?;
            if let Some(failed) = output.failed().first() {
                return Err(BackendError::transient(format!(
                    "DeleteMessageBatch entry failed: {}",
                    failed.code()
                )));
            }
        }
        Ok(())
    }
}

impl SqsQueue {
    /// Sets the visibility of received messages of `url` to `by` from now.
    pub(crate) async fn change_visibility(
        &self,
        url: &str,
        handles: &[&str],
        by: Duration,
    ) -> Result<(), BackendError> {
        for chunk in handles.chunks(SQS_BATCH) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(index, handle)| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(index.to_string())
                        .receipt_handle(*handle)
                        .visibility_timeout(seconds(by))
                        .build()
                        .map_err(build_error)
                })
                .collect::<Result<Vec<_>, _>>()?;
            self.sqs
                .change_message_visibility_batch()
                .queue_url(url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| classify("ChangeMessageVisibilityBatch", e))?;
        }
        Ok(())
    }
}

#[async_trait]
impl IntentQueue for SqsQueue {
    async fn send(&self, intents: &[Intent]) -> Result<(), BackendError> {
        let messages = intents
            .iter()
            .map(|intent| {
                Ok(Outgoing {
                    body: encode_intent(intent)?,
                    attributes: vec![(JOB_ID_ATTRIBUTE, intent.job_id.to_string())],
                })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let sent =
            futures_util::future::join_all(messages.into_iter().map(|m| self.sender.send(m))).await;
        sent.into_iter().collect()
    }

    async fn receive(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BackendError> {
        if let Some(store) = self.opener.get().and_then(std::sync::Weak::upgrade)
            && let Err(error) = store.open_due_sales().await
        {
            tracing::warn!(%error, "opening a sale failed; the next receive tries again");
        }
        let output = self
            .sqs
            .receive_message()
            .queue_url(&self.url)
            .max_number_of_messages(i32::try_from(max.clamp(1, SQS_BATCH)).unwrap_or(10))
            .wait_time_seconds(long_poll_seconds(wait))
            .visibility_timeout(seconds(self.visibility_timeout))
            .message_attribute_names(JOB_ID_ATTRIBUTE)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .message_system_attribute_names(MessageSystemAttributeName::SentTimestamp)
            .send()
            .await
            .map_err(|e| classify("ReceiveMessage", e))?;
        Ok(output.messages().iter().filter_map(delivery_of).collect())
    }

    async fn delete(&self, receipts: &[Receipt]) -> Result<(), BackendError> {
        self.delete_from(&self.url, &handles(receipts)).await
    }

    async fn retry_after(&self, receipt: &Receipt, delay: Duration) -> Result<(), BackendError> {
        self.sqs
            .change_message_visibility()
            .queue_url(&self.url)
            .receipt_handle(handle(receipt))
            .visibility_timeout(seconds(delay))
            .send()
            .await
            .map_err(|e| classify("ChangeMessageVisibility", e))?;
        Ok(())
    }

    async fn extend_visibility(
        &self,
        receipts: &[Receipt],
        by: Duration,
    ) -> Result<(), BackendError> {
        self.change_visibility(&self.url, &handles(receipts), by)
            .await
    }

    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BackendError> {
        self.move_to_dead(delivery, reason).await
    }

    async fn dead_letters(
        &self,
        limit: usize,
        hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        self.list_dead(limit, hold).await
    }

    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.redrive_dead(letters).await
    }

    async fn release(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.release_dead(letters).await
    }

    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.purge_dead(letters).await
    }

    async fn depth(&self) -> Result<QueueDepth, BackendError> {
        self.queue_depth().await
    }
}

/// A received message as a delivery, decoded; `None` for one without a receipt handle.
fn delivery_of(message: &SqsMessage) -> Option<Delivery> {
    let receipt = message.receipt_handle()?.to_owned();
    let system_value = |name: MessageSystemAttributeName| {
        message
            .attributes()
            .and_then(|a| a.get(&name))
            .and_then(|v| v.parse::<i64>().ok())
    };
    let job_id = message
        .message_attributes()
        .and_then(|a| a.get(JOB_ID_ATTRIBUTE))
        .and_then(|v| v.string_value())
        .and_then(JobId::parse);
    Some(Delivery {
        receipt: Receipt(receipt),
        message: decode_message(message.body().unwrap_or_default().to_owned()),
        job_id,
        receive_count: system_value(MessageSystemAttributeName::ApproximateReceiveCount)
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(1),
        sent_at: system_value(MessageSystemAttributeName::SentTimestamp)
            .and_then(|ms| Timestamp::from_millisecond(ms).ok())
            .unwrap_or_else(Timestamp::now),
    })
}

/// The SQS receipt handle a receipt holds (another queue's receipt is refused by SQS).
pub(crate) fn handle(receipt: &Receipt) -> &str {
    &receipt.0
}

fn handles(receipts: &[Receipt]) -> Vec<&str> {
    receipts.iter().map(handle).collect()
}
