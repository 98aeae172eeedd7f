//! The embedded outbox: rows recorded with each transition, read in order by the relay, which
//! follows them by a cursor: publishing a page moves one number instead of rewriting its rows.

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{OptionalExtension, params};

use super::EmbeddedStore;
use crate::error::sqlite_error;
use seatclaim_core::codec::{decode_event, encode_event, from_ms, outbox_id, outbox_seq, to_ms};
use seatclaim_core::domain::ReservationEvent;
use seatclaim_core::ports::{BackendError, Outbox, OutboxEntry};

#[async_trait]
impl Outbox for EmbeddedStore {
    /// One relay reads the whole outbox by sequence number.
    fn short_page_drains(&self) -> bool {
        true
    }

    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db
            .read(move |tx| {
                let mut query = tx
                    .prepare_cached(
                        "SELECT seq, body FROM outbox
                     WHERE seq > (SELECT published_through FROM relay_cursor)
                       AND published_at IS NULL
                     ORDER BY seq LIMIT ?1",
                    )
                    .map_err(sqlite_error)?;
                let rows = query
                    .query_map([limit], |row| {
                        Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?))
                    })
                    .map_err(sqlite_error)?;
                rows.map(|row| {
                    let (seq, body) = row.map_err(sqlite_error)?;
                    Ok(OutboxEntry {
                        id: outbox_id(seq),
                        event: decode_event(&body)?,
                    })
                })
                .collect()
            })
            .await
    }

    async fn mark_published(&self, entries: &[OutboxEntry]) -> Result<(), BackendError> {
        let mut seqs = entries
            .iter()
            .map(|entry| outbox_seq(&entry.id))
            .collect::<Result<Vec<_>, _>>()?;
        seqs.sort_unstable();
        let now = to_ms(self.clock.now());
        self.db.write(move |tx| advance(tx, &seqs, now)).await
    }

    async fn record(
        &self,
        events: &[ReservationEvent],
        refused: &[usize],
    ) -> Result<(), BackendError> {
        let now = to_ms(self.clock.now());
        let rows = events
            .iter()
            .enumerate()
            .map(|(i, event)| {
                let published = (!refused.contains(&i)).then_some(now);
                Ok((
                    event.job_id.to_string(),
                    encode_event(event)?,
                    to_ms(event.occurred_at),
                    published,
                ))
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        self.db
            .write(move |tx| {
                let mut insert = tx.prepare_cached(
                    "INSERT INTO outbox (job_id, body, created_at, published_at) VALUES (?1, ?2, ?3, ?4)",
                ).map_err(sqlite_error)?;
                for (job_id, body, at, published) in &rows {
                    insert.execute(params![job_id, body, at, published]).map_err(sqlite_error)?;
                }
                Ok(())
            })
            .await
    }

    async fn oldest_unpublished(&self) -> Result<Option<Timestamp>, BackendError> {
        let oldest: Option<i64> = self
            .db
            .read(|tx| {
                tx.query_row(
                    "SELECT created_at FROM outbox
                         WHERE seq > (SELECT published_through FROM relay_cursor)
                           AND published_at IS NULL
                         ORDER BY seq LIMIT 1",
                    [],
                    |row| row.get(0),
                )
                .optional()
                .map_err(sqlite_error)
            })
            .await?;
        oldest.map(from_ms).transpose()
    }
}

/// Marks `seqs` (in order) published: the cursor moves over every entry up to the first
/// unpublished one not among them (the whole page, unless the publisher refused an entry of it);
/// only the entries past such a gap are marked one by one, until the gap is published too.
fn advance(tx: &rusqlite::Transaction<'_>, seqs: &[i64], now: i64) -> Result<(), BackendError> {
    let Some(&last) = seqs.last() else {
        return Ok(());
    };
    let cursor: i64 = tx
        .prepare_cached("SELECT published_through FROM relay_cursor")
        .map_err(sqlite_error)?
        .query_row([], |row| row.get(0))
        .map_err(sqlite_error)?;
    // The first unpublished entry past the cursor that is not being marked now, if any lies
    // below the last one being marked.
    let waiting: Vec<i64> = tx
        .prepare_cached(
            "SELECT seq FROM outbox WHERE seq > ?1 AND seq <= ?2 AND published_at IS NULL
             ORDER BY seq",
        )
        .map_err(sqlite_error)?
        .query_map(params![cursor, last], |row| row.get(0))
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    let gap = waiting
        .into_iter()
        .find(|seq| seqs.binary_search(seq).is_err());
    let through = gap.map_or(last, |gap| gap - 1);
    if through > cursor {
        tx.prepare_cached("UPDATE relay_cursor SET published_through = ?1")
            .map_err(sqlite_error)?
            .execute([through])
            .map_err(sqlite_error)?;
    }
    let mut mark = tx
        .prepare_cached("UPDATE outbox SET published_at = ?2 WHERE seq = ?1")
        .map_err(sqlite_error)?;
    for seq in seqs.iter().filter(|seq| **seq > through) {
        mark.execute(params![seq, now]).map_err(sqlite_error)?;
    }
    Ok(())
}
