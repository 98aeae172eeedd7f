//! The process's cache of events' metadata (`EventMeta`: terms, sections, and an event's seat
//! ids once an exact-seat admission needed them, a few MiB for a large house). Bounded whatever
//! clients ask for: at most [`MAX_CACHED_EVENTS`], an entry unused for [`IDLE`] is dropped when
//! another is added, and the least recently used makes room when the cache is full. Only READY
//! events are cached, so unknown event ids never take a place.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};

use seatclaim_core::domain::EventId;
use seatclaim_core::ports::BackendError;

/// Events whose metadata a process keeps at once.
pub(crate) const MAX_CACHED_EVENTS: usize = 64;
/// How long an event nobody asked about stays cached.
pub(crate) const IDLE: SignedDuration = SignedDuration::from_mins(5);

/// A bounded map of events to their cached value.
pub(crate) struct EventCache<V> {
    entries: Mutex<HashMap<EventId, (V, Timestamp)>>,
}

impl<V: Clone> EventCache<V> {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        Self {
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The event's cached value, marked used at `now`.
    pub(crate) fn get(
        &self,
        event_id: &EventId,
        now: Timestamp,
    ) -> Result<Option<V>, BackendError> {
        let mut entries = self.entries.lock().map_err(|_| poisoned())?;
        Ok(entries.get_mut(event_id).map(|(value, used_at)| {
            *used_at = now;
            value.clone()
        }))
    }

    /// Caches `value` for the event at `now`, after dropping the idle entries and, if the cache
    /// is still full, the least recently used one.
    pub(crate) fn insert(
        &self,
        event_id: EventId,
        value: V,
        now: Timestamp,
    ) -> Result<(), BackendError> {
        let mut entries = self.entries.lock().map_err(|_| poisoned())?;
        entries.retain(|_, (_, used_at)| now.duration_since(*used_at) < IDLE);
        if entries.len() >= MAX_CACHED_EVENTS && !entries.contains_key(&event_id) {
            let oldest = entries
                .iter()
                .min_by_key(|(_, (_, used_at))| *used_at)
                .map(|(id, _)| id.clone());
            if let Some(oldest) = oldest {
                entries.remove(&oldest);
            }
        }
        entries.insert(event_id, (value, now));
        Ok(())
    }

    /// How many events are cached.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.lock().map_or(0, |entries| entries.len())
    }
}

fn poisoned() -> BackendError {
    BackendError::permanent("the event cache lock was poisoned")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: usize) -> EventId {
        EventId::parse(&format!("e{n}")).unwrap()
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    #[test]
    fn a_full_cache_drops_the_least_recently_used_event() {
        let cache = EventCache::new();
        for n in 0..MAX_CACHED_EVENTS {
            cache.insert(event(n), n, at(n as i64)).unwrap();
        }
        // e0 is the oldest by insertion, but reading it makes e1 the least recently used.
        assert_eq!(cache.get(&event(0), at(100)).unwrap(), Some(0));
        cache.insert(event(1000), 1000, at(101)).unwrap();
        assert_eq!(cache.len(), MAX_CACHED_EVENTS);
        assert_eq!(cache.get(&event(1), at(102)).unwrap(), None);
        assert_eq!(cache.get(&event(0), at(102)).unwrap(), Some(0));
    }

    #[test]
    fn events_unused_for_the_idle_time_go_when_another_comes() {
        let cache = EventCache::new();
        cache.insert(event(1), 1, at(0)).unwrap();
        cache.insert(event(2), 2, at(0)).unwrap();
        let idle = IDLE.as_secs();
        assert_eq!(cache.get(&event(2), at(idle - 1)).unwrap(), Some(2));
        cache.insert(event(3), 3, at(idle)).unwrap();
        assert_eq!(cache.len(), 2, "e1 went, e2 was used since");
        assert_eq!(cache.get(&event(1), at(idle)).unwrap(), None);
    }
}
