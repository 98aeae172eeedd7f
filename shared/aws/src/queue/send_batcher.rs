//! Batching of SQS sends. Admissions hand their message to one collector task; the collector waits
//! up to the linger (a few milliseconds) for company and sends up to ten messages in one
//! `SendMessageBatch`. A full batch leaves at once; under load batches fill well within the
//! linger, so a flash sale pays one send call per ten intents, and calls are limited in number in
//! flight so that a burst beyond that gathers too.

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_sqs::types::{MessageAttributeValue, SendMessageBatchRequestEntry};
use tokio::sync::{Semaphore, mpsc, oneshot};

use crate::dynamo::error::{build_error, classify};
use seatclaim_core::ports::BackendError;

/// SQS's limit on entries per batch call.
pub(crate) const SQS_BATCH: usize = 10;
/// Batch calls in flight at once per process; more requests wait and are batched.
const IN_FLIGHT: usize = 4;
/// Requests waiting for the collector; admissions wait for room beyond this.
const QUEUED: usize = 1_000;

/// One message to send, with its message attributes.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    /// The message body.
    pub body: String,
    /// `(name, value)` string attributes.
    pub attributes: Vec<(&'static str, String)>,
}

type Request = (Outgoing, oneshot::Sender<Result<(), BackendError>>);

/// The handle admissions send through.
pub(crate) struct SendBatcher {
    requests: mpsc::Sender<Request>,
}

impl SendBatcher {
    /// Starts the collector task for `url`; it ends when the batcher is dropped.
    pub(crate) fn start(sqs: aws_sdk_sqs::Client, url: String, linger: Duration) -> Self {
        let (requests, incoming) = mpsc::channel(QUEUED);
        tokio::spawn(collect(sqs, url, linger, incoming));
        Self { requests }
    }

    /// Sends one message, batched with any others waiting; returns once SQS has accepted it.
    pub(crate) async fn send(&self, message: Outgoing) -> Result<(), BackendError> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send((message, reply))
            .await
            .map_err(|_| BackendError::transient("the SQS sender has stopped"))?;
        answer
            .await
            .map_err(|_| BackendError::transient("the SQS sender dropped a message"))?
    }
}

async fn collect(
    sqs: aws_sdk_sqs::Client,
    url: String,
    linger: Duration,
    mut incoming: mpsc::Receiver<Request>,
) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(first) = incoming.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + linger;
        while batch.len() < SQS_BATCH {
            // Requests already waiting are taken even when the linger is zero or over.
            match tokio::time::timeout_at(deadline, incoming.recv()).await {
                Ok(Some(request)) => batch.push(request),
                Ok(None) | Err(_) => break,
            }
        }
        // Waiting for a free slot is what lets a burst beyond the linger gather too.
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let (sqs, url) = (sqs.clone(), url.clone());
        tokio::spawn(async move {
            let (messages, replies): (Vec<Outgoing>, Vec<_>) = batch.into_iter().unzip();
            let results = send_batch(&sqs, &url, &messages).await;
            for (reply, result) in replies.into_iter().zip(results) {
                let _ = reply.send(result);
            }
            drop(slot);
        });
    }
}

/// Sends up to ten messages in one call; one result per message, in order.
pub(crate) async fn send_batch(
    sqs: &aws_sdk_sqs::Client,
    url: &str,
    messages: &[Outgoing],
) -> Vec<Result<(), BackendError>> {
    let entries = messages
        .iter()
        .enumerate()
        .map(|(index, message)| {
            let mut entry = SendMessageBatchRequestEntry::builder()
                .id(index.to_string())
                .message_body(&message.body);
            for (name, value) in &message.attributes {
                let value = MessageAttributeValue::builder()
                    .data_type("String")
                    .string_value(value)
                    .build()
                    .map_err(build_error)?;
                entry = entry.message_attributes(*name, value);
            }
            entry.build().map_err(build_error)
        })
        .collect::<Result<Vec<_>, _>>();
    let entries = match entries {
        Ok(entries) => entries,
        Err(error) => return vec![Err(error); messages.len()],
    };
    let output = match sqs
        .send_message_batch()
        .queue_url(url)
        .set_entries(Some(entries))
        .send()
        .await
    {
        Ok(output) => output,
        Err(error) => return vec![Err(classify("SendMessageBatch", error)); messages.len()],
    };
    let mut results: Vec<Result<(), BackendError>> = vec![Ok(()); messages.len()];
    for failed in output.failed() {
        if let Some(slot) = failed
            .id()
            .parse::<usize>()
            .ok()
            .and_then(|i| results.get_mut(i))
        {
            let message = format!(
                "SendMessageBatch entry failed: {} {}",
                failed.code(),
                failed.message().unwrap_or("")
            );
            *slot = Err(if failed.sender_fault() {
                BackendError::permanent(message)
            } else {
                BackendError::transient(message)
            });
        }
    }
    results
}
