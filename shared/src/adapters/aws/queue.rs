//! The intent queue on SQS. The redrive policy (to the DLQ after a number of receives) is set on
//! the queue itself by `seatclaimctl init` or the deploy templates.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::types::{
    ChangeMessageVisibilityBatchRequestEntry, DeleteMessageBatchRequestEntry,
    MessageSystemAttributeName, QueueAttributeName,
};
use jiff::Timestamp;

use super::AwsNames;
use super::AwsSettings;
use super::error::{build_error, classify};
use super::send_batcher::{Outgoing, SQS_BATCH, SendBatcher, send_batch};
use crate::domain::{Intent, JobId};
use crate::ports::{BackendError, DeadLetter, Delivery, IntentQueue, QueueDepth, Receipt};

/// SQS's longest long poll.
const MAX_WAIT_SECONDS: u64 = 20;
/// The message attribute that carries the job id beside the body, so even an undecodable
/// message can fail its job, and so one job can be followed across processes in the logs.
pub(super) const JOB_ID_ATTRIBUTE: &str = "job_id";
/// The attribute the DLQ copy of a message carries to say why it was dead-lettered.
const REASON_ATTRIBUTE: &str = "dead_letter_reason";
/// The attribute the DLQ copy carries with the original message's receive count.
const RECEIVE_COUNT_ATTRIBUTE: &str = "receive_count";

/// The main queue and its dead-letter queue.
pub struct SqsQueue {
    sqs: aws_sdk_sqs::Client,
    sender: SendBatcher,
    url: String,
    dlq_url: String,
    visibility_timeout: Duration,
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

fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs()).unwrap_or(i32::MAX)
}

impl SqsQueue {
    /// Resolves the queue URLs (overrides first, else by name).
    pub(super) async fn connect(
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
        Ok(Self {
            sender: SendBatcher::start(sqs.clone(), url.clone(), settings.send_linger()),
            sqs,
            url,
            dlq_url,
            visibility_timeout,
        })
    }

    async fn delete_from(&self, url: &str, handles: &[&str]) -> Result<(), BackendError> {
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
    /// (visible, in flight) messages of a queue, as SQS approximates them.
    async fn attributes(&self, url: &str) -> Result<(u64, u64), BackendError> {
        let output = self
            .sqs
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await
            .map_err(|e| classify("GetQueueAttributes", e))?;
        let count = |name: QueueAttributeName| {
            output
                .attributes()
                .and_then(|a| a.get(&name))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Ok((
            count(QueueAttributeName::ApproximateNumberOfMessages),
            count(QueueAttributeName::ApproximateNumberOfMessagesNotVisible),
        ))
    }

    /// Sets the visibility of received messages of `url` to `by` from now.
    async fn change_visibility(
        &self,
        url: &str,
        receipts: &[Receipt],
        by: Duration,
    ) -> Result<(), BackendError> {
        for chunk in receipts.chunks(SQS_BATCH) {
            let entries = chunk
                .iter()
                .enumerate()
                .map(|(index, receipt)| {
                    ChangeMessageVisibilityBatchRequestEntry::builder()
                        .id(index.to_string())
                        .receipt_handle(&receipt.0)
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

pub(super) async fn queue_url(
    sqs: &aws_sdk_sqs::Client,
    name: &str,
) -> Result<String, BackendError> {
    let output = sqs
        .get_queue_url()
        .queue_name(name)
        .send()
        .await
        .map_err(|e| classify("GetQueueUrl", e))?;
    output
        .queue_url()
        .map(str::to_owned)
        .ok_or_else(|| BackendError::permanent(format!("queue {name} has no URL")))
}

#[async_trait]
impl IntentQueue for SqsQueue {
    async fn send(&self, intents: &[Intent]) -> Result<(), BackendError> {
        let messages = intents
            .iter()
            .map(|intent| {
                let body = serde_json::to_string(intent)
                    .map_err(|e| BackendError::permanent(format!("cannot encode intent: {e}")))?;
                Ok(Outgoing {
                    body,
                    attributes: vec![(JOB_ID_ATTRIBUTE, intent.job_id.to_string())],
                })
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let sent =
            futures_util::future::join_all(messages.into_iter().map(|m| self.sender.send(m))).await;
        sent.into_iter().collect()
    }

    async fn receive(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BackendError> {
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
        let deliveries = output
            .messages()
            .iter()
            .filter_map(|message| {
                let receipt = message.receipt_handle()?.to_owned();
                let system = message.attributes();
                let system_value = |name: MessageSystemAttributeName| {
                    system
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
                    body: message.body().unwrap_or_default().to_owned(),
                    job_id,
                    receive_count: system_value(
                        MessageSystemAttributeName::ApproximateReceiveCount,
                    )
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(1),
                    sent_at: system_value(MessageSystemAttributeName::SentTimestamp)
                        .and_then(|ms| Timestamp::from_millisecond(ms).ok())
                        .unwrap_or_else(Timestamp::now),
                })
            })
            .collect();
        Ok(deliveries)
    }

    async fn delete(&self, receipts: &[Receipt]) -> Result<(), BackendError> {
        let handles: Vec<&str> = receipts.iter().map(|r| r.0.as_str()).collect();
        self.delete_from(&self.url, &handles).await
    }

    async fn retry_after(&self, receipt: &Receipt, delay: Duration) -> Result<(), BackendError> {
        self.sqs
            .change_message_visibility()
            .queue_url(&self.url)
            .receipt_handle(&receipt.0)
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
        self.change_visibility(&self.url, receipts, by).await
    }

    /// Copies the message to the DLQ with the reason, then deletes it from the main queue. A crash
    /// in between leaves it in both: the DLQ copy is then a replay of a decided job, which is safe.
    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BackendError> {
        let mut attributes = vec![
            (REASON_ATTRIBUTE, reason.to_owned()),
            (RECEIVE_COUNT_ATTRIBUTE, delivery.receive_count.to_string()),
        ];
        attributes.extend(delivery.job_id.map(|id| (JOB_ID_ATTRIBUTE, id.to_string())));
        let copy = Outgoing {
            body: delivery.body.clone(),
            attributes,
        };
        send_batch(&self.sqs, &self.dlq_url, &[copy])
            .await
            .into_iter()
            .collect::<Result<(), _>>()?;
        self.sqs
            .delete_message()
            .queue_url(&self.url)
            .receipt_handle(&delivery.receipt.0)
            .send()
            .await
            .map_err(|e| classify("DeleteMessage", e))?;
        Ok(())
    }

    async fn dead_letters(
        &self,
        limit: usize,
        hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        let mut letters: Vec<DeadLetter> = Vec::new();
        let mut seen = std::collections::HashSet::new();
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
            // With no hold, listed messages stay visible and may come back: stop at the first
            // receive that brings nothing new.
            let fresh: Vec<_> = output
                .messages()
                .iter()
                .filter(|m| seen.insert(m.message_id().unwrap_or_default().to_owned()))
                .collect();
            if fresh.is_empty() {
                break;
            }
            for message in fresh {
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
                letters.push(DeadLetter {
                    handle: message.receipt_handle().unwrap_or_default().to_owned(),
                    body: message.body().unwrap_or_default().to_owned(),
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
                });
            }
        }
        Ok(letters)
    }

    /// Receive-send-delete: each message is sent to the main queue, and only then deleted from the
    /// DLQ (StartMessageMoveTask would move everything, with no per-job choice).
    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let messages: Vec<Outgoing> = letters
            .iter()
            .map(|letter| Outgoing {
                body: letter.body.clone(),
                attributes: letter
                    .job_id
                    .map(|id| (JOB_ID_ATTRIBUTE, id.to_string()))
                    .into_iter()
                    .collect(),
            })
            .collect();
        for chunk in messages.chunks(SQS_BATCH) {
            send_batch(&self.sqs, &self.url, chunk)
                .await
                .into_iter()
                .collect::<Result<(), _>>()?;
        }
        let handles: Vec<&str> = letters.iter().map(|l| l.handle.as_str()).collect();
        self.delete_from(&self.dlq_url, &handles).await
    }

    async fn release(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let handles: Vec<Receipt> = letters.iter().map(|l| Receipt(l.handle.clone())).collect();
        self.change_visibility(&self.dlq_url, &handles, Duration::ZERO)
            .await
    }

    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let handles: Vec<&str> = letters.iter().map(|l| l.handle.as_str()).collect();
        self.delete_from(&self.dlq_url, &handles).await
    }

    async fn depth(&self) -> Result<QueueDepth, BackendError> {
        let main = self.attributes(&self.url).await?;
        let dead = self.attributes(&self.dlq_url).await?;
        Ok(QueueDepth {
            ready: main.0,
            in_flight: main.1,
            dead: dead.0,
        })
    }
}
