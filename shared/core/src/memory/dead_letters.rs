//! The memory dead-letter queue: messages of the [`Lane::Dead`] lane, where `visible_at` is when
//! the message was dead-lettered. Each move flips a message's lane under the lock, so a message
//! is never lost or duplicated between the two queues.

use super::MemoryStore;
use super::queue::{Lane, decoded};
use crate::codec::{dead_letter_handle, dead_letter_of};
use crate::ports::{BackendError, DeadLetter, Delivery};

impl MemoryStore {
    /// Moves a delivery, if it is still the message's latest, to the dead-letter queue.
    pub(super) fn move_to_dead(
        &self,
        delivery: &Delivery,
        reason: &str,
    ) -> Result<(), BackendError> {
        let now = self.clock.now();
        let mut state = self.lock();
        if let Some((_, message)) = state.queue.in_flight(&delivery.receipt) {
            message.lane = Lane::Dead;
            message.reason = Some(reason.to_owned());
            message.visible_at = now;
        }
        Ok(())
    }

    /// Up to `limit` dead letters, oldest first.
    pub(super) fn list_dead(&self, limit: usize) -> Vec<DeadLetter> {
        self.lock()
            .queue
            .messages()
            .filter(|(_, m)| m.lane == Lane::Dead)
            .take(limit)
            .map(|(id, m)| DeadLetter {
                handle: dead_letter_handle(id),
                message: decoded(m),
                job_id: m.job_id,
                receive_count: m.receive_count,
                reason: m.reason.clone(),
                dead_lettered_at: m.visible_at,
            })
            .collect()
    }

    /// Moves listed dead letters back to the main queue, visible at once, receive count reset.
    pub(super) fn redrive_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let ids = dead_ids(letters)?;
        let now = self.clock.now();
        let mut state = self.lock();
        for id in ids {
            if let Some(message) = state.queue.messages.get_mut(&id)
                && message.lane == Lane::Dead
            {
                message.lane = Lane::Main;
                message.visible_at = now;
                message.receive_count = 0;
                message.reason = None;
            }
        }
        Ok(())
    }

    /// Deletes listed dead letters for good.
    pub(super) fn purge_dead(&self, letters: &[DeadLetter]) -> Result<(), BackendError> {
        let ids = dead_ids(letters)?;
        let mut state = self.lock();
        for id in ids {
            if state
                .queue
                .messages
                .get(&id)
                .is_some_and(|m| m.lane == Lane::Dead)
            {
                state.queue.messages.remove(&id);
            }
        }
        Ok(())
    }
}

fn dead_ids(letters: &[DeadLetter]) -> Result<Vec<i64>, BackendError> {
    letters
        .iter()
        .map(|letter| dead_letter_of(&letter.handle))
        .collect()
}
