//! What a claim needs to know of its event and its buyer inside the claim's transaction: the
//! event's terms (hold length and extension, seat limit, prices), and how many seats the buyer
//! already counts there.

use crate::error::sqlite_error;
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};
use rusqlite::{OptionalExtension, Transaction, params};

use seatclaim_core::codec::{
    decode_channels, decode_extension, decode_prices, decode_waitlist, from_ms, seat_limit, to_ms,
};
use seatclaim_core::domain::{Best, BuyerId, EventId, SaleTerms};
use seatclaim_core::ports::BackendError;

/// The terms of `event_id`, or `None` if the event does not exist.
pub(super) fn terms(
    tx: &Transaction<'_>,
    event_id: &EventId,
) -> Result<Option<SaleTerms>, BackendError> {
    type Row = (
        i64,
        Option<i64>,
        Option<String>,
        Option<String>,
        String,
        Option<i64>,
        String,
        Option<String>,
    );
    let row: Option<Row> = tx
        .prepare_cached(
            "SELECT hold_ms, max_seats_per_buyer, prices, extension, waitlist, sale_starts_at, best,
                    channels
             FROM events WHERE event_id = ?1",
        )
        .map_err(sqlite_error)?
        .query_row([event_id.as_str()], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
                row.get(7)?,
            ))
        })
        .optional()
        .map_err(sqlite_error)?;
    row.map(
        |(hold_ms, limit, prices, extension, waitlist, starts, best, channels)| {
            Ok(SaleTerms {
                hold: SignedDuration::from_millis(hold_ms),
                limit: seat_limit(event_id.as_str(), limit)?,
                prices: Arc::new(decode_prices(prices.as_deref())?),
                extension: decode_extension(extension.as_deref())?,
                waitlist: decode_waitlist(event_id.as_str(), &waitlist)?,
                opens_at: starts.map(from_ms).transpose()?,
                best: Best::parse(&best).map_err(|_| {
                    BackendError::permanent(format!(
                        "event {event_id} has an unknown preference {best:?}"
                    ))
                })?,
                channels: Arc::new(decode_channels(channels.as_deref())?),
            })
        },
    )
    .transpose()
}

/// The count of [`counted_seats`], read through the partial index `jobs_counted` (schema 14; its
/// condition as a chain of comparisons since 19, which this one repeats so the planner uses it).
pub(crate) const COUNTED_SEATS: &str = "SELECT COALESCE(SUM(CASE status
         WHEN 'WAITLISTED' THEN json_extract(request, '$.section.quantity')
         ELSE json_array_length(seat_ids) END), 0) FROM jobs
     WHERE event_id = ?1 AND buyer_id = ?2 AND (status = 'HELD' OR status = 'SOLD' OR status = 'WAITLISTED')
       AND (status <> 'HELD' OR hold_until > ?3)";

/// The seats `buyer` counts against the event's limit at `now`: those of their SOLD jobs, of
/// their HELD jobs whose hold is still live (a lapsed hold can never be confirmed), and the
/// quantities their WAITLISTED jobs (section requests) wait for. Read in the
/// claim's write transaction, so no other claim can change it before the claim commits.
pub(super) fn counted_seats(
    tx: &Transaction<'_>,
    event_id: &EventId,
    buyer: &BuyerId,
    now: Timestamp,
) -> Result<u32, BackendError> {
    let counted: i64 = tx
        .prepare_cached(COUNTED_SEATS)
        .map_err(sqlite_error)?
        .query_row(
            params![event_id.as_str(), buyer.as_str(), to_ms(now)],
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    Ok(u32::try_from(counted).unwrap_or(u32::MAX))
}
