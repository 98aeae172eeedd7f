use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::EmbeddedStore;
use super::opening_draw;
use crate::error::sqlite_error;
use jiff::Timestamp;
use seatclaim_core::codec::{
    SeatRecord, decode_channels, decode_waitlist, encode_channels, encode_extension, encode_prices,
    event_info, from_ms, to_json, to_ms,
};
use seatclaim_core::domain::{
    ChannelName, CodeHash, CodeRecord, EventId, NewEvent, SaleOpened, Seat, SeatLimit,
};
use seatclaim_core::ports::{
    BackendError, Catalog, CodeStanding, CodesCreation, EventCreation, EventInfo, EventTallies,
    Opening,
};

#[async_trait]
impl Catalog for EmbeddedStore {
    async fn create_event(&self, event: &NewEvent) -> Result<EventCreation, BackendError> {
        let event = event.clone();
        let event_id = event.event_id.clone();
        let now = to_ms(self.clock.now());
        let create = self.db.write(move |tx| {
            let hold_ms = event.hold.as_millis();
            let inserted = tx.execute(
                "INSERT INTO events (event_id, name, hold_ms, max_seats_per_buyer, created_at,
                                     prices, extension, waitlist, sale_starts_at, best, channels)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) ON CONFLICT (event_id) DO NOTHING",
                params![
                    event.event_id.as_str(),
                    event.name,
                    i64::try_from(hold_ms).unwrap_or(i64::MAX),
                    event.max_seats_per_buyer.map(SeatLimit::seats),
                    now,
                    encode_prices(&event.prices)?,
                    encode_extension(event.extension)?,
                    event.waitlist.as_str(),
                    event.sale_starts_at.map(to_ms),
                    event.best.as_str(),
                    encode_channels(&event.channels)?,
                ],
            ).map_err(sqlite_error)?;
            if inserted == 0 {
                return Ok(EventCreation::AlreadyExists);
            }
            let mut insert = tx.prepare_cached(
                "INSERT INTO seats (event_id, seat_id, section, position, state, preference, place,
                                    row_order)
                     VALUES (?1, ?2, ?3, ?4, 'AVAILABLE', ?5, ?6, ?7)",
            ).map_err(sqlite_error)?;
            for (position, (seat_id, section)) in event.seats.iter().enumerate() {
                let place = event.places.get(position);
                insert.execute(params![
                    event.event_id.as_str(),
                    seat_id.as_str(),
                    section.as_str(),
                    i64::try_from(position).unwrap_or(i64::MAX),
                    place.map_or(i64::try_from(position).unwrap_or(i64::MAX), |p| {
                        i64::from(p.preference)
                    }),
                    place.map(to_json).transpose()?,
                    place.and_then(|p| p.row),
                ]).map_err(sqlite_error)?;
            }
            opening_draw::create(tx, &event.event_id, &event.channels)?;
            Ok(EventCreation::Created(event.seats.len()))
        });
        self.shapes.creating(&event_id, create).await
    }

    async fn seat_map(&self, event_id: &EventId) -> Result<Option<Vec<Seat>>, BackendError> {
        let event_id = event_id.clone();
        self.db
            .read(move |tx| {
                let known = tx
                    .prepare_cached("SELECT 1 FROM events WHERE event_id = ?1")
                    .map_err(sqlite_error)?
                    .query_row([event_id.as_str()], |_| Ok(()))
                    .optional()
                    .map_err(sqlite_error)?;
                if known.is_none() {
                    return Ok(None);
                }
                let mut query = tx
                    .prepare_cached(&format!(
                        "SELECT {} FROM seats WHERE event_id = ?1 ORDER BY position",
                        SEAT_COLUMNS
                    ))
                    .map_err(sqlite_error)?;
                let rows = query
                    .query_map([event_id.as_str()], read_seat)
                    .map_err(sqlite_error)?;
                let seats = rows
                    .map(|row| row.map_err(sqlite_error)?.into_seat())
                    .collect::<Result<Vec<_>, BackendError>>()?;
                Ok(Some(seats))
            })
            .await
    }

    async fn events(&self) -> Result<Vec<EventInfo>, BackendError> {
        self.db
            .read(|tx| {
                let mut query = tx
                    .prepare_cached(
                        "SELECT event_id, name, hold_ms, max_seats_per_buyer, prices, extension,
                            waitlist, sale_starts_at, channels
                     FROM events ORDER BY created_at, event_id",
                    )
                    .map_err(sqlite_error)?;
                let rows = query
                    .query_map([], |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, i64>(2)?,
                            row.get::<_, Option<i64>>(3)?,
                            row.get::<_, Option<String>>(4)?,
                            row.get::<_, Option<String>>(5)?,
                            row.get::<_, String>(6)?,
                            row.get::<_, Option<i64>>(7)?,
                            row.get::<_, Option<String>>(8)?,
                        ))
                    })
                    .map_err(sqlite_error)?;
                rows.map(|row| {
                    let (event_id, name, hold_ms, limit, prices, extension, waitlist, starts, ch) =
                        row.map_err(sqlite_error)?;
                    let (prices, extension) = (prices.as_deref(), extension.as_deref());
                    let waitlist = decode_waitlist(&event_id, &waitlist)?;
                    let mut info =
                        event_info(&event_id, name, hold_ms, limit, prices, extension, waitlist)?;
                    info.sale_starts_at = starts.map(from_ms).transpose()?;
                    info.channels = decode_channels(ch.as_deref())?;
                    Ok(info)
                })
                .collect()
            })
            .await
    }

    async fn opening(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<Option<Opening>, BackendError> {
        let (event_id, channel) = (event_id.clone(), channel.cloned());
        self.db
            .read(move |tx| opening_draw::opening(tx, &event_id, channel.as_ref()))
            .await
    }

    async fn unpublished_openings(&self) -> Result<Vec<SaleOpened>, BackendError> {
        self.db.read(opening_draw::unpublished).await
    }

    async fn opening_published(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<(), BackendError> {
        let (event_id, channel) = (event_id.clone(), channel.cloned());
        self.db
            .write(move |tx| opening_draw::published(tx, &event_id, channel.as_ref()))
            .await
    }

    async fn create_codes(
        &self,
        event_id: &EventId,
        codes: &[CodeRecord],
    ) -> Result<CodesCreation, BackendError> {
        let (event_id, codes, now) = (event_id.clone(), codes.to_vec(), self.clock.now());
        self.db
            .write(move |tx| super::codes::create(tx, &event_id, &codes, now))
            .await
    }

    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<CodeStanding>, BackendError> {
        let (event_id, hash) = (event_id.clone(), hash.clone());
        self.db
            .read(move |tx| super::codes::standing(tx, &event_id, &hash, now))
            .await
    }

    async fn revoke_code(&self, event_id: &EventId, hash: &CodeHash) -> Result<bool, BackendError> {
        let (event_id, hash) = (event_id.clone(), hash.clone());
        self.db
            .write(move |tx| {
                super::codes::update(tx, &event_id, &hash, super::codes::Change::Revoke)
            })
            .await
    }

    async fn tallies(
        &self,
        event_id: &EventId,
        now: Timestamp,
        horizon: Timestamp,
    ) -> Result<Option<EventTallies>, BackendError> {
        let event_id = event_id.clone();
        self.db
            .read(move |tx| super::tallies::tallies(tx, &event_id, now, horizon))
            .await
    }

    async fn ping(&self) -> Result<(), BackendError> {
        self.db.check_schema().await
    }
}

/// The `seats` columns [`read_seat`] expects, in order.
pub(super) const SEAT_COLUMNS: &str = "seat_id, section, state, job_id, hold_until, place";

/// Reads the columns of [`SEAT_COLUMNS`] into the seat's stored shape.
pub(super) fn read_seat(row: &rusqlite::Row<'_>) -> rusqlite::Result<SeatRecord> {
    Ok(SeatRecord {
        seat_id: row.get(0)?,
        section: row.get(1)?,
        state: row.get(2)?,
        job_id: row.get(3)?,
        hold_until: row.get(4)?,
        place: row.get(5)?,
    })
}
