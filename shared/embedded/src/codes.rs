//! Access codes on SQLite (`access_codes`, schema 16): stored by their keyed hash, read inside
//! the claim's write transaction with the seats already counted under them (the jobs admitted
//! with the code, on the `jobs_by_access_code` index), so racing claims cannot pass a code's
//! `max_seats`.

use jiff::Timestamp;
use rusqlite::{OptionalExtension, Transaction, params};

use crate::error::sqlite_error;
use seatclaim_core::codec::{decode_channels, from_ms, to_ms};
use seatclaim_core::domain::{BuyerId, ChannelName, CodeHash, CodeRecord, CodeTerms, EventId};
use seatclaim_core::ports::{BackendError, CodeStanding, CodesCreation};

/// The seats of the event's jobs admitted with one code: SOLD, live HELD (`?3`: now) and the
/// quantities WAITLISTED ones wait for; then those SOLD alone.
const USED: &str = "SELECT COALESCE(SUM(CASE
         WHEN status = 'WAITLISTED' THEN json_extract(request, '$.section.quantity')
         WHEN status = 'SOLD' OR (status = 'HELD' AND hold_until > ?3) THEN json_array_length(seat_ids)
         ELSE 0 END), 0),
       COALESCE(SUM(CASE WHEN status = 'SOLD' THEN json_array_length(seat_ids) ELSE 0 END), 0)
     FROM jobs WHERE event_id = ?1 AND json_extract(access, '$.code') = ?2 AND access IS NOT NULL";

/// Stores `codes` for the event, all or none (in the caller's write transaction).
pub(super) fn create(
    tx: &Transaction<'_>,
    event_id: &EventId,
    codes: &[CodeRecord],
    now: Timestamp,
) -> Result<CodesCreation, BackendError> {
    let channels: Option<Option<String>> = tx
        .query_row(
            "SELECT channels FROM events WHERE event_id = ?1",
            [event_id.as_str()],
            |row| row.get(0),
        )
        .optional()
        .map_err(sqlite_error)?;
    let Some(channels) = channels else {
        return Ok(CodesCreation::NoSuchEvent);
    };
    let channels = decode_channels(channels.as_deref())?;
    if codes
        .iter()
        .any(|c| channels.get(&c.terms.channel).is_none())
    {
        return Ok(CodesCreation::NoSuchChannel);
    }
    let mut exists = tx
        .prepare_cached("SELECT 1 FROM access_codes WHERE event_id = ?1 AND hash = ?2")
        .map_err(sqlite_error)?;
    for code in codes {
        let found = (exists.query_row([event_id.as_str(), code.hash.as_str()], |_| Ok(())))
            .optional()
            .map_err(sqlite_error)?;
        if found.is_some() {
            return Ok(CodesCreation::Exists);
        }
    }
    let mut insert = tx
        .prepare_cached(
            "INSERT INTO access_codes (event_id, hash, channel, max_seats, valid_from, valid_until,
                                       bind, bound_to, revoked, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULL, 0, ?8)",
        )
        .map_err(sqlite_error)?;
    for code in codes {
        let terms = &code.terms;
        insert
            .execute(params![
                event_id.as_str(),
                code.hash.as_str(),
                terms.channel.as_str(),
                terms.max_seats,
                terms.valid_from.map(to_ms),
                terms.valid_until.map(to_ms),
                terms.bind,
                to_ms(now),
            ])
            .map_err(sqlite_error)?;
    }
    Ok(CodesCreation::Created(codes.len()))
}

/// The event's code `hash`, as stored.
pub(super) fn record(
    tx: &Transaction<'_>,
    event_id: &EventId,
    hash: &CodeHash,
) -> Result<Option<CodeRecord>, BackendError> {
    type Row = (
        String,
        u32,
        Option<i64>,
        Option<i64>,
        bool,
        Option<String>,
        bool,
    );
    let row: Option<Row> = tx
        .prepare_cached(
            "SELECT channel, max_seats, valid_from, valid_until, bind, bound_to, revoked
             FROM access_codes WHERE event_id = ?1 AND hash = ?2",
        )
        .map_err(sqlite_error)?
        .query_row([event_id.as_str(), hash.as_str()], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
            ))
        })
        .optional()
        .map_err(sqlite_error)?;
    let corrupt = |what: &str| BackendError::permanent(format!("code of {event_id}: {what}"));
    row.map(
        |(channel, max_seats, from, until, bind, bound_to, revoked)| {
            Ok(CodeRecord {
                hash: hash.clone(),
                terms: CodeTerms {
                    channel: ChannelName::parse(&channel).map_err(|_| corrupt("channel"))?,
                    max_seats,
                    valid_from: from.map(from_ms).transpose()?,
                    valid_until: until.map(from_ms).transpose()?,
                    bind,
                },
                bound_to: (bound_to.as_deref())
                    .map(|b| BuyerId::parse(b).map_err(|_| corrupt("buyer")))
                    .transpose()?,
                revoked,
            })
        },
    )
    .transpose()
}

/// The seats the code counts at `now`, and of them those sold.
pub(super) fn used(
    tx: &Transaction<'_>,
    event_id: &EventId,
    hash: &CodeHash,
    now: Timestamp,
) -> Result<(u32, u32), BackendError> {
    let (used, sold): (i64, i64) = tx
        .prepare_cached(USED)
        .map_err(sqlite_error)?
        .query_row(
            params![event_id.as_str(), hash.as_str(), to_ms(now)],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .map_err(sqlite_error)?;
    let seats = |n: i64| u32::try_from(n.max(0)).unwrap_or(u32::MAX);
    Ok((seats(used), seats(sold)))
}

/// The code with the seats held (and waited for) and sold under it at `now`.
pub(super) fn standing(
    tx: &Transaction<'_>,
    event_id: &EventId,
    hash: &CodeHash,
    now: Timestamp,
) -> Result<Option<CodeStanding>, BackendError> {
    let Some(record) = record(tx, event_id, hash)? else {
        return Ok(None);
    };
    let (used, sold) = used(tx, event_id, hash, now)?;
    Ok(Some(CodeStanding {
        record,
        held: used.saturating_sub(sold),
        sold,
    }))
}

/// Binds the code to `buyer` if nobody is bound yet; revokes it (`revoke`). `false`: no such
/// code.
pub(super) fn update(
    tx: &Transaction<'_>,
    event_id: &EventId,
    hash: &CodeHash,
    change: Change<'_>,
) -> Result<bool, BackendError> {
    let (sql, value) = match change {
        Change::Bind(buyer) => (
            "UPDATE access_codes SET bound_to = COALESCE(bound_to, ?3)
             WHERE event_id = ?1 AND hash = ?2",
            Some(buyer.as_str()),
        ),
        Change::Revoke => (
            "UPDATE access_codes SET revoked = 1 WHERE event_id = ?1 AND hash = ?2 AND ?3 IS NULL",
            None,
        ),
    };
    let changed = tx
        .prepare_cached(sql)
        .map_err(sqlite_error)?
        .execute(params![event_id.as_str(), hash.as_str(), value])
        .map_err(sqlite_error)?;
    Ok(changed > 0)
}

/// A change of a stored code.
pub(super) enum Change<'a> {
    /// Bound to its first buyer.
    Bind(&'a BuyerId),
    /// Revoked by an operator.
    Revoke,
}
