use std::collections::BTreeMap;

use async_trait::async_trait;

use jiff::Timestamp;

use super::MemoryStore;
use super::codes;
use super::opening::openings_of;
use super::state::StoredEvent;
use crate::domain::{
    ChannelName, CodeHash, CodeRecord, EventId, NewEvent, SaleOpened, Seat, SeatState,
};
use crate::ports::{
    BackendError, Catalog, CodeStanding, CodesCreation, EventCreation, EventInfo, EventTallies,
    Opening,
};

#[async_trait]
impl Catalog for MemoryStore {
    async fn create_event(&self, event: &NewEvent) -> Result<EventCreation, BackendError> {
        let mut state = self.lock();
        if state.events.contains_key(&event.event_id) {
            return Ok(EventCreation::AlreadyExists);
        }
        let seats: Vec<Seat> = event
            .seats
            .iter()
            .enumerate()
            .map(|(at, (seat_id, section))| Seat {
                seat_id: seat_id.clone(),
                section: section.clone(),
                state: SeatState::Available,
                place: event.places.get(at).copied(),
            })
            .collect();
        let position: BTreeMap<_, _> = seats
            .iter()
            .enumerate()
            .map(|(at, seat)| (seat.seat_id.clone(), at))
            .collect();
        let created = u64::try_from(state.events.len()).unwrap_or(u64::MAX);
        state.events.insert(
            event.event_id.clone(),
            StoredEvent {
                name: event.name.clone(),
                hold: event.hold,
                limit: event.max_seats_per_buyer,
                prices: event.prices.clone(),
                extension: event.extension,
                waitlist: event.waitlist,
                seats,
                position,
                created,
                opens_at: event.sale_starts_at,
                best: event.best,
                openings: openings_of(event.sale_starts_at, &event.channels),
                channels: event.channels.clone(),
            },
        );
        Ok(EventCreation::Created(event.seats.len()))
    }

    async fn seat_map(&self, event_id: &EventId) -> Result<Option<Vec<Seat>>, BackendError> {
        Ok(self
            .lock()
            .events
            .get(event_id)
            .map(|event| event.seats.clone()))
    }

    async fn events(&self) -> Result<Vec<EventInfo>, BackendError> {
        let state = self.lock();
        let mut events: Vec<(&EventId, &StoredEvent)> = state.events.iter().collect();
        events.sort_by_key(|(_, event)| event.created);
        Ok(events
            .into_iter()
            .map(|(event_id, event)| EventInfo {
                event_id: event_id.clone(),
                name: event.name.clone(),
                hold: event.hold,
                max_seats_per_buyer: event.limit,
                prices: event.prices.clone(),
                extension: event.extension,
                waitlist: event.waitlist,
                sale_starts_at: event.opens_at,
                channels: event.channels.clone(),
            })
            .collect())
    }

    async fn opening(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<Option<Opening>, BackendError> {
        let state = self.lock();
        let opening = (state.events.get(event_id)).and_then(|e| e.openings.get(&channel.cloned()));
        Ok(opening.map(|opening| Opening {
            sale_starts_at: opening.starts,
            prequeued: state.prequeued(event_id, channel),
            draw: opening.draw.clone(),
        }))
    }

    async fn unpublished_openings(&self) -> Result<Vec<SaleOpened>, BackendError> {
        let state = self.lock();
        let openings = state
            .events
            .values()
            .flat_map(|event| event.openings.values());
        Ok(openings
            .filter(|opening| !opening.published)
            .filter_map(|opening| opening.draw.clone())
            .collect())
    }

    async fn opening_published(
        &self,
        event_id: &EventId,
        channel: Option<&ChannelName>,
    ) -> Result<(), BackendError> {
        let mut state = self.lock();
        let event = state.events.get_mut(event_id);
        if let Some(opening) = event.and_then(|e| e.openings.get_mut(&channel.cloned())) {
            opening.published = true;
        }
        Ok(())
    }

    async fn create_codes(
        &self,
        event_id: &EventId,
        codes: &[CodeRecord],
    ) -> Result<CodesCreation, BackendError> {
        Ok(codes::create(&mut self.lock(), event_id, codes))
    }

    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<CodeStanding>, BackendError> {
        Ok(codes::standing(&self.lock(), event_id, hash, now))
    }

    async fn revoke_code(&self, event_id: &EventId, hash: &CodeHash) -> Result<bool, BackendError> {
        let mut state = self.lock();
        let code = state.codes.get_mut(&(event_id.clone(), hash.clone()));
        Ok(code.map(|code| code.revoked = true).is_some())
    }

    async fn tallies(
        &self,
        event_id: &EventId,
        now: Timestamp,
        horizon: Timestamp,
    ) -> Result<Option<EventTallies>, BackendError> {
        let state = self.lock();
        Ok((state.events.contains_key(event_id))
            .then(|| codes::tallies(&state, event_id, now, horizon)))
    }

    async fn ping(&self) -> Result<(), BackendError> {
        Ok(())
    }
}
