//! The read path of the browse storm: each event's seat map is a snapshot held in this process
//! and rebuilt at most once per `SEATCLAIM_SEAT_MAP_MAX_AGE_MS`, so the backend sees one seat-map
//! read per interval per API process however many buyers ask. Requests that find the snapshot
//! stale share one rebuild. The map is advisory: the claim re-checks every seat in the inventory.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use axum::body::Bytes;
use jiff::{SignedDuration, Timestamp};
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{EventId, Seat, SeatView, Section};
use seatclaim_shared::ports::{BackendError, EventInfo};
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

/// One seat as the map shows it.
#[derive(Serialize, ToSchema)]
#[schema(as = SeatMapEntry)]
pub(crate) struct SeatEntry<'a> {
    /// The seat's id.
    seat_id: &'a str,
    /// Its section.
    section: &'a str,
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

/// A seat map answer: its JSON body and its (weak) entity tag.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The JSON body.
    pub body: Bytes,
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
    whole: Rendered,
    /// Sections rendered so far, each once per snapshot.
    sections: Mutex<HashMap<Section, Option<Rendered>>>,
}

impl Snapshot {
    fn build(event_id: EventId, seats: Vec<Seat>, as_of: Timestamp) -> Result<Self, BackendError> {
        let seats: Vec<(Seat, SeatView)> = seats
            .into_iter()
            .map(|seat| {
                let view = seat.state.view(as_of);
                (seat, view)
            })
            .collect();
        let mut counts = StateCounts::default();
        for (_, view) in &seats {
            match view {
                SeatView::Available => counts.available += 1,
                SeatView::Held => counts.held += 1,
                SeatView::Sold => counts.sold += 1,
            }
        }
        let whole = render(&event_id, as_of, seats.iter())?;
        Ok(Self {
            event_id,
            as_of,
            seats,
            counts,
            whole,
            sections: Mutex::new(HashMap::new()),
        })
    }

    /// The whole map.
    #[must_use]
    pub fn whole(&self) -> &Rendered {
        &self.whole
    }

    /// One section of the map; `None` if the event has no such section.
    pub fn section(&self, section: &Section) -> Result<Option<Rendered>, BackendError> {
        let mut sections = self.sections.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(rendered) = sections.get(section) {
            return Ok(rendered.clone());
        }
        let mut seats = self
            .seats
            .iter()
            .filter(|(seat, _)| &seat.section == section)
            .peekable();
        let rendered = match seats.peek() {
            Some(_) => Some(render(&self.event_id, self.as_of, seats)?),
            None => None,
        };
        sections.insert(section.clone(), rendered.clone());
        Ok(rendered)
    }
}

fn render<'a>(
    event_id: &EventId,
    as_of: Timestamp,
    seats: impl Iterator<Item = &'a (Seat, SeatView)>,
) -> Result<Rendered, BackendError> {
    let mut hasher = DefaultHasher::new();
    let entries: Vec<SeatEntry<'a>> = seats
        .map(|(seat, view)| {
            (seat.seat_id.as_str(), *view as u8).hash(&mut hasher);
            SeatEntry {
                seat_id: seat.seat_id.as_str(),
                section: seat.section.as_str(),
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
        body: Bytes::from(body),
        etag: format!("W/\"{:016x}\"", hasher.finish()),
    })
}

/// One event's snapshot and the lock its rebuilds take turns on.
#[derive(Default)]
struct Slot {
    current: RwLock<Option<Arc<Snapshot>>>,
    rebuild: tokio::sync::Mutex<()>,
}

impl Slot {
    fn fresh(&self, now: Timestamp, max_age: SignedDuration) -> Option<Arc<Snapshot>> {
        let current = self.current.read().unwrap_or_else(PoisonError::into_inner);
        current
            .as_ref()
            .filter(|snapshot| now.duration_since(snapshot.as_of) < max_age)
            .cloned()
    }
}

/// The event list, kept like a snapshot.
type Listed = Option<(Timestamp, Arc<Vec<EventInfo>>)>;

/// Every event's snapshot in this process.
pub struct SeatMaps {
    backend: Backend,
    max_age: SignedDuration,
    slots: Mutex<HashMap<EventId, Arc<Slot>>>,
    list: tokio::sync::Mutex<Listed>,
}

impl SeatMaps {
    /// Snapshots of `backend`'s seat maps, each rebuilt at most once per `max_age` (zero: at
    /// every request, reading the backend each time).
    #[must_use]
    pub fn new(backend: Backend, max_age: SignedDuration) -> Self {
        Self {
            backend,
            max_age,
            slots: Mutex::new(HashMap::new()),
            list: tokio::sync::Mutex::new(None),
        }
    }

    /// The event's snapshot, rebuilt first if it is older than the maximum age; `None` for an
    /// unknown event (which keeps no slot, so unknown ids cannot grow the map).
    pub async fn get(&self, event_id: &EventId) -> Result<Option<Arc<Snapshot>>, BackendError> {
        let slot = Arc::clone(
            self.slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(event_id.clone())
                .or_default(),
        );
        if let Some(snapshot) = slot.fresh(self.backend.clock.now(), self.max_age) {
            return Ok(Some(snapshot));
        }
        let _turn = slot.rebuild.lock().await;
        // Whoever held the lock before may have rebuilt it meanwhile.
        if let Some(snapshot) = slot.fresh(self.backend.clock.now(), self.max_age) {
            return Ok(Some(snapshot));
        }
        let as_of = self.backend.clock.now();
        let Some(seats) = self.backend.catalog.seat_map(event_id).await? else {
            self.slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(event_id);
            return Ok(None);
        };
        metrics::counter!("seatclaim_seat_map_rebuilds_total").increment(1);
        let snapshot = Arc::new(Snapshot::build(event_id.clone(), seats, as_of)?);
        *slot.current.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&snapshot));
        Ok(Some(snapshot))
    }

    /// Every event with its snapshot's counts; the list is read again at most once per maximum age.
    pub async fn events(&self) -> Result<Vec<(EventInfo, StateCounts)>, BackendError> {
        let listed = {
            let mut list = self.list.lock().await;
            let now = self.backend.clock.now();
            match list.as_ref() {
                Some((at, events)) if now.duration_since(*at) < self.max_age => Arc::clone(events),
                _ => {
                    let events = Arc::new(self.backend.catalog.events().await?);
                    *list = Some((now, Arc::clone(&events)));
                    events
                }
            }
        };
        let mut events = Vec::with_capacity(listed.len());
        for info in listed.iter() {
            if let Some(snapshot) = self.get(&info.event_id).await? {
                events.push((info.clone(), snapshot.counts));
            }
        }
        Ok(events)
    }
}
