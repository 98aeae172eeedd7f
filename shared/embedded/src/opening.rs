//! Sale openings on SQLite. An intent admitted before its event's `sale_starts_at` is parked in
//! the `prequeue` table with its PENDING job, not queued. The first receive at or after the
//! start draws the pre-queue's order (the domain's [`Draw`], from a seed of the operating
//! system's CSPRNG), queues the intents in it and records the draw on the event, in the
//! receive's own transaction: nothing of the event is received before its opening, and a crash
//! leaves either no draw or all of it.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use super::intent_queue::enqueue_body;
use crate::error::sqlite_error;
use seatclaim_core::codec::{from_ms, to_ms};
use seatclaim_core::domain::{Draw, EventId, Intent, JobId, Line, SaleOpened, Seed};
use seatclaim_core::ports::{BackendError, Opening};

/// Whether `event_id` announced a start at or after `now` and has not drawn its opening: then an
/// intent admitted now waits in its pre-queue. An event whose draw is made is open, whatever the
/// clock of the process admitting says.
pub(super) fn waits_for_opening(
    tx: &Transaction<'_>,
    event_id: &EventId,
    now: Timestamp,
) -> Result<bool, BackendError> {
    let undrawn: Option<i64> = tx
        .prepare_cached(
            "SELECT sale_starts_at FROM events
             WHERE event_id = ?1 AND sale_starts_at IS NOT NULL AND opening IS NULL",
        )
        .map_err(sqlite_error)?
        .query_row([event_id.as_str()], |row| row.get(0))
        .optional()
        .map_err(sqlite_error)?;
    Ok(undrawn.is_some_and(|starts| to_ms(now) < starts))
}

/// Whether the event has a start whose opening is not drawn yet (before or after the start):
/// no intent of it is decided in its admission's write then.
pub(super) fn opening_undrawn(
    tx: &Transaction<'_>,
    event_id: &EventId,
) -> Result<bool, BackendError> {
    tx.prepare_cached(
        "SELECT 1 FROM events
             WHERE event_id = ?1 AND sale_starts_at IS NOT NULL AND opening IS NULL",
    )
    .map_err(sqlite_error)?
    .exists([event_id.as_str()])
    .map_err(sqlite_error)
}

/// Parks an intent in its event's pre-queue; or, if the buyer already waits there, answers
/// that job and parks nothing.
pub(super) fn park(tx: &Transaction<'_>, intent: &Intent) -> Result<Option<JobId>, BackendError> {
    let queued: Option<String> = tx
        .prepare_cached("SELECT job_id FROM prequeue WHERE event_id = ?1 AND buyer_id = ?2")
        .map_err(sqlite_error)?
        .query_row(
            params![intent.event_id.as_str(), intent.buyer_id.as_str()],
            |row| row.get(0),
        )
        .optional()
        .map_err(sqlite_error)?;
    if let Some(job_id) = queued {
        return JobId::parse(&job_id)
            .map(Some)
            .ok_or_else(|| BackendError::permanent(format!("a pre-queue row has {job_id:?}")));
    }
    tx.prepare_cached(
        "INSERT INTO prequeue (event_id, buyer_id, job_id, intent) VALUES (?1, ?2, ?3, ?4)",
    )
    .map_err(sqlite_error)?
    .execute(params![
        intent.event_id.as_str(),
        intent.buyer_id.as_str(),
        intent.job_id.to_string(),
        seatclaim_core::codec::encode_intent(intent)?,
    ])
    .map_err(sqlite_error)?;
    Ok(None)
}

/// Whether `job_id` waits in a pre-queue not drawn yet.
pub(super) fn prequeued(tx: &Transaction<'_>, job_id: JobId) -> Result<bool, BackendError> {
    tx.prepare_cached("SELECT 1 FROM prequeue WHERE job_id = ?1 AND drawn IS NULL")
        .map_err(sqlite_error)?
        .exists([job_id.to_string()])
        .map_err(sqlite_error)
}

/// Whether any event's opening is due at `now`: a receive that finds one draws it.
pub(super) fn any_due(tx: &Transaction<'_>, now: i64) -> Result<bool, BackendError> {
    tx.prepare_cached(
        "SELECT 1 FROM events
             WHERE sale_starts_at IS NOT NULL AND opening IS NULL AND sale_starts_at <= ?1",
    )
    .map_err(sqlite_error)?
    .exists([now])
    .map_err(sqlite_error)
}

/// Draws every opening due at `now`: each pre-queue in its drawn order, queued ready from just
/// before the start, so its intents come before every intent admitted after the start.
pub(super) fn open_due(tx: &Transaction<'_>, now: Timestamp) -> Result<(), BackendError> {
    let due: Vec<(String, i64)> = tx
        .prepare_cached(
            "SELECT event_id, sale_starts_at FROM events
             WHERE sale_starts_at IS NOT NULL AND opening IS NULL AND sale_starts_at <= ?1",
        )
        .map_err(sqlite_error)?
        .query_map([to_ms(now)], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    for (event_id, starts) in due {
        open(tx, &event_id, starts, now)?;
    }
    Ok(())
}

fn open(
    tx: &Transaction<'_>,
    event: &str,
    starts: i64,
    now: Timestamp,
) -> Result<(), BackendError> {
    let queued: Vec<(String, String)> = tx
        .prepare_cached("SELECT job_id, intent FROM prequeue WHERE event_id = ?1 ORDER BY seq")
        .map_err(sqlite_error)?
        .query_map([event], |row| Ok((row.get(0)?, row.get(1)?)))
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
    let event_id = EventId::parse(event)
        .map_err(|_| BackendError::permanent(format!("an event row has the id {event:?}")))?;
    let draw = Draw::new(event_id, from_ms(starts)?, fresh_seed()?, ids, now);
    let bodies: std::collections::HashMap<&str, &str> = queued
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
    tx.prepare_cached("UPDATE events SET opening = ?2 WHERE event_id = ?1")
        .map_err(sqlite_error)?
        .execute(params![
            event,
            seatclaim_core::codec::to_json(&draw.opened)?
        ])
        .map_err(sqlite_error)?;
    tracing::info!(
        event_id = %event,
        seed = %draw.opened.seed,
        shuffled = draw.opened.shuffled,
        digest = %draw.opened.digest,
        "the sale opened: its pre-queue is drawn and queued in that order"
    );
    Ok(())
}

/// 32 bytes from the operating system's CSPRNG.
fn fresh_seed() -> Result<Seed, BackendError> {
    Seed::fresh().ok_or_else(|| BackendError::transient("no randomness for the draw"))
}

/// A pre-queued job's line: waiting for the opening, or the PENDING jobs drawn before it.
/// `None` for a job that was not pre-queued.
pub(super) fn line(
    tx: &Transaction<'_>,
    job_id: JobId,
    decided: u64,
) -> Result<Option<Line>, BackendError> {
    let row: Option<(String, Option<i64>, i64)> = tx
        .prepare_cached(
            "SELECT p.event_id, p.drawn, e.sale_starts_at FROM prequeue p
             JOIN events e ON e.event_id = p.event_id WHERE p.job_id = ?1",
        )
        .map_err(sqlite_error)?
        .query_row([job_id.to_string()], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .optional()
        .map_err(sqlite_error)?;
    let Some((event, drawn, starts)) = row else {
        return Ok(None);
    };
    let Some(drawn) = drawn else {
        return Ok(Some(Line {
            ahead: 0,
            decided,
            opens_at: Some(from_ms(starts)?),
        }));
    };
    let ahead: i64 = tx
        .prepare_cached(
            "SELECT count(*) FROM prequeue p JOIN jobs j ON j.job_id = p.job_id
             WHERE p.event_id = ?1 AND p.drawn < ?2 AND j.status = 'PENDING'",
        )
        .map_err(sqlite_error)?
        .query_row(params![event, drawn], |row| row.get(0))
        .map_err(sqlite_error)?;
    Ok(Some(Line {
        ahead: u64::try_from(ahead).unwrap_or(0),
        decided,
        opens_at: None,
    }))
}

/// Where an event's opening stands; `None` for an unknown event or one without a start.
pub(super) fn opening(
    tx: &Transaction<'_>,
    event_id: &EventId,
) -> Result<Option<Opening>, BackendError> {
    let row: Option<(Option<i64>, Option<String>)> = tx
        .prepare_cached("SELECT sale_starts_at, opening FROM events WHERE event_id = ?1")
        .map_err(sqlite_error)?
        .query_row([event_id.as_str()], |row| Ok((row.get(0)?, row.get(1)?)))
        .optional()
        .map_err(sqlite_error)?;
    let Some((Some(starts), draw)) = row else {
        return Ok(None);
    };
    let prequeued: i64 = tx
        .prepare_cached("SELECT count(*) FROM prequeue WHERE event_id = ?1")
        .map_err(sqlite_error)?
        .query_row([event_id.as_str()], |row| row.get(0))
        .map_err(sqlite_error)?;
    Ok(Some(Opening {
        sale_starts_at: from_ms(starts)?,
        prequeued: u64::try_from(prequeued).unwrap_or(0),
        draw: draw.as_deref().map(decode_opened).transpose()?,
    }))
}

/// The draws recorded and not yet published.
pub(super) fn unpublished(tx: &Transaction<'_>) -> Result<Vec<SaleOpened>, BackendError> {
    let drawn: Vec<String> = tx
        .prepare_cached(
            "SELECT opening FROM events WHERE opening IS NOT NULL AND opening_published = 0
             ORDER BY sale_starts_at",
        )
        .map_err(sqlite_error)?
        .query_map([], |row| row.get(0))
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    drawn.iter().map(|text| decode_opened(text)).collect()
}

fn decode_opened(text: &str) -> Result<SaleOpened, BackendError> {
    serde_json::from_str(text)
        .map_err(|e| BackendError::permanent(format!("an event's opening is unreadable: {e}")))
}
