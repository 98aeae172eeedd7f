//! The claim and its siblings on the memory tables: the core's step ([`crate::step`]) decides
//! each one under the one lock; a batch is one transaction ([`State::atomically`]), as on SQLite.

use async_trait::async_trait;
use jiff::Timestamp;

use super::MemoryStore;
use super::step::MemoryStep;
use super::waitlist;
use crate::domain::{EventId, Intent, JobAction, JobId, Tender};
use crate::ports::{BackendError, Claims, Inventory, Settled};
use crate::step::{claim_one, serve_released, settle_one};

#[async_trait]
impl Inventory for MemoryStore {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let outcomes = self.lock().atomically(|state| {
            let mut step = MemoryStep { state };
            intents
                .iter()
                .map(|intent| claim_one(&mut step, intent, now).map(|(outcome, _)| outcome))
                .collect()
        })?;
        // Every event is in the outbox with its transition: nothing is left to the caller.
        Ok(Claims {
            outcomes,
            unrecorded: Vec::new(),
        })
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        // The clock is read under the lock, as SQLite's adapter reads it in its transaction.
        self.lock().atomically(|state| {
            let now = self.clock.now();
            settle_one(&mut MemoryStep { state }, job_id, action, tender, now)
                .map(|(settled, _)| settled)
        })
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        self.lock()
            .atomically(|state| waitlist::close(state, event_id, self.clock.now()))
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        self.lock().atomically(|state| {
            let lapsed = state.lapsed_holds(now, limit);
            let mut step = MemoryStep { state };
            let mut released = 0;
            for job_id in lapsed {
                let (settled, _) =
                    settle_one(&mut step, job_id, JobAction::Expire, &Tender::Nothing, now)?;
                released += usize::from(matches!(settled, Settled::Done(_)));
            }
            serve_released(&mut step, now)?;
            Ok(released)
        })
    }
}
