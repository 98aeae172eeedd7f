//! The memory intent queue, with the SQS semantics the worker relies on: at-least-once delivery,
//! a visibility timeout after which an unacknowledged message comes back, a receive count, and
//! a move to the dead-letter queue once a message was received too often. A receipt names the
//! message and its delivery (as the embedded queue's does), so a stale receipt acknowledges
//! nothing. The dead-letter queue's operations are in `dead_letters.rs`.

use std::collections::BTreeMap;
use std::time::Duration;

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};

use super::MemoryStore;
use crate::codec::{decode_message, delivery_of, delivery_receipt, encode_intent};
use crate::domain::{Intent, JobId};
use crate::ports::{BackendError, DeadLetter, Delivery, IntentQueue, Message, QueueDepth, Receipt};

/// Which queue a message is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// The main queue, waiting for a worker or in flight.
    Main,
    /// The dead-letter queue.
    Dead,
}

/// One message as stored.
#[derive(Debug, Clone)]
pub struct StoredMessage {
    /// Which queue holds it.
    pub lane: Lane,
    /// The body as sent.
    pub body: String,
    /// The job it belongs to.
    pub job_id: Option<JobId>,
    /// When it was first sent.
    pub sent_at: Timestamp,
    /// When it is next visible (in the main queue) or when it was dead-lettered.
    pub visible_at: Timestamp,
    /// Receives since it was sent or last redriven.
    pub receive_count: u32,
    /// Every delivery ever made of it (never reset): the receipt's second half.
    pub delivery: i64,
    /// Why it was dead-lettered.
    pub reason: Option<String>,
}

/// Both queues, by message id.
#[derive(Debug, Default)]
pub struct Queue {
    pub(super) messages: BTreeMap<i64, StoredMessage>,
    next_id: i64,
}

impl Queue {
    /// Every message of both queues, by id.
    pub fn messages(&self) -> impl Iterator<Item = (i64, &StoredMessage)> {
        self.messages.iter().map(|(id, message)| (*id, message))
    }

    /// Ready, in-flight and dead messages at `now`.
    #[must_use]
    pub fn depth(&self, now: Timestamp) -> QueueDepth {
        let mut depth = QueueDepth::default();
        for message in self.messages.values() {
            match message.lane {
                Lane::Main if message.visible_at <= now => depth.ready += 1,
                Lane::Main => depth.in_flight += 1,
                Lane::Dead => depth.dead += 1,
            }
        }
        depth
    }

    /// Adds a message to the main queue, visible at once.
    pub(super) fn push(&mut self, body: String, job_id: Option<JobId>, now: Timestamp) {
        self.push_at(body, job_id, now);
    }

    /// Adds a message to the main queue, sent and visible at `at`.
    pub(super) fn push_at(&mut self, body: String, job_id: Option<JobId>, now: Timestamp) {
        self.next_id += 1;
        self.messages.insert(
            self.next_id,
            StoredMessage {
                lane: Lane::Main,
                body,
                job_id,
                sent_at: now,
                visible_at: now,
                receive_count: 0,
                delivery: 0,
                reason: None,
            },
        );
    }

    /// The main-queue message a receipt names, if that delivery is still the latest one.
    pub(super) fn in_flight(&mut self, receipt: &Receipt) -> Option<(i64, &mut StoredMessage)> {
        let (id, delivery) = delivery_of(receipt).ok()?;
        self.messages
            .get_mut(&id)
            .filter(|m| m.lane == Lane::Main && m.delivery == delivery)
            .map(|message| (id, message))
    }

    /// Deletes acknowledged deliveries.
    fn acknowledge(&mut self, receipts: &[Receipt]) {
        for receipt in receipts {
            if let Some((id, _)) = self.in_flight(receipt) {
                self.messages.remove(&id);
            }
        }
    }

    /// Takes up to `max` visible messages, oldest visibility first, hiding each until
    /// `hidden_until`; one already received `max_receive_count` times is dead-lettered instead.
    fn take(
        &mut self,
        max: usize,
        now: Timestamp,
        hidden_until: Timestamp,
        max_receive_count: u32,
    ) -> Vec<Delivery> {
        let mut ready: Vec<(Timestamp, i64)> = self
            .messages
            .iter()
            .filter(|(_, m)| m.lane == Lane::Main && m.visible_at <= now)
            .map(|(id, m)| (m.visible_at, *id))
            .collect();
        ready.sort_unstable();
        let mut deliveries = Vec::new();
        for (_, id) in ready.into_iter().take(max) {
            let Some(message) = self.messages.get_mut(&id) else {
                continue;
            };
            if message.receive_count >= max_receive_count {
                let received = message.receive_count;
                message.lane = Lane::Dead;
                message.reason = Some(format!(
                    "received {received} times without being acknowledged"
                ));
                message.visible_at = now;
                continue;
            }
            message.receive_count += 1;
            message.delivery += 1;
            message.visible_at = hidden_until;
            deliveries.push(Delivery {
                receipt: delivery_receipt(id, message.delivery),
                message: decode_message(message.body.clone()),
                job_id: message.job_id,
                receive_count: message.receive_count,
                sent_at: message.sent_at,
            });
        }
        deliveries
    }
}

fn check_receipts(receipts: &[Receipt]) -> Result<(), BackendError> {
    receipts.iter().try_for_each(|r| delivery_of(r).map(drop))
}

/// `now` plus `by`, saturating.
pub(super) fn later(now: Timestamp, by: Duration) -> Timestamp {
    now.saturating_add(SignedDuration::try_from(by).unwrap_or(SignedDuration::MAX))
        .unwrap_or(Timestamp::MAX)
}

impl MemoryStore {
    /// Queues a message with any body, as a sender that does not speak the intent codec would:
    /// the simulator's way to put an undecodable message in front of the worker.
    pub fn send_raw(&self, body: &str, job_id: Option<JobId>) {
        let now = self.clock.now();
        self.lock().queue.push(body.to_owned(), job_id, now);
    }

    fn hide(&self, receipts: &[Receipt], for_: Duration) -> Result<(), BackendError> {
        check_receipts(receipts)?;
        let visible_at = later(self.clock.now(), for_);
        let mut state = self.lock();
        for receipt in receipts {
            if let Some((_, message)) = state.queue.in_flight(receipt) {
                message.visible_at = visible_at;
            }
        }
        Ok(())
    }
}

/// The memory queue never waits: its clock may be simulated, so a receive answers at once and a
/// caller that wants to wait polls (`wait` is accepted for the port's sake).
#[async_trait]
impl IntentQueue for MemoryStore {
    async fn send(&self, intents: &[Intent]) -> Result<(), BackendError> {
        let bodies = intents
            .iter()
            .map(|intent| Ok((encode_intent(intent)?, intent.job_id)))
            .collect::<Result<Vec<_>, BackendError>>()?;
        let now = self.clock.now();
        let mut state = self.lock();
        for (body, job_id) in bodies {
            state.queue.push(body, Some(job_id), now);
        }
        Ok(())
    }

    async fn receive(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BackendError> {
        self.acknowledge_and_receive(&[], max, wait).await
    }

    async fn acknowledge_and_receive(
        &self,
        done: &[Receipt],
        max: usize,
        _wait: Duration,
    ) -> Result<Vec<Delivery>, BackendError> {
        check_receipts(done)?;
        let now = self.clock.now();
        let hidden_until = later(now, self.settings.visibility_timeout);
        let mut state = self.lock();
        state.queue.acknowledge(done);
        // A sale that opens now has its pre-queue queued first, ahead of what follows.
        state.open_due(now);
        Ok(state
            .queue
            .take(max, now, hidden_until, self.settings.max_receive_count))
    }

    async fn delete(&self, receipts: &[Receipt]) -> Result<(), BackendError> {
        check_receipts(receipts)?;
        self.lock().queue.acknowledge(receipts);
        Ok(())
    }

    async fn retry_after(&self, receipt: &Receipt, delay: Duration) -> Result<(), BackendError> {
        self.hide(std::slice::from_ref(receipt), delay)
    }

    async fn extend_visibility(
        &self,
        receipts: &[Receipt],
        by: Duration,
    ) -> Result<(), BackendError> {
        self.hide(receipts, by)
    }

    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BackendError> {
        self.move_to_dead(delivery, reason)
    }

    async fn dead_letters(
        &self,
        limit: usize,
        _hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        // Listing hides nothing here, so there is nothing to hold.
        Ok(self.list_dead(limit))
    }

    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.redrive_dead(letters)
    }

    async fn release(&self, _letters: &[DeadLetter]) -> Result<(), BackendError> {
        Ok(())
    }

    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.purge_dead(letters)
    }

    async fn depth(&self) -> Result<QueueDepth, BackendError> {
        Ok(self.lock().queue.depth(self.clock.now()))
    }
}

/// What a dead letter's stored message reads as.
pub(super) fn decoded(message: &StoredMessage) -> Message {
    decode_message(message.body.clone())
}
