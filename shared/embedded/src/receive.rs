//! Receiving from the embedded queue: a delivery's receipt, its visibility timeout, and the
//! redrive of a message received too often, all in the receiving transaction.

use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use rusqlite::params;

use super::EmbeddedStore;
use super::intent_queue::{DEAD, MAIN, acknowledge};
use super::opening_draw::{any_due, open_due};
use crate::error::sqlite_error;
use seatclaim_core::codec::{decode_message, delivery_of, delivery_receipt, from_ms, to_ms};
use seatclaim_core::domain::JobId;
use seatclaim_core::ports::{BackendError, Delivery, Receipt};

/// A ready message's columns, as read.
type Ready = (i64, String, Option<String>, i64, u32, i64);

impl EmbeddedStore {
    /// Acknowledges `done`, then takes up to `max` visible messages, in one transaction: each
    /// delivery gets its own receipt and is hidden for the visibility timeout; one already received
    /// `max_receive_count` times moves to the dead-letter queue instead.
    pub(super) async fn receive_now(
        &self,
        done: Vec<(i64, i64)>,
        max: usize,
    ) -> Result<Vec<Delivery>, BackendError> {
        let now = to_ms(self.clock.now());
        let hidden_until = to_ms(self.hidden_until(self.queue.visibility_timeout));
        let max_receive_count = self.queue.max_receive_count;
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        // An empty look takes no write lock: an idle worker polling the file would otherwise
        // queue for the lock behind the API's admissions, and they behind it, every poll.
        if done.is_empty() && !self.any_ready(now).await? {
            return Ok(Vec::new());
        }
        self.db
            .write(move |tx| {
                acknowledge(tx, &done)?;
                // A sale that opens now has its pre-queue queued first, ahead of what follows.
                open_due(tx, from_ms(now)?)?;
                let rows: Vec<Ready> = tx
                    .prepare_cached(
                        "SELECT message_id, body, job_id, sent_at, receive_count, delivery FROM messages
                         WHERE queue = ?1 AND visible_at <= ?2 ORDER BY visible_at, message_id LIMIT ?3",
                    ).map_err(sqlite_error)?
                    .query_map(params![MAIN, now, limit], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?))
                    }).map_err(sqlite_error)?
                    .collect::<Result<_, _>>().map_err(sqlite_error)?;
                let mut to_dead = tx.prepare_cached(
                    "UPDATE messages SET queue = ?2, reason = ?3, visible_at = ?4 WHERE message_id = ?1",
                ).map_err(sqlite_error)?;
                let mut deliver = tx.prepare_cached(
                    "UPDATE messages SET receive_count = receive_count + 1, delivery = ?3, visible_at = ?2
                     WHERE message_id = ?1",
                ).map_err(sqlite_error)?;
                let mut deliveries = Vec::with_capacity(rows.len());
                for (message_id, body, job_id, sent_at, received, delivered) in rows {
                    if received >= max_receive_count {
                        let reason =
                            format!("received {received} times without being acknowledged");
                        to_dead.execute(params![message_id, DEAD, reason, now]).map_err(sqlite_error)?;
                        continue;
                    }
                    let delivery = delivered + 1;
                    deliver.execute(params![message_id, hidden_until, delivery]).map_err(sqlite_error)?;
                    deliveries.push(Delivery {
                        receipt: delivery_receipt(message_id, delivery),
                        message: decode_message(body),
                        job_id: job_id.as_deref().and_then(JobId::parse),
                        receive_count: received + 1,
                        sent_at: from_ms(sent_at)?,
                    });
                }
                Ok(deliveries)
            })
            .await
    }

    /// Whether the main queue has a message visible at `now`, read without the write lock.
    async fn any_ready(&self, now: i64) -> Result<bool, BackendError> {
        self.db
            .lookup(move |tx| {
                let ready = tx
                    .prepare_cached(
                        "SELECT EXISTS (SELECT 1 FROM messages WHERE queue = ?1 AND visible_at <= ?2)",
                    ).map_err(sqlite_error)?
                    .query_row(params![MAIN, now], |row| row.get(0)).map_err(sqlite_error)?;
                Ok(ready || any_due(tx, now)?)
            })
            .await
    }

    /// Hides in-flight deliveries until `for_` from now (a retry's backoff, or a visibility extension).
    pub(super) async fn hide(
        &self,
        receipts: &[Receipt],
        for_: Duration,
    ) -> Result<(), BackendError> {
        let deliveries = receipts
            .iter()
            .map(delivery_of)
            .collect::<Result<Vec<_>, _>>()?;
        let visible_at = to_ms(self.hidden_until(for_));
        self.db
            .write(move |tx| {
                let mut hide = tx.prepare_cached(
                    "UPDATE messages SET visible_at = ?3 WHERE message_id = ?1 AND delivery = ?2 AND queue = ?4",
                ).map_err(sqlite_error)?;
                for (message_id, delivery) in &deliveries {
                    hide.execute(params![message_id, delivery, visible_at, MAIN]).map_err(sqlite_error)?;
                }
                Ok(())
            })
            .await
    }

    fn hidden_until(&self, for_: Duration) -> Timestamp {
        self.clock
            .now()
            .saturating_add(SignedDuration::try_from(for_).unwrap_or(SignedDuration::MAX))
            .unwrap_or(Timestamp::MAX)
    }
}
