//! The embedded dead-letter queue: rows of the `messages` table in the `dead` queue, where
//! `visible_at` is when the message was dead-lettered. Every move is one statement, so a message
//! is never lost or duplicated between the two queues.

use rusqlite::params;

use super::EmbeddedStore;
use super::intent_queue::{DEAD, MAIN};
use crate::error::sqlite_error;
use seatclaim_core::codec::{
    dead_letter_handle, dead_letter_of, decode_message, delivery_of, from_ms, to_ms,
};
use seatclaim_core::domain::JobId;
use seatclaim_core::ports::{BackendError, DeadLetter, Delivery};

/// A dead letter's columns, as read.
type DeadRow = (i64, String, Option<String>, u32, Option<String>, i64);

impl EmbeddedStore {
    /// Moves a delivery, as received, to the dead-letter queue with the reason.
    pub(super) async fn move_to_dead(
        &self,
        delivery: &Delivery,
        reason: &str,
    ) -> Result<(), BackendError> {
        let (message_id, delivered) = delivery_of(&delivery.receipt)?;
        let reason = reason.to_owned();
        let now = to_ms(self.clock.now());
        self.db
            .write(move |tx| {
                tx.prepare_cached(
                    "UPDATE messages SET queue = ?3, reason = ?4, visible_at = ?5
                     WHERE message_id = ?1 AND delivery = ?2 AND queue = ?6",
                )
                .map_err(sqlite_error)?
                .execute(params![message_id, delivered, DEAD, reason, now, MAIN])
                .map_err(sqlite_error)?;
                Ok(())
            })
            .await
    }

    /// Up to `limit` dead letters, oldest first.
    pub(super) async fn list_dead(&self, limit: usize) -> Result<Vec<DeadLetter>, BackendError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db
            .read(move |tx| {
                let rows: Vec<DeadRow> = tx
                    .prepare_cached(
                        "SELECT message_id, body, job_id, receive_count, reason, visible_at FROM messages
                         WHERE queue = ?1 ORDER BY message_id LIMIT ?2",
                    ).map_err(sqlite_error)?
                    .query_map(params![DEAD, limit], |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?))
                    }).map_err(sqlite_error)?
                    .collect::<Result<_, _>>().map_err(sqlite_error)?;
                rows.into_iter()
                    .map(|(id, body, job_id, receive_count, reason, at)| {
                        Ok(DeadLetter {
                            handle: dead_letter_handle(id),
                            message: decode_message(body),
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

    /// Moves listed dead letters back to the main queue, receive count reset (as SQS's redrive).
    pub(super) async fn redrive_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let now = to_ms(self.clock.now());
        self.each_dead(
            letters,
            "UPDATE messages SET queue = 'intents', visible_at = ?3, receive_count = 0, reason = NULL
             WHERE message_id = ?1 AND queue = ?2",
            Some(now),
        )
        .await?;
        self.enqueued.notify_waiters();
        Ok(())
    }

    /// Deletes listed dead letters for good.
    pub(super) async fn purge_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        self.each_dead(
            letters,
            "DELETE FROM messages WHERE message_id = ?1 AND queue = ?2",
            None,
        )
        .await
    }

    /// Runs `statement` (`?1` the message, `?2` the dead queue, and `?3` the instant when given)
    /// for each listed letter, in one transaction.
    async fn each_dead(
        &self,
        letters: &[DeadLetter],
        statement: &'static str,
        at: Option<i64>,
    ) -> Result<(), BackendError> {
        let ids = letters
            .iter()
            .map(|letter| dead_letter_of(&letter.handle))
            .collect::<Result<Vec<_>, _>>()?;
        self.db
            .write(move |tx| {
                let mut each = tx.prepare_cached(statement).map_err(sqlite_error)?;
                for id in &ids {
                    match at {
                        Some(at) => each.execute(params![id, DEAD, at]).map_err(sqlite_error)?,
                        None => each.execute(params![id, DEAD]).map_err(sqlite_error)?,
                    };
                }
                Ok(())
            })
            .await
    }
}
