use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;

use super::BackendError;
use crate::domain::{Intent, JobId};

/// How a queue redelivers: the two attributes of an SQS queue that every intent queue keeps,
/// the embedded and in-memory ones included (SQS's own are set on the queue itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redelivery {
    /// How long a received message stays hidden before it is delivered again.
    pub visibility_timeout: std::time::Duration,
    /// Receives after which a message goes to the dead-letter queue instead (the redrive policy).
    pub max_receive_count: u32,
}

/// The handle for acknowledging or rescheduling one delivery; stale once the message is
/// redelivered. Opaque: each queue writes its own (SQS's receipt handle, the embedded queue's
/// message and delivery number) and refuses one it cannot read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Receipt(pub String);

/// The handle of a listed dead letter, for replaying or purging it. Opaque like [`Receipt`]:
/// SQS's receipt handle of the listing's receive (valid for the listing's hold), or the
/// embedded queue's message number.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DeadLetterHandle(pub String);

/// What a queued message holds. A body that does not decode is kept as it came, so it can be
/// dead-lettered unchanged and its job (named beside it) failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// An intent.
    Intent(Intent),
    /// A body this build cannot read.
    Undecodable {
        /// The body as received.
        body: String,
        /// Why it does not decode.
        error: String,
    },
}

/// One delivery of a queued message, decoded; the job id travels beside the body (an SQS
/// message attribute) so even an undecodable message can fail its job.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// For delete, retry and dead-letter.
    pub receipt: Receipt,
    /// The intent, or the body that would not decode.
    pub message: Message,
    /// The job the message belongs to, if the attribute was present and valid.
    pub job_id: Option<JobId>,
    /// How many times the message has been received, this time included.
    pub receive_count: u32,
    /// When it was first sent.
    pub sent_at: Timestamp,
}

/// A message in the dead-letter queue, as operators list it.
#[derive(Debug, Clone)]
pub struct DeadLetter {
    /// The handle for replaying or purging it.
    pub handle: DeadLetterHandle,
    /// The intent, or the body that would not decode.
    pub message: Message,
    /// Its job, if the message named one.
    pub job_id: Option<JobId>,
    /// How often it had been received before it was dead-lettered.
    pub receive_count: u32,
    /// Why it was dead-lettered.
    pub reason: Option<String>,
    /// When it was dead-lettered.
    pub dead_lettered_at: Timestamp,
}

/// How many messages wait where.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueDepth {
    /// Visible in the main queue, waiting for a worker.
    pub ready: u64,
    /// Received and not yet acknowledged.
    pub in_flight: u64,
    /// In the dead-letter queue.
    pub dead: u64,
}

/// The intent queue, with the SQS semantics the worker relies on: at-least-once delivery, a
/// visibility timeout after which an unacknowledged message comes back, a receive count, and a
/// dead-letter queue that takes messages received too often.
#[async_trait]
pub trait IntentQueue: Send + Sync {
    /// Enqueues intents (in batches where the backend has them).
    async fn send(&self, intents: &[Intent]) -> Result<(), BackendError>;

    /// Waits up to `wait` for at least one message and returns up to `max`, each hidden from
    /// other receivers for the visibility timeout.
    async fn receive(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BackendError>;

    /// Acknowledges deliveries: they will not come back.
    async fn delete(&self, receipts: &[Receipt]) -> Result<(), BackendError>;

    /// Acknowledges `done` (as [`IntentQueue::delete`]), then receives (as
    /// [`IntentQueue::receive`]): the worker loop's turn from one batch to the next. A backend that
    /// can do both in one round trip overrides it (the embedded queue: one transaction, one commit).
    /// On error nothing was received, and the acknowledgements may or may not have been made.
    async fn acknowledge_and_receive(
        &self,
        done: &[Receipt],
        max: usize,
        wait: Duration,
    ) -> Result<Vec<Delivery>, BackendError> {
        if !done.is_empty() {
            self.delete(done).await?;
        }
        self.receive(max, wait).await
    }

    /// Makes a delivery visible again after `delay`: the backoff for a transient failure.
    async fn retry_after(&self, receipt: &Receipt, delay: Duration) -> Result<(), BackendError>;

    /// Keeps deliveries hidden for `by` from now: the heartbeat for a batch that runs long, so its
    /// messages are not delivered to another worker while this one is still deciding them.
    async fn extend_visibility(
        &self,
        receipts: &[Receipt],
        by: Duration,
    ) -> Result<(), BackendError>;

    /// Moves a delivery to the dead-letter queue with the reason, for operators to inspect and replay.
    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BackendError>;

    /// Up to `limit` dead-lettered messages. Listing reserves them for `hold` (on SQS, reading a
    /// message hides it) so that a replay or purge that follows can act on exactly these; a zero
    /// hold reserves nothing (a listing for people, which on SQS may miss some of a large queue).
    async fn dead_letters(
        &self,
        limit: usize,
        hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError>;

    /// Moves listed dead letters back to the main queue. The message is sent before it is deleted
    /// from the dead-letter queue, so a failure in between duplicates it and never loses it.
    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError>;

    /// Gives back listed dead letters that a command decided not to act on, so the next listing
    /// sees them at once (on SQS, ends their hold; elsewhere nothing to do).
    async fn release(&self, letters: &[DeadLetter]) -> Result<(), BackendError>;

    /// Deletes listed dead letters for good.
    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError>;

    /// The queue's depth, approximate where the backend only approximates it.
    async fn depth(&self) -> Result<QueueDepth, BackendError>;
}
