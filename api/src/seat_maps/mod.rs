//! The read path of the browse storm: each event's seat map is a snapshot held in this process
//! and rebuilt at most once per `SEATCLAIM_SEAT_MAP_MAX_AGE_MS`, so the backend sees one seat-map
//! read per interval per API process however many buyers ask. Requests that find the snapshot
//! stale share one rebuild. The map is advisory: the claim re-checks every seat in the inventory.
//! Memory stays bounded whatever clients ask: an unknown event or section keeps nothing, and a
//! snapshot unread for [`IDLE`], or the least recently read past [`MOST_SNAPSHOTS`], is dropped.

mod gate;
mod snapshot;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::Backend;
use seatclaim_core::domain::EventId;
use seatclaim_core::ports::{BackendError, EventInfo};
use seatclaim_runtime::background::Background;

pub use gate::{DEFAULT_READ_WAIT_MS, DEFAULT_READS_PER_SEC, ReadBudget, Shed};
pub(crate) use snapshot::SeatMapBody;
pub use snapshot::{Rendered, Snapshot, StateCounts};

/// The most events whose snapshots one process keeps.
const MOST_SNAPSHOTS: usize = 256;
/// How long a snapshot nobody reads is kept.
const IDLE: SignedDuration = SignedDuration::from_secs(300);

/// One event's snapshot, the lock its rebuilds take turns on, and when it was last asked for
/// (milliseconds since the epoch).
#[derive(Default)]
struct Slot {
    current: RwLock<Option<Arc<Snapshot>>>,
    rebuild: tokio::sync::Mutex<()>,
    read_at: AtomicI64,
}

impl Slot {
    fn touch(&self, now: Timestamp) {
        self.read_at.store(now.as_millisecond(), Ordering::Relaxed);
    }

    fn idle_at(&self, now: Timestamp) -> bool {
        let idle = i64::try_from(IDLE.as_millis()).unwrap_or(i64::MAX);
        now.as_millisecond() - self.read_at.load(Ordering::Relaxed) >= idle
    }

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

/// How old a seat map may be, and how much of them this process answers.
#[derive(Debug, Clone, Copy)]
pub struct SeatMapLimits {
    /// The oldest a snapshot may be (zero: rebuilt at every request).
    pub max_age: SignedDuration,
    /// The read budget.
    pub budget: ReadBudget,
}

/// Every event's snapshot in this process.
pub struct SeatMaps {
    backend: Backend,
    max_age: SignedDuration,
    slots: Mutex<HashMap<EventId, Arc<Slot>>>,
    list: tokio::sync::Mutex<Listed>,
    gate: gate::ReadGate,
    renderer: Background,
}

impl SeatMaps {
    /// Snapshots of `backend`'s seat maps, each rebuilt at most once per `max_age` (zero: at
    /// every request, reading the backend each time), answered within its read budget.
    #[must_use]
    pub fn new(backend: Backend, limits: SeatMapLimits) -> Self {
        Self {
            backend,
            max_age: limits.max_age,
            slots: Mutex::new(HashMap::new()),
            list: tokio::sync::Mutex::new(None),
            gate: gate::ReadGate::new(limits.budget),
            renderer: Background::default(),
        }
    }

    /// Waits until an answer with `bytes` of body fits the read budget, or sheds it.
    pub async fn admit_read(&self, bytes: usize) -> Result<(), Shed> {
        self.gate.admit(bytes).await
    }

    /// The event's snapshot, rebuilt first if it is older than the maximum age; `None` for an
    /// unknown event (which keeps no slot, so unknown ids cannot grow the map).
    pub async fn get(&self, event_id: &EventId) -> Result<Option<Arc<Snapshot>>, BackendError> {
        let slot = self.slot(event_id);
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
        let listed = self.listed().await?;
        let info = listed.iter().find(|info| &info.event_id == event_id);
        let channels = info.map(|info| info.channels.clone()).unwrap_or_default();
        // Rendering and compressing a large map takes milliseconds of a core: on the background
        // thread, at the lowest priority, so the reservations that arrive meanwhile go first.
        let id = event_id.clone();
        let snapshot = self
            .renderer
            .run(move || Snapshot::build(id, (seats, channels), as_of))
            .await
            .map_err(|e| BackendError::transient(format!("the seat map's rendering: {e}")))??;
        let snapshot = Arc::new(snapshot);
        *slot.current.write().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&snapshot));
        Ok(Some(snapshot))
    }

    /// The event's slot, made (after dropping the idle and surplus ones) if it has none.
    fn slot(&self, event_id: &EventId) -> Arc<Slot> {
        let now = self.backend.clock.now();
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(slot) = slots.get(event_id) {
            slot.touch(now);
            return Arc::clone(slot);
        }
        evict(&mut slots, now);
        let slot = Arc::new(Slot::default());
        slot.touch(now);
        slots.insert(event_id.clone(), Arc::clone(&slot));
        metrics::gauge!("seatclaim_seat_map_snapshots").set(slots.len() as f64);
        slot
    }

    /// Every event with its snapshot; the list is read again at most once per maximum age.
    pub async fn events(&self) -> Result<Vec<(EventInfo, Arc<Snapshot>)>, BackendError> {
        let listed = self.listed().await?;
        let mut events = Vec::with_capacity(listed.len());
        for info in listed.iter() {
            if let Some(snapshot) = self.get(&info.event_id).await? {
                events.push((info.clone(), snapshot));
            }
        }
        Ok(events)
    }
}

impl SeatMaps {
    /// The event list, read again at most once per maximum age (it names each event's
    /// channels, which its seat map shows).
    async fn listed(&self) -> Result<Arc<Vec<EventInfo>>, BackendError> {
        let mut list = self.list.lock().await;
        let now = self.backend.clock.now();
        Ok(match list.as_ref() {
            Some((at, events)) if now.duration_since(*at) < self.max_age => Arc::clone(events),
            _ => {
                let events = Arc::new(self.backend.catalog.events().await?);
                *list = Some((now, Arc::clone(&events)));
                events
            }
        })
    }
}

/// Drops the slots nobody asked for in [`IDLE`], then the least recently asked for until one
/// more fits under [`MOST_SNAPSHOTS`].
fn evict(slots: &mut HashMap<EventId, Arc<Slot>>, now: Timestamp) {
    slots.retain(|_, slot| !slot.idle_at(now));
    while slots.len() >= MOST_SNAPSHOTS {
        let oldest = slots
            .iter()
            .min_by_key(|(_, slot)| slot.read_at.load(Ordering::Relaxed))
            .map(|(event_id, _)| event_id.clone());
        let Some(oldest) = oldest else { return };
        slots.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot_read_at(at: Timestamp) -> Arc<Slot> {
        let slot = Arc::new(Slot::default());
        slot.touch(at);
        slot
    }

    #[test]
    fn idle_snapshots_go_and_the_least_recently_read_make_room() {
        let start = Timestamp::UNIX_EPOCH;
        let mut slots = HashMap::new();
        for n in 0..MOST_SNAPSHOTS {
            let at = start + SignedDuration::from_secs(i64::try_from(n).unwrap_or(0));
            let id = EventId::parse(&format!("e{n}")).expect("an id");
            slots.insert(id, slot_read_at(at));
        }
        let soon = start + SignedDuration::from_secs(299);
        evict(&mut slots, soon);
        assert_eq!(slots.len(), MOST_SNAPSHOTS - 1, "room for one more");
        assert!(
            !slots.contains_key(&EventId::parse("e0").expect("an id")),
            "the least recently read went"
        );
        let later = start + IDLE + SignedDuration::from_secs(10);
        evict(&mut slots, later);
        assert_eq!(
            slots.len(),
            MOST_SNAPSHOTS - 11,
            "the ones unread for the idle time went"
        );
    }
}
