//! The memory store's inventory decided as DynamoDB's is: by the core's optimistic step over a
//! [`Commit`] port ([`super::MemoryPlans`], or the simulation's gated wrapper of it), each read
//! and each commit a call of its own, so other processes' writes land in between.

use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;

use super::MemoryStore;
use crate::domain::{EventId, Intent, JobAction, JobId, JobStatus, Tender};
use crate::ports::{BackendError, Claims, Inventory, Settled};
use crate::step::Commit;
use crate::step::optimistic;

/// The inventory port over `plans`, with the memory store beside it for what no decision of the
/// optimistic step covers (closing a waitlist) and for listing lapsed holds.
pub struct Optimistic<C> {
    plans: C,
    store: Arc<MemoryStore>,
}

impl<C: Commit> Optimistic<C> {
    /// The inventory deciding through `plans` over `store`'s tables.
    pub fn new(plans: C, store: Arc<MemoryStore>) -> Self {
        Self { plans, store }
    }
}

#[async_trait]
impl<C: Commit> Inventory for Optimistic<C> {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let mut claims = Claims::default();
        for claimed in optimistic::claim_each(&self.plans, intents, now).await {
            let (outcome, unrecorded) = claimed?;
            claims.outcomes.push(outcome);
            claims.unrecorded.extend(unrecorded);
        }
        Ok(claims)
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        optimistic::settle(&self.plans, job_id, action, tender).await
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        self.store.close_waitlist(event_id).await
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let lapsed = self.store.inspect(|state| state.lapsed_holds(now, limit));
        let mut expired = 0;
        for job_id in lapsed {
            let settled =
                optimistic::settle(&self.plans, job_id, JobAction::Expire, &Tender::Nothing)
                    .await?;
            expired += usize::from(
                matches!(settled, Settled::Done(job) if job.status == JobStatus::Expired),
            );
        }
        optimistic::serve_open_lines(&self.plans).await?;
        Ok(expired)
    }
}
