//! An event's tallies for the operator's summary, counted in one read transaction on the
//! indexes the claim already keeps: its codes, the seats held and sold under them
//! (`jobs_by_access_code`), its lines (`jobs_waitlisted`) and its holds by deadline
//! (`held_jobs_by_deadline`).

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use crate::error::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::EventId;
use seatclaim_core::ports::{BackendError, EventTallies};

/// The seats held (live, or waited for) and sold under any of the event's codes at `?2`.
const CODE_SEATS: &str = "SELECT COALESCE(SUM(CASE
         WHEN status = 'WAITLISTED' THEN json_extract(request, '$.section.quantity')
         WHEN status = 'HELD' AND hold_until > ?2 THEN json_array_length(seat_ids)
         ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN status = 'SOLD' THEN json_array_length(seat_ids) ELSE 0 END), 0)
     FROM jobs WHERE event_id = ?1 AND json_extract(access, '$.code') > '' AND access IS NOT NULL";

/// The event's tallies at `now`, its holds lapsing in `(now, horizon]` among them; `None` for
/// an unknown event.
pub(super) fn tallies(
    tx: &Transaction<'_>,
    event_id: &EventId,
    now: Timestamp,
    horizon: Timestamp,
) -> Result<Option<EventTallies>, BackendError> {
    let event = event_id.as_str();
    let known = (tx.prepare_cached("SELECT 1 FROM events WHERE event_id = ?1"))
        .and_then(|mut query| query.query_row([event], |_| Ok(())).optional())
        .map_err(sqlite_error)?;
    if known.is_none() {
        return Ok(None);
    }
    let count = |sql: &str, args: &[&dyn rusqlite::ToSql]| -> Result<u64, BackendError> {
        let n: i64 = (tx.prepare_cached(sql))
            .and_then(|mut query| query.query_row(args, |row| row.get(0)))
            .map_err(sqlite_error)?;
        Ok(u64::try_from(n).unwrap_or(0))
    };
    let (held, sold): (i64, i64) = (tx.prepare_cached(CODE_SEATS))
        .and_then(|mut query| {
            query.query_row(params![event, to_ms(now)], |row| {
                Ok((row.get(0)?, row.get(1)?))
            })
        })
        .map_err(sqlite_error)?;
    Ok(Some(EventTallies {
        codes_issued: count(
            "SELECT count(*) FROM access_codes WHERE event_id = ?1",
            &[&event],
        )?,
        code_seats_held: u64::try_from(held).unwrap_or(0),
        code_seats_sold: u64::try_from(sold).unwrap_or(0),
        waitlisted: count(
            "SELECT count(*) FROM jobs WHERE event_id = ?1 AND status = 'WAITLISTED'",
            &[&event],
        )?,
        holds_expiring: count(
            "SELECT count(*) FROM jobs WHERE status = 'HELD' AND hold_until > ?2
             AND hold_until <= ?3 AND event_id = ?1",
            &[&event, &to_ms(now), &to_ms(horizon)],
        )?,
    }))
}
