//! The embedded intent queue: a table with SQS's delivery semantics (see the `messages` table in
//! the schema). This file is the port and the main queue's acknowledgements; receiving is in
//! `receive.rs`, the dead-letter queue in `dead_letter_queue.rs`, depth in `queue_depth.rs`.

use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::EmbeddedStore;
use crate::error::sqlite_error;
use seatclaim_core::codec::{delivery_of, encode_intent, to_ms};
use seatclaim_core::domain::Intent;
use seatclaim_core::ports::{BackendError, DeadLetter, Delivery, IntentQueue, QueueDepth, Receipt};

/// The main queue's name in the `messages` table.
pub(super) const MAIN: &str = "intents";
/// The dead-letter queue's name in the `messages` table.
pub(super) const DEAD: &str = "dead";
/// How often a long poll looks for messages sent by other processes (same-process sends wake it at once).
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Adds one intent to the main queue inside the caller's transaction, so admission can make the
/// job and its message durable in one commit.
pub(super) fn enqueue(
    tx: &Transaction<'_>,
    intent: &Intent,
    now: Timestamp,
) -> Result<(), BackendError> {
    enqueue_body(
        tx,
        &encode_intent(intent)?,
        &intent.job_id.to_string(),
        to_ms(now),
    )
}

/// Adds an encoded intent to the main queue, sent and visible at `at_ms`.
pub(super) fn enqueue_body(
    tx: &Transaction<'_>,
    body: &str,
    job_id: &str,
    at_ms: i64,
) -> Result<(), BackendError> {
    tx.prepare_cached(
        "INSERT INTO messages (queue, body, job_id, sent_at, visible_at) VALUES (?1, ?2, ?3, ?4, ?4)",
    ).map_err(sqlite_error)?
    .execute(params![MAIN, body, job_id, at_ms]).map_err(sqlite_error)?;
    Ok(())
}

/// Whether the main queue holds no message at all (ready, in flight or waiting to be retried):
/// then an intent decided now is decided in its turn.
pub(super) fn is_empty(tx: &Transaction<'_>) -> Result<bool, BackendError> {
    let queued = tx
        .prepare_cached("SELECT 1 FROM messages WHERE queue = ?1 LIMIT 1")
        .map_err(sqlite_error)?
        .exists([MAIN])
        .map_err(sqlite_error)?;
    Ok(!queued)
}

#[async_trait]
impl IntentQueue for EmbeddedStore {
    async fn send(&self, intents: &[Intent]) -> Result<(), BackendError> {
        let intents = intents.to_vec();
        let now = self.clock.now();
        self.db
            .write(move |tx| {
                intents
                    .iter()
                    .try_for_each(|intent| enqueue(tx, intent, now))
            })
            .await?;
        self.enqueued.notify_waiters();
        Ok(())
    }

    async fn receive(&self, max: usize, wait: Duration) -> Result<Vec<Delivery>, BackendError> {
        self.acknowledge_and_receive(&[], max, wait).await
    }

    async fn acknowledge_and_receive(
        &self,
        done: &[Receipt],
        max: usize,
        wait: Duration,
    ) -> Result<Vec<Delivery>, BackendError> {
        let mut done = deliveries_of(done)?;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Register interest before looking, so a send between the look and the wait still wakes us.
            let woken = self.enqueued.notified();
            // The first look carries the acknowledgements.
            let batch = self.receive_now(std::mem::take(&mut done), max).await?;
            let now = tokio::time::Instant::now();
            if !batch.is_empty() || now >= deadline {
                return Ok(batch);
            }
            let pause = POLL_INTERVAL.min(deadline - now);
            tokio::select! {
                () = woken => {}
                () = tokio::time::sleep(pause) => {}
            }
        }
    }

    async fn delete(&self, receipts: &[Receipt]) -> Result<(), BackendError> {
        let deliveries = deliveries_of(receipts)?;
        self.db.write(move |tx| acknowledge(tx, &deliveries)).await
    }

    async fn retry_after(&self, receipt: &Receipt, delay: Duration) -> Result<(), BackendError> {
        self.hide(std::slice::from_ref(receipt), delay).await
    }

    async fn extend_visibility(
        &self,
        receipts: &[Receipt],
        by: Duration,
    ) -> Result<(), BackendError> {
        self.hide(receipts, by).await
    }

    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BackendError> {
        self.move_to_dead(delivery, reason).await
    }

    async fn dead_letters(
        &self,
        limit: usize,
        _hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        // SQLite reads do not hide anything, so there is nothing to hold.
        self.list_dead(limit).await
    }

    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.redrive_dead(letters).await
    }

    async fn release(&self, _letters: &[DeadLetter]) -> Result<(), BackendError> {
        // Listing holds nothing here.
        Ok(())
    }

    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.purge_dead(letters).await
    }

    async fn depth(&self) -> Result<QueueDepth, BackendError> {
        self.queue_depth().await
    }
}

/// Deletes acknowledged deliveries inside the caller's transaction.
pub(super) fn acknowledge(
    tx: &Transaction<'_>,
    deliveries: &[(i64, i64)],
) -> Result<(), BackendError> {
    let mut delete = tx
        .prepare_cached(
            "DELETE FROM messages WHERE message_id = ?1 AND delivery = ?2 AND queue = ?3",
        )
        .map_err(sqlite_error)?;
    for (message_id, delivery) in deliveries {
        delete
            .execute(params![message_id, delivery, MAIN])
            .map_err(sqlite_error)?;
    }
    Ok(())
}

fn deliveries_of(receipts: &[Receipt]) -> Result<Vec<(i64, i64)>, BackendError> {
    receipts.iter().map(delivery_of).collect()
}
