//! The embedded queue: a table with SQS's delivery semantics (see the `messages` table in the schema).

use std::time::Duration;

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use rusqlite::{Transaction, params};

use super::EmbeddedStore;
use super::db::{from_ms, to_json, to_ms};
use crate::domain::{Intent, JobId};
use crate::ports::{BackendError, DeadLetter, Delivery, IntentQueue, QueueDepth, Receipt};

const MAIN: &str = "intents";
const DEAD: &str = "dead";
/// How often a long poll looks for messages sent by other processes (same-process sends wake it at once).
const POLL_INTERVAL: Duration = Duration::from_millis(25);

/// Adds one intent to the main queue inside the caller's transaction, so admission can make the
/// job and its message durable in one commit.
pub(super) fn enqueue(
    tx: &Transaction<'_>,
    intent: &Intent,
    now: Timestamp,
) -> Result<(), BackendError> {
    tx.prepare_cached(
        "INSERT INTO messages (queue, body, job_id, sent_at, visible_at) VALUES (?1, ?2, ?3, ?4, ?4)",
    )?
    .execute(params![MAIN, to_json(intent)?, intent.job_id.to_string(), to_ms(now)],
    )?;
    Ok(())
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
        let mut done = parse_receipts(done)?;
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
        let deliveries = parse_receipts(receipts)?;
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
        let (message_id, delivered) = parse_receipt(&delivery.receipt)?;
        let reason = reason.to_owned();
        let now = to_ms(self.clock.now());
        self.db
            .write(move |tx| {
                tx.prepare_cached(
                    "UPDATE messages SET queue = ?3, reason = ?4, visible_at = ?5
                     WHERE message_id = ?1 AND delivery = ?2 AND queue = ?6",
                )?
                .execute(params![message_id, delivered, DEAD, reason, now, MAIN])?;
                Ok(())
            })
            .await
    }

    async fn dead_letters(
        &self,
        limit: usize,
        _hold: Duration,
    ) -> Result<Vec<DeadLetter>, BackendError> {
        // SQLite reads do not hide anything, so there is nothing to hold.
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db
            .read(move |tx| {
                let mut query = tx.prepare_cached(
                    "SELECT message_id, body, job_id, receive_count, reason, visible_at FROM messages
                     WHERE queue = ?1 ORDER BY message_id LIMIT ?2",
                )?;
                let rows = query
                    .query_map(params![DEAD, limit], |row| {
                        Ok((
                            row.get::<_, i64>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, Option<String>>(2)?,
                            row.get::<_, u32>(3)?,
                            row.get::<_, Option<String>>(4)?,
                            row.get::<_, i64>(5)?,
                        ))
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                rows.into_iter()
                    .map(|(id, body, job_id, receive_count, reason, at)| {
                        Ok(DeadLetter {
                            handle: id.to_string(),
                            body,
                            job_id: job_id.as_deref().and_then(JobId::parse),
                            receive_count,
                            reason,
                            dead_lettered_at: from_ms(at)?,
                        })
                    })
                    .collect()
            })
            .await
    }

    async fn redrive(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let ids = message_ids(letters)?;
        let now = to_ms(self.clock.now());
        self.db
            .write(move |tx| {
                // One statement moves the message: it cannot be lost or duplicated on the way.
                let mut back = tx.prepare_cached(
                    "UPDATE messages SET queue = ?2, visible_at = ?3, receive_count = 0, reason = NULL
                     WHERE message_id = ?1 AND queue = ?4",
                )?;
                for id in &ids {
                    back.execute(params![id, MAIN, now, DEAD])?;
                }
                Ok(())
            })
            .await?;
        self.enqueued.notify_waiters();
        Ok(())
    }

    async fn release(&self, _letters: &[DeadLetter]) -> Result<(), BackendError> {
        // Listing holds nothing here.
        Ok(())
    }

    async fn purge(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let ids = message_ids(letters)?;
        self.db
            .write(move |tx| {
                let mut delete =
                    tx.prepare_cached("DELETE FROM messages WHERE message_id = ?1 AND queue = ?2")?;
                for id in &ids {
                    delete.execute(params![id, DEAD])?;
                }
                Ok(())
            })
            .await
    }

    async fn depth(&self) -> Result<QueueDepth, BackendError> {
        let now = to_ms(self.clock.now());
        self.db
            .read(move |tx| {
                let count =
                    |sql: &str, args: &[&dyn rusqlite::ToSql]| -> Result<u64, BackendError> {
                        Ok(tx
                            .query_row(sql, args, |row| row.get::<_, i64>(0))
                            .map(|n| u64::try_from(n).unwrap_or(0))?)
                    };
                Ok(QueueDepth {
                    ready: count(
                        "SELECT count(*) FROM messages WHERE queue = ?1 AND visible_at <= ?2",
                        &[&MAIN, &now],
                    )?,
                    in_flight: count(
                        "SELECT count(*) FROM messages WHERE queue = ?1 AND visible_at > ?2",
                        &[&MAIN, &now],
                    )?,
                    dead: count("SELECT count(*) FROM messages WHERE queue = ?1", &[&DEAD])?,
                })
            })
            .await
    }
}

fn message_ids(letters: &[DeadLetter]) -> Result<Vec<i64>, BackendError> {
    letters
        .iter()
        .map(|letter| letter.handle.parse::<i64>())
        .collect::<Result<_, _>>()
        .map_err(|e| BackendError::permanent(format!("not an embedded dead-letter handle: {e}")))
}

/// Deletes acknowledged deliveries inside the caller's transaction.
fn acknowledge(tx: &Transaction<'_>, deliveries: &[(i64, i64)]) -> Result<(), BackendError> {
    let mut delete = tx.prepare_cached(
        "DELETE FROM messages WHERE message_id = ?1 AND delivery = ?2 AND queue = ?3",
    )?;
    for (message_id, delivery) in deliveries {
        delete.execute(params![message_id, delivery, MAIN])?;
    }
    Ok(())
}

/// A receipt names one delivery of one message: `{message_id}.{delivery}`.
fn receipt_of(message_id: i64, delivery: i64) -> Receipt {
    Receipt(format!("{message_id}.{delivery}"))
}

fn parse_receipt(receipt: &Receipt) -> Result<(i64, i64), BackendError> {
    receipt
        .0
        .split_once('.')
        .and_then(|(id, delivery)| Some((id.parse().ok()?, delivery.parse().ok()?)))
        .ok_or_else(|| {
            BackendError::permanent(format!("not an embedded queue receipt: {:?}", receipt.0))
        })
}

fn parse_receipts(receipts: &[Receipt]) -> Result<Vec<(i64, i64)>, BackendError> {
    receipts.iter().map(parse_receipt).collect()
}

impl EmbeddedStore {
    /// Acknowledges `done`, then takes up to `max` visible messages, in one transaction: each
    /// delivery gets its own receipt and is hidden for the visibility timeout; one already received
    /// `max_receive_count` times moves to the dead-letter queue instead.
    async fn receive_now(
        &self,
        done: Vec<(i64, i64)>,
        max: usize,
    ) -> Result<Vec<Delivery>, BackendError> {
        let now = self.clock.now();
        let hidden_until = self.hidden_until(self.queue.visibility_timeout);
        let max_receive_count = self.queue.max_receive_count;
        let limit = i64::try_from(max).unwrap_or(i64::MAX);
        self.db
            .write(move |tx| {
                acknowledge(tx, &done)?;
                let mut ready = tx.prepare_cached(
                    "SELECT message_id, body, job_id, sent_at, receive_count, delivery FROM messages
                     WHERE queue = ?1 AND visible_at <= ?2 ORDER BY visible_at, message_id LIMIT ?3",
                )?;
                let rows = ready
                    .query_map(params![MAIN, to_ms(now), limit], |row| {
                        Ok((
                            row.get::<_, i64>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, Option<String>>(2)?,
                            row.get::<_, i64>(3)?,
                            row.get::<_, u32>(4)?,
                            row.get::<_, i64>(5)?,
                        ))
                    })?
                    .collect::<Result<Vec<_>, _>>()?;
                let mut to_dead = tx.prepare_cached(
                    "UPDATE messages SET queue = ?2, reason = ?3, visible_at = ?4 WHERE message_id = ?1",
                )?;
                let mut deliver = tx.prepare_cached(
                    "UPDATE messages SET receive_count = receive_count + 1, delivery = ?3, visible_at = ?2
                     WHERE message_id = ?1",
                )?;
                let mut deliveries = Vec::with_capacity(rows.len());
                for (message_id, body, job_id, sent_at, received, delivered) in rows {
                    if received >= max_receive_count {
                        let reason =
                            format!("received {received} times without being acknowledged");
                        to_dead.execute(params![message_id, DEAD, reason, to_ms(now)])?;
                        continue;
                    }
                    let delivery = delivered + 1;
                    deliver.execute(params![message_id, to_ms(hidden_until), delivery])?;
                    deliveries.push(Delivery {
                        receipt: receipt_of(message_id, delivery),
                        body,
                        job_id: job_id.as_deref().and_then(JobId::parse),
                        receive_count: received + 1,
                        sent_at: from_ms(sent_at)?,
                    });
                }
                Ok(deliveries)
            })
            .await
    }

    /// Hides in-flight deliveries until `for_` from now (a retry's backoff, or a visibility extension).
    async fn hide(&self, receipts: &[Receipt], for_: Duration) -> Result<(), BackendError> {
        let deliveries = parse_receipts(receipts)?;
        let visible_at = to_ms(self.hidden_until(for_));
        self.db
            .write(move |tx| {
                let mut hide = tx.prepare_cached(
                    "UPDATE messages SET visible_at = ?3 WHERE message_id = ?1 AND delivery = ?2 AND queue = ?4",
                )?;
                for (message_id, delivery) in &deliveries {
                    hide.execute(params![message_id, delivery, visible_at, MAIN])?;
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
