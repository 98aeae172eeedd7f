//! The memory outbox (the events recorded with each transition, read in order by the relay) and
//! the memory publisher, which keeps every event it is handed so a check can compare what was
//! published with what was recorded.

use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use jiff::Timestamp;

use super::MemoryStore;
use crate::codec::{outbox_id, outbox_seq};
use crate::domain::{Notice, ReservationEvent};
use crate::ports::{BackendError, EventPublisher, Outbox, OutboxEntry};

#[async_trait]
impl Outbox for MemoryStore {
    /// One relay reads the whole outbox in order.
    fn short_page_drains(&self) -> bool {
        true
    }

    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError> {
        Ok(self
            .lock()
            .outbox()
            .iter()
            .filter(|recorded| recorded.published_at.is_none())
            .take(limit)
            .map(|recorded| OutboxEntry {
                id: outbox_id(recorded.seq),
                event: recorded.event.clone(),
            })
            .collect())
    }

    async fn mark_published(&self, entries: &[OutboxEntry]) -> Result<(), BackendError> {
        let seqs = entries
            .iter()
            .map(|entry| outbox_seq(&entry.id))
            .collect::<Result<Vec<_>, _>>()?;
        let now = self.clock.now();
        let mut state = self.lock();
        for seq in seqs {
            let at = usize::try_from(seq - 1).ok();
            if let Some(recorded) = at.and_then(|at| state.outbox.get_mut(at)) {
                recorded.published_at = Some(now);
            }
        }
        Ok(())
    }

    async fn record(
        &self,
        events: &[ReservationEvent],
        refused: &[usize],
    ) -> Result<(), BackendError> {
        let now = self.clock.now();
        let mut state = self.lock();
        for (i, event) in events.iter().enumerate() {
            let published = (!refused.contains(&i)).then_some(now);
            state.append_event(event.clone(), published);
        }
        Ok(())
    }

    async fn oldest_unpublished(&self) -> Result<Option<Timestamp>, BackendError> {
        Ok(self
            .lock()
            .outbox()
            .iter()
            .find(|recorded| recorded.published_at.is_none())
            .map(|recorded| recorded.event.occurred_at))
    }
}

/// Keeps every event published, in order, repeats included (publication is at-least-once).
#[derive(Debug, Default)]
pub struct MemoryPublisher {
    published: Mutex<Vec<ReservationEvent>>,
    notices: Mutex<Vec<Notice>>,
}

impl MemoryPublisher {
    /// Runs `look` on every event published so far, oldest first.
    pub fn inspect<T>(&self, look: impl FnOnce(&[ReservationEvent]) -> T) -> T {
        look(
            &self
                .published
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Every notice published so far, oldest first.
    pub fn notices(&self) -> Vec<Notice> {
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl EventPublisher for MemoryPublisher {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        self.published
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(events);
        Ok(Vec::new())
    }

    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError> {
        self.notices
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(notice.clone());
        Ok(())
    }
}
