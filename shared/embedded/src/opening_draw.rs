//! The draw of a sale's openings on SQLite: the first receive at or after a start draws its
//! pre-queue's order (the domain's [`Draw`], from a seed of the operating system's CSPRNG),
//! queues the intents in it and records the draw (on the event's row for its own start, on the
//! channel's `channel_openings` row for a channel's), in the receive's own transaction: nothing
//! waiting for a start is received before its opening, and a crash leaves either no draw or all
//! of it.

use std::collections::HashMap;

use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::intent_queue::enqueue_body;
use crate::error::sqlite_error;
use seatclaim_core::codec::{from_ms, to_ms};
use seatclaim_core::domain::{
    ChannelName, Channels, Draw, EventId, JobId, SaleOpened, Seed, Start,
};
use seatclaim_core::ports::{BackendError, Opening};

/// The openings not drawn yet, as `(event, channel, start)`: the event's own (channel `NULL`)
/// and every channel's.
const UNDRAWN: &str = "SELECT event_id, NULL, sale_starts_at FROM events
                       WHERE sale_starts_at IS NOT NULL AND opening IS NULL
                         AND sale_starts_at <= ?1
                       UNION ALL
                       SELECT event_id, channel, sale_starts_at FROM channel_openings
                       WHERE opening IS NULL AND sale_starts_at <= ?1";

/// Records a new event's channels that announced a start of their own: each opens its own
/// pre-queue.
pub(super) fn create(
    tx: &Transaction<'_>,
    event_id: &EventId,
    channels: &Channels,
) -> Result<(), BackendError> {
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO channel_openings (event_id, channel, sale_starts_at) VALUES (?1, ?2, ?3)",
        )
        .map_err(sqlite_error)?;
    for channel in &channels.channels {
        if let Some(starts) = channel.sale_starts_at {
            insert
                .execute(params![
                    event_id.as_str(),
                    channel.name.as_str(),
                    to_ms(starts)
                ])
                .map_err(sqlite_error)?;
        }
    }
    Ok(())
}

/// Whether any opening is due at `now`: a receive that finds one draws it.
pub(super) fn any_due(conn: &Connection, now: i64) -> Result<bool, BackendError> {
    conn.prepare_cached(UNDRAWN)
        .map_err(sqlite_error)?
        .exists([now])
        .map_err(sqlite_error)
}

/// Draws every opening due at `now`: each pre-queue in its drawn order, queued ready from just
/// before its start, so its intents come before every intent admitted after the start.
pub(super) fn open_due(tx: &Transaction<'_>, now: Timestamp) -> Result<(), BackendError> {
    let due: Vec<(String, Option<String>, i64)> = tx
        .prepare_cached(UNDRAWN)
        .map_err(sqlite_error)?
        .query_map([to_ms(now)], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    for (event, channel, starts) in due {
        let event_id = EventId::parse(&event)
            .map_err(|_| BackendError::permanent(format!("an event row has the id {event:?}")))?;
        let channel = (channel.as_deref().map(ChannelName::parse).transpose())
            .map_err(|e| BackendError::permanent(format!("a channel opening's row: {e}")))?;
        let start = Start {
            channel,
            at: from_ms(starts)?,
        };
        open(tx, &event_id, start, now)?;
    }
    Ok(())
}

fn open(
    tx: &Transaction<'_>,
    event_id: &EventId,
    start: Start,
    now: Timestamp,
) -> Result<(), BackendError> {
    let channel = start.channel.as_ref().map(ChannelName::as_str);
    let queued: Vec<(String, String)> = tx
        .prepare_cached(
            "SELECT job_id, intent FROM prequeue WHERE event_id = ?1 AND channel IS ?2
             ORDER BY seq",
        )
        .map_err(sqlite_error)?
        .query_map(params![event_id.as_str(), channel], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    let ids = queued
        .iter()
        .map(|(job_id, _)| {
            JobId::parse(job_id)
                .ok_or_else(|| BackendError::permanent(format!("a pre-queue row has {job_id:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let starts = to_ms(start.at);
    let draw = Draw::new(event_id.clone(), start.clone(), fresh_seed()?, ids, now);
    let bodies: HashMap<&str, &str> = queued
        .iter()
        .map(|(job_id, body)| (job_id.as_str(), body.as_str()))
        .collect();
    let mut rank = tx
        .prepare_cached("UPDATE prequeue SET drawn = ?2 WHERE job_id = ?1")
        .map_err(sqlite_error)?;
    for (place, job_id) in draw.order.iter().enumerate() {
        let job_id = job_id.to_string();
        let body = bodies.get(job_id.as_str()).copied().unwrap_or_default();
        enqueue_body(tx, body, &job_id, starts - 1)?;
        rank.execute(params![job_id, i64::try_from(place).unwrap_or(i64::MAX)])
            .map_err(sqlite_error)?;
    }
    record(tx, &draw.opened)?;
    tracing::info!(
        event_id = %event_id,
        channel = channel.unwrap_or_default(),
        seed = %draw.opened.seed,
        shuffled = draw.opened.shuffled,
        digest = %draw.opened.digest,
        "a sale opened: its pre-queue is drawn and queued in that order"
    );
    Ok(())
}

/// Records a draw on its opening's row.
fn record(tx: &Transaction<'_>, opened: &SaleOpened) -> Result<(), BackendError> {
    let json = seatclaim_core::codec::to_json(opened)?;
    let event = opened.event_id.as_str();
    let written = match &opened.channel {
        None => tx
            .prepare_cached("UPDATE events SET opening = ?2 WHERE event_id = ?1")
            .and_then(|mut update| update.execute(params![event, json])),
        Some(channel) => tx
            .prepare_cached(
                "UPDATE channel_openings SET opening = ?3 WHERE event_id = ?1 AND channel = ?2",
            )
            .and_then(|mut update| update.execute(params![event, channel.as_str(), json])),
    };
    written.map(drop).map_err(sqlite_error)
}

/// 32 bytes from the operating system's CSPRNG.
fn fresh_seed() -> Result<Seed, BackendError> {
    Seed::fresh().ok_or_else(|| BackendError::transient("no randomness for the draw"))
}

/// Where an opening of `event_id` stands (its own, or `channel`'s); `None` for an unknown event
/// or channel, or one without a start.
pub(super) fn opening(
    tx: &Transaction<'_>,
    event_id: &EventId,
    channel: Option<&ChannelName>,
) -> Result<Option<Opening>, BackendError> {
    let read = |sql: &str| {
        let channel = channel.map(ChannelName::as_str);
        tx.prepare_cached(sql)
            .and_then(|mut select| {
                select
                    .query_row(params![event_id.as_str(), channel], |row| {
                        Ok((
                            row.get::<_, Option<i64>>(0)?,
                            row.get::<_, Option<String>>(1)?,
                        ))
                    })
                    .optional()
            })
            .map_err(sqlite_error)
    };
    // Both reads bind the channel; the event's own matches only without one.
    let row = match channel {
        None => {
            read("SELECT sale_starts_at, opening FROM events WHERE event_id = ?1 AND ?2 IS NULL")?
        }
        Some(_) => read(
            "SELECT sale_starts_at, opening FROM channel_openings
             WHERE event_id = ?1 AND channel = ?2",
        )?,
    };
    let Some((Some(starts), draw)) = row else {
        return Ok(None);
    };
    let prequeued: i64 = tx
        .prepare_cached("SELECT count(*) FROM prequeue WHERE event_id = ?1 AND channel IS ?2")
        .map_err(sqlite_error)?
        .query_row(
            params![event_id.as_str(), channel.map(ChannelName::as_str)],
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    Ok(Some(Opening {
        sale_starts_at: from_ms(starts)?,
        prequeued: u64::try_from(prequeued).unwrap_or(0),
        draw: draw.as_deref().map(decode_opened).transpose()?,
    }))
}

/// The draws recorded and not yet published, the earliest start first.
pub(super) fn unpublished(tx: &Transaction<'_>) -> Result<Vec<SaleOpened>, BackendError> {
    let drawn: Vec<String> = tx
        .prepare_cached(
            "SELECT opening, sale_starts_at FROM events
             WHERE opening IS NOT NULL AND opening_published = 0
             UNION ALL
             SELECT opening, sale_starts_at FROM channel_openings
             WHERE opening IS NOT NULL AND opening_published = 0
             ORDER BY 2",
        )
        .map_err(sqlite_error)?
        .query_map([], |row| row.get(0))
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    drawn.iter().map(|text| decode_opened(text)).collect()
}

/// Marks an opening's draw published: the event's own, or `channel`'s.
pub(super) fn published(
    tx: &Transaction<'_>,
    event_id: &EventId,
    channel: Option<&ChannelName>,
) -> Result<(), BackendError> {
    let marked = match channel {
        None => tx
            .prepare_cached("UPDATE events SET opening_published = 1 WHERE event_id = ?1")
            .and_then(|mut update| update.execute([event_id.as_str()])),
        Some(channel) => tx
            .prepare_cached(
                "UPDATE channel_openings SET opening_published = 1
                 WHERE event_id = ?1 AND channel = ?2",
            )
            .and_then(|mut update| update.execute([event_id.as_str(), channel.as_str()])),
    };
    marked.map(drop).map_err(sqlite_error)
}

fn decode_opened(text: &str) -> Result<SaleOpened, BackendError> {
    serde_json::from_str(text)
        .map_err(|e| BackendError::permanent(format!("an event's opening is unreadable: {e}")))
}
