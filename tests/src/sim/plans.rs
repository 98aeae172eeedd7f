//! The AWS-shaped commit in the simulation: the memory store's [`Commit`] port with every read
//! and every commit behind the [`Gate`], so that each is a step of its own at which other actors
//! run (another worker's commit, a settlement, the sweeper) and fail its conditions, as
//! concurrent writers fail DynamoDB's; and at which the storm fails the call before or after it
//! commits. The workers' and buyers' inventory then runs the core's optimistic step
//! (`seatclaim_core::step::optimistic`), the code the AWS backend ships.

use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use seatclaim_core::domain::{
    BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, SaleTerms, Seat, SeatId, Section,
};
use seatclaim_core::memory::MemoryPlans;
use seatclaim_core::ports::BackendError;
use seatclaim_core::step::{BuyerCount, Commit, Decided};
use seatclaim_core::step::{Claiming, Committed, Plan};

use super::gate::{Gate, Part};

/// The memory store's optimistic port behind the gate; `piecemeal` is the mutant that commits a
/// plan's writes one by one instead of all or none.
pub struct GatedPlans {
    inner: MemoryPlans,
    gate: Arc<Gate>,
    piecemeal: bool,
}

impl GatedPlans {
    /// `inner` behind `gate`.
    pub fn new(inner: MemoryPlans, gate: Arc<Gate>, piecemeal: bool) -> Self {
        Self {
            inner,
            gate,
            piecemeal,
        }
    }

    /// The mutant's commit: each write a plan of its own, so a plan whose condition fails
    /// halfway keeps the writes before it.
    async fn piecemeal(&self, plan: &Plan) -> Result<Committed, BackendError> {
        let mut failed = Vec::new();
        for (index, write) in plan.writes.iter().enumerate() {
            let one = Plan::new(&plan.job, plan.now, vec![write.clone()]);
            if let Committed::Failed(_) = self.inner.commit(&one).await? {
                failed.push(index);
            }
        }
        Ok(match failed.is_empty() {
            true => Committed::Written(None),
            false => Committed::Failed(failed),
        })
    }
}

#[async_trait]
impl Commit for GatedPlans {
    async fn commit(&self, plan: &Plan) -> Result<Committed, BackendError> {
        let work = async {
            match self.piecemeal {
                true => self.piecemeal(plan).await,
                false => self.inner.commit(plan).await,
            }
        };
        self.gate.call("commit.plan", Part::Store, work).await
    }

    fn now(&self) -> Timestamp {
        self.inner.now()
    }

    fn claiming(&self) -> &Claiming {
        self.inner.claiming()
    }

    async fn pause(&self) {
        self.gate.park("commit.pause").await;
    }

    async fn terms(&self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError> {
        let work = self.inner.terms(event_id);
        self.gate.call("commit.terms", Part::Read, work).await
    }

    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        let work = self.inner.job(job_id);
        self.gate.call("commit.job", Part::Read, work).await
    }

    async fn decided(&self, job_id: JobId, now: Timestamp) -> Result<Decided, BackendError> {
        let work = self.inner.decided(job_id, now);
        self.gate.call("commit.decided", Part::Read, work).await
    }

    async fn candidates(&self, intent: &Intent, now: Timestamp) -> Result<Vec<Seat>, BackendError> {
        let work = self.inner.candidates(intent, now);
        self.gate.call("commit.candidates", Part::Read, work).await
    }

    async fn seats(
        &self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Seat>, BackendError> {
        let work = self.inner.seats(event_id, seat_ids);
        self.gate.call("commit.seats", Part::Read, work).await
    }

    async fn free_seats(
        &self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        let work = self.inner.free_seats(event_id, section, now);
        self.gate.call("commit.free_seats", Part::Read, work).await
    }

    async fn line_marked(
        &self,
        event_id: &EventId,
        section: &Section,
    ) -> Result<bool, BackendError> {
        let work = self.inner.line_marked(event_id, section);
        self.gate.call("commit.line_marked", Part::Read, work).await
    }

    async fn waiting(
        &self,
        event_id: &EventId,
        section: &Section,
        depth: usize,
    ) -> Result<Vec<Job>, BackendError> {
        let work = self.inner.waiting(event_id, section, depth);
        self.gate.call("commit.waiting", Part::Read, work).await
    }

    async fn buyer_count(
        &self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<BuyerCount, BackendError> {
        let work = self.inner.buyer_count(event_id, buyer, now);
        self.gate.call("commit.buyer_count", Part::Read, work).await
    }

    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<(CodeRecord, BuyerCount)>, BackendError> {
        let work = self.inner.code(event_id, hash, now);
        self.gate.call("commit.code", Part::Read, work).await
    }

    async fn open_lines(&self) -> Result<Vec<(EventId, Vec<Section>)>, BackendError> {
        let work = self.inner.open_lines();
        self.gate.call("commit.open_lines", Part::Read, work).await
    }
}
