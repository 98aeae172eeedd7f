//! The seats a claim reads to decide on, in its write transaction: the named seats of an exact
//! request; the best claimable seats of a section; for a block, its section row by row from the
//! front, as far as the domain's search needs.

use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::catalog::{SEAT_COLUMNS, read_seat};
use crate::error::sqlite_error;
use seatclaim_core::codec::{SeatRecord, to_ms};
use seatclaim_core::domain::{Best, BlockSearch, Intent, Seat, SeatRequest, Section};
use seatclaim_core::ports::BackendError;

/// A section's free seats, best first: read through the partial index of free seats only
/// (`seats_free_best`, schema version 18), which a hold leaves by one delete.
pub(crate) const FREE_BY_PREFERENCE: &str = "FROM seats
    WHERE event_id = ?1 AND section = ?2 AND state = 'AVAILABLE' ORDER BY preference";
/// A section's free seats row by row from the front (`seats_free_rows`, likewise partial).
pub(crate) const FREE_BY_ROWS: &str = "FROM seats
    WHERE event_id = ?1 AND section = ?2 AND state = 'AVAILABLE' ORDER BY row_order, position";

/// The seats the decision needs: the requested ones for an exact request; for a section request,
/// free seats first and then lapsed holds, enough of them to satisfy it if possible. (The
/// statements step only as far as they need instead of saying `LIMIT ?`: a bound LIMIT makes
/// SQLite compile the statement again on every run, to weigh its plan against the value.)
pub(super) fn candidate_seats(
    tx: &Transaction<'_>,
    intent: &Intent,
    best: Best,
    now: Timestamp,
) -> Result<Vec<Seat>, BackendError> {
    let event = intent.event_id.as_str();
    let rows: Vec<SeatRecord> = match &intent.request {
        SeatRequest::Seats(wanted) => {
            let mut query = tx
                .prepare_cached(&format!(
                    "SELECT {} FROM seats WHERE event_id = ?1 AND seat_id = ?2",
                    SEAT_COLUMNS
                ))
                .map_err(sqlite_error)?;
            let mut rows = Vec::with_capacity(wanted.len());
            for seat in wanted {
                rows.extend(
                    query
                        .query_map(params![event, seat.as_str()], read_seat)
                        .map_err(sqlite_error)?
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(sqlite_error)?,
                );
            }
            rows
        }
        SeatRequest::Section {
            section,
            quantity,
            together: true,
        } => return block_candidates(tx, intent, section, (*quantity, best), now),
        SeatRequest::Section {
            section, quantity, ..
        } => {
            // The best few of each kind are the best of all.
            let wanted = usize::from(*quantity);
            let mut free = tx
                .prepare_cached(&format!("SELECT {SEAT_COLUMNS} {FREE_BY_PREFERENCE}"))
                .map_err(sqlite_error)?;
            let mut lapsed = tx
                .prepare_cached(&format!(
                    "SELECT {SEAT_COLUMNS} FROM seats
                 WHERE event_id = ?1 AND section = ?2 AND state = 'HELD' AND hold_until <= ?3
                 ORDER BY preference"
                ))
                .map_err(sqlite_error)?;
            free.query_map(params![event, section.as_str()], read_seat)
                .map_err(sqlite_error)?
                .take(wanted)
                .chain(
                    lapsed
                        .query_map(params![event, section.as_str(), to_ms(now)], read_seat)
                        .map_err(sqlite_error)?
                        .take(wanted),
                )
                .collect::<Result<Vec<_>, _>>()
                .map_err(sqlite_error)?
        }
    };
    rows.into_iter().map(SeatRecord::into_seat).collect()
}

/// The claimable seats of a block's section, read row by row from the front until the domain's
/// search has seen enough ([`BlockSearch`]): the rows before the one that holds the block, and
/// that row; every row when no row has a block that strands nothing. Free seats stream from the
/// index in row order (seats without a row first: SQLite orders NULL first); the few lapsed holds
/// are read whole and merged in.
fn block_candidates(
    tx: &Transaction<'_>,
    intent: &Intent,
    section: &Section,
    (quantity, best): (u8, Best),
    now: Timestamp,
) -> Result<Vec<Seat>, BackendError> {
    let event = intent.event_id.as_str();
    let at = |seat: &Seat| seat.place.map(|p| (p.row, p.position));
    let mut lapsed: Vec<Seat> = tx
        .prepare_cached(&format!(
            "SELECT {SEAT_COLUMNS} FROM seats
             WHERE event_id = ?1 AND section = ?2 AND state = 'HELD' AND hold_until <= ?3"
        ))
        .map_err(sqlite_error)?
        .query_map(params![event, section.as_str(), to_ms(now)], read_seat)
        .map_err(sqlite_error)?
        .map(|record| record.map_err(sqlite_error)?.into_seat())
        .collect::<Result<_, BackendError>>()?;
    lapsed.sort_by_key(at);
    let mut lapsed = lapsed.into_iter().peekable();
    let mut free = tx
        .prepare_cached(&format!("SELECT {SEAT_COLUMNS} {FREE_BY_ROWS}"))
        .map_err(sqlite_error)?;
    let mut rows = RowByRow::new(BlockSearch::new(usize::from(quantity), best));
    for record in free
        .query_map(params![event, section.as_str()], read_seat)
        .map_err(sqlite_error)?
    {
        let seat = record.map_err(sqlite_error)?.into_seat()?;
        while let Some(earlier) = lapsed.next_if(|l| at(l) < at(&seat)) {
            if rows.add(earlier) {
                return Ok(rows.seats);
            }
        }
        if rows.add(seat) {
            return Ok(rows.seats);
        }
    }
    rows.seats.extend(lapsed);
    Ok(rows.seats)
}

/// Seats in row order, handed to a block search a whole row at a time.
struct RowByRow {
    search: BlockSearch,
    seats: Vec<Seat>,
    row_start: usize,
}

impl RowByRow {
    fn new(search: BlockSearch) -> Self {
        Self {
            search,
            seats: Vec::new(),
            row_start: 0,
        }
    }

    /// Adds the next seat; `true` once the search needs no more (the seat is not added then).
    fn add(&mut self, seat: Seat) -> bool {
        let row = |seat: &Seat| seat.place.and_then(|p| p.row);
        let ended = self
            .seats
            .last()
            .is_some_and(|last| row(last) != row(&seat));
        if ended {
            let whole: Vec<&Seat> = self.seats[self.row_start..].iter().collect();
            if self.search.row(&whole) {
                return true;
            }
            self.row_start = self.seats.len();
        }
        self.seats.push(seat);
        false
    }
}
