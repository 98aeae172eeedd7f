//! Sale openings on SQLite, the admission's side. An intent admitted before its start (its
//! channel's own, or its event's: the domain's [`Start`]) is parked in the `prequeue` table with
//! its PENDING job, not queued; `opening_draw.rs` draws and queues each pre-queue at its start.
//! The event's own opening is kept on its `events` row, a channel's in `channel_openings`.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use crate::error::sqlite_error;
use seatclaim_core::codec::{from_ms, to_ms};
use seatclaim_core::domain::{ChannelName, EventId, Intent, JobId, Line, Start};
use seatclaim_core::ports::BackendError;

/// Whether `start` of `event_id` is still to come at `now` and its opening not drawn: then an
/// intent admitted now waits in its pre-queue. An opening whose draw is made is open, whatever
/// the clock of the process admitting says.
pub(super) fn waits_for_opening(
    tx: &Transaction<'_>,
    event_id: &EventId,
    start: &Start,
    now: Timestamp,
) -> Result<bool, BackendError> {
    Ok(to_ms(now) < to_ms(start.at) && opening_undrawn(tx, event_id, start)?)
}

/// Whether the opening of `start` is not drawn yet (before or after the start): no intent
/// waiting for it is decided in its admission's write then.
pub(super) fn opening_undrawn(
    tx: &Transaction<'_>,
    event_id: &EventId,
    start: &Start,
) -> Result<bool, BackendError> {
    let undrawn = match channel_of(start) {
        None => tx
            .prepare_cached(
                "SELECT 1 FROM events
                 WHERE event_id = ?1 AND sale_starts_at IS NOT NULL AND opening IS NULL",
            )
            .and_then(|mut select| select.exists([event_id.as_str()])),
        Some(channel) => tx
            .prepare_cached(
                "SELECT 1 FROM channel_openings
                 WHERE event_id = ?1 AND channel = ?2 AND opening IS NULL",
            )
            .and_then(|mut select| select.exists([event_id.as_str(), channel])),
    };
    undrawn.map_err(sqlite_error)
}

fn channel_of(start: &Start) -> Option<&str> {
    start.channel.as_ref().map(ChannelName::as_str)
}

/// Parks an intent in the pre-queue of `start`; or, if the buyer already waits there, answers
/// that job and parks nothing.
pub(super) fn park(
    tx: &Transaction<'_>,
    intent: &Intent,
    start: &Start,
) -> Result<Option<JobId>, BackendError> {
    let queued: Option<String> = tx
        .prepare_cached(
            "SELECT job_id FROM prequeue WHERE event_id = ?1 AND buyer_id = ?2 AND channel IS ?3",
        )
        .map_err(sqlite_error)?
        .query_row(
            params![
                intent.event_id.as_str(),
                intent.buyer_id.as_str(),
                channel_of(start)
            ],
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
        "INSERT INTO prequeue (event_id, buyer_id, job_id, intent, channel)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )
    .map_err(sqlite_error)?
    .execute(params![
        intent.event_id.as_str(),
        intent.buyer_id.as_str(),
        intent.job_id.to_string(),
        seatclaim_core::codec::encode_intent(intent)?,
        channel_of(start),
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

/// A pre-queued job's line: waiting for its opening, or the PENDING jobs drawn before it in the
/// same pre-queue. `None` for a job that was not pre-queued.
pub(super) fn line(
    tx: &Transaction<'_>,
    job_id: JobId,
    decided: u64,
) -> Result<Option<Line>, BackendError> {
    let row: Option<(String, Option<String>, Option<i64>, i64)> = tx
        .prepare_cached(
            "SELECT p.event_id, p.channel, p.drawn,
                    coalesce(c.sale_starts_at, e.sale_starts_at) FROM prequeue p
             JOIN events e ON e.event_id = p.event_id
             LEFT JOIN channel_openings c ON c.event_id = p.event_id AND c.channel = p.channel
             WHERE p.job_id = ?1",
        )
        .map_err(sqlite_error)?
        .query_row([job_id.to_string()], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
        })
        .optional()
        .map_err(sqlite_error)?;
    let Some((event, channel, drawn, starts)) = row else {
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
             WHERE p.event_id = ?1 AND p.channel IS ?3 AND p.drawn < ?2
               AND j.status = 'PENDING'",
        )
        .map_err(sqlite_error)?
        .query_row(params![event, drawn, channel], |row| row.get(0))
        .map_err(sqlite_error)?;
    Ok(Some(Line {
        ahead: u64::try_from(ahead).unwrap_or(0),
        decided,
        opens_at: None,
    }))
}
