//! One event's seat map as read at one moment, and its renderings: the whole map once, each
//! section the first time it is asked for, each with an entity tag named by the seats' states.

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write;
use std::sync::{Mutex, PoisonError};

use axum::body::Bytes;
use flate2::Compression;
use flate2::write::GzEncoder;
use jiff::Timestamp;
use seatclaim_core::domain::{ChannelName, Channels, EventId, Seat, SeatView, Section};
use seatclaim_core::ports::BackendError;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// How many seats of an event are in each state, as the snapshot shows them.
#[derive(Debug, Clone, Copy, Default, Serialize, ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub struct StateCounts {
    /// Free to ask for (lapsed holds included).
    pub available: usize,
    /// Held by someone now.
    pub held: usize,
    /// Sold.
    pub sold: usize,
}

impl StateCounts {
    /// Counts one seat in `view`.
    pub fn add(&mut self, view: SeatView) {
        match view {
            SeatView::Available => self.available += 1,
            SeatView::Held => self.held += 1,
            SeatView::Sold => self.sold += 1,
        }
    }

    /// Adds `other`'s counts.
    pub fn add_all(&mut self, other: &Self) {
        self.available += other.available;
        self.held += other.held;
        self.sold += other.sold;
    }
}

/// One seat as the map shows it.
#[derive(Serialize, ToSchema)]
#[schema(as = SeatMapEntry)]
pub(crate) struct SeatEntry<'a> {
    /// The seat's id.
    seat_id: &'a str,
    /// Its section.
    section: &'a str,
    /// The sales channel it is set aside for as of the map (absent: public).
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    /// Its state as of the map: a lapsed hold shows AVAILABLE.
    #[schema(schema_with = seat_view_schema)]
    state: SeatView,
}

/// The body of a seat map answer.
#[derive(Serialize, ToSchema)]
#[schema(as = SeatMap)]
pub(crate) struct SeatMapBody<'a> {
    /// The event.
    #[schema(value_type = String)]
    event_id: &'a EventId,
    /// When the seats were read (the map is advisory: a claim re-checks every seat).
    #[schema(value_type = String, format = DateTime)]
    as_of: Timestamp,
    /// The seats, in the event's order.
    seats: Vec<SeatEntry<'a>>,
}

/// The schema of a seat's state: the wire names of the three [`SeatView`]s.
fn seat_view_schema() -> impl Into<RefOr<Schema>> {
    let names = [SeatView::Available, SeatView::Held, SeatView::Sold]
        .map(|view| serde_json::to_value(view).unwrap_or_default());
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(names))
}

/// A seat map answer: its JSON body, the same compressed once, and its (weak) entity tag.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The JSON body.
    pub body: Bytes,
    /// The body gzip-compressed when the snapshot was built, so that a storm of readers costs
    /// a copy of bytes each instead of a compression each.
    pub gzip: Bytes,
    /// `W/"..."`, named by the seats' states alone, so an unchanged map keeps its tag across
    /// rebuilds and a polling client gets 304s.
    pub etag: String,
}

/// An event's seat map as read at `as_of`.
pub struct Snapshot {
    event_id: EventId,
    /// When the seats were read, the map's `as_of`.
    pub as_of: Timestamp,
    seats: Vec<(Seat, SeatView)>,
    /// Seats per state.
    pub counts: StateCounts,
    /// Seats per state in each section, for the operator's summary.
    pub by_section: BTreeMap<Section, StateCounts>,
    whole: Rendered,
    /// Sections rendered so far, each once per snapshot.
    sections: Mutex<HashMap<Section, Rendered>>,
    /// The event's sales channels, which a seat's entry names.
    channels: Channels,
}

impl Snapshot {
    pub(super) fn build(
        event_id: EventId,
        (seats, channels): (Vec<Seat>, Channels),
        as_of: Timestamp,
    ) -> Result<Self, BackendError> {
        let seats: Vec<(Seat, SeatView)> = seats
            .into_iter()
            .map(|seat| {
                let view = seat.state.view(as_of);
                (seat, view)
            })
            .collect();
        let mut counts = StateCounts::default();
        let mut by_section: BTreeMap<Section, StateCounts> = BTreeMap::new();
        for (seat, view) in &seats {
            counts.add(*view);
            if let Some(section) = by_section.get_mut(&seat.section) {
                section.add(*view);
            } else {
                let mut section = StateCounts::default();
                section.add(*view);
                by_section.insert(seat.section.clone(), section);
            }
        }
        let whole = render(&event_id, as_of, &channels, seats.iter())?;
        Ok(Self {
            event_id,
            as_of,
            seats,
            counts,
            by_section,
            whole,
            sections: Mutex::new(HashMap::new()),
            channels,
        })
    }

    /// The event's sales channels as the snapshot read them.
    #[must_use]
    pub fn channels(&self) -> &Channels {
        &self.channels
    }

    /// The seats of `channel`'s sections by state.
    #[must_use]
    pub fn channel_counts(&self, channel: &ChannelName) -> StateCounts {
        let mut counts = StateCounts::default();
        for section in self.channels.sections_of(channel) {
            if let Some(seats) = self.by_section.get(section) {
                counts.add_all(seats);
            }
        }
        counts
    }

    /// The whole map.
    #[must_use]
    pub fn whole(&self) -> &Rendered {
        &self.whole
    }

    /// One section of the map; `None` if the event has no such section (which keeps nothing).
    pub fn section(&self, section: &Section) -> Result<Option<Rendered>, BackendError> {
        if !self.by_section.contains_key(section) {
            return Ok(None);
        }
        let mut sections = self.sections.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(rendered) = sections.get(section) {
            return Ok(Some(rendered.clone()));
        }
        let seats = self
            .seats
            .iter()
            .filter(|(seat, _)| &seat.section == section);
        let rendered = render(&self.event_id, self.as_of, &self.channels, seats)?;
        sections.insert(section.clone(), rendered.clone());
        Ok(Some(rendered))
    }
}

fn render<'a>(
    event_id: &EventId,
    as_of: Timestamp,
    channels: &'a Channels,
    seats: impl Iterator<Item = &'a (Seat, SeatView)>,
) -> Result<Rendered, BackendError> {
    let mut hasher = DefaultHasher::new();
    let entries: Vec<SeatEntry<'a>> = seats
        .map(|(seat, view)| {
            (seat.seat_id.as_str(), *view as u8).hash(&mut hasher);
            SeatEntry {
                seat_id: seat.seat_id.as_str(),
                section: seat.section.as_str(),
                channel: channels.of(&seat.section, as_of).map(ChannelName::as_str),
                state: *view,
            }
        })
        .collect();
    let body = serde_json::to_vec(&SeatMapBody {
        event_id,
        as_of,
        seats: entries,
    })
    .map_err(|e| BackendError::permanent(format!("cannot encode the seat map: {e}")))?;
    Ok(Rendered {
        gzip: gzip(&body)?,
        body: Bytes::from(body),
        etag: format!("W/\"{:016x}\"", hasher.finish()),
    })
}

/// `body` gzip-compressed at the fastest level: a seat map's JSON repeats itself, so even that
/// level makes it a tenth of its size, and it is compressed once per snapshot.
fn gzip(body: &[u8]) -> Result<Bytes, BackendError> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 8), Compression::fast());
    encoder
        .write_all(body)
        .and_then(|()| encoder.finish())
        .map(Bytes::from)
        .map_err(|e| BackendError::permanent(format!("cannot compress the seat map: {e}")))
}
