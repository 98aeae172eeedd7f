//! The core's optimistic step on DynamoDB (`seatclaim_core::step::optimistic`, over its `Commit` port): the claim, the
//! settlement and the line's hand-out are decided there, once for every store without an
//! interactive transaction; this crate only reads for them and runs each decision's plan as one
//! `TransactWriteItems` (`encode.rs`), whose cancellation reasons say which condition failed.

mod encode;

use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;

use crate::DynamoStore;
use crate::seats::seat_counts::{count_key, count_of};
use seatclaim_core::domain::{
    BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, SaleTerms, Seat, SeatId, Section,
};
use seatclaim_core::ports::BackendError;
use seatclaim_core::step::{BuyerCount, Commit, Decided};
use seatclaim_core::step::{Claiming, Committed, Plan};

/// How long a section claim waits when only seats this process's other claims are writing
/// would do: their writes end within a request's flight.
const AROUND_OTHERS: Duration = Duration::from_millis(20);

/// Free seats a round of a line's serving reads (`free_seats` reads pages of 16 times it).
const SEATS_PER_ROUND: u8 = 10;

#[async_trait]
impl Commit for DynamoStore {
    async fn commit(&self, plan: &Plan) -> Result<Committed, BackendError> {
        self.run_plan(plan).await
    }

    fn now(&self) -> Timestamp {
        self.clock.now()
    }

    fn claiming(&self) -> &Claiming {
        &self.process.claiming
    }

    async fn pause(&self) {
        tokio::time::sleep(AROUND_OTHERS).await;
    }

    async fn terms(&self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError> {
        Ok(self.event_meta(event_id).await?.map(|meta| meta.terms()))
    }

    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.load_job(job_id).await
    }

    async fn decided(&self, job_id: JobId, now: Timestamp) -> Result<Decided, BackendError> {
        self.already_decided(job_id, now).await
    }

    async fn candidates(
        &self,
        intent: &Intent,
        _now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        let mut candidates = self.candidates(intent).await?;
        // Seats without places (events created before best-available) are taken in the order
        // given: concurrent claims of such an event each try their own few of them.
        fastrand::shuffle(&mut candidates);
        Ok(candidates)
    }

    async fn seats(
        &self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Seat>, BackendError> {
        self.read_seats(event_id, seat_ids).await
    }

    async fn free_seats(
        &self,
        event_id: &EventId,
        section: &Section,
        _now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        self.free_seats(event_id, section.as_str(), SEATS_PER_ROUND)
            .await
    }

    async fn line_marked(
        &self,
        event_id: &EventId,
        section: &Section,
    ) -> Result<bool, BackendError> {
        self.flagged(event_id, section.as_str()).await
    }

    async fn has_waiters(
        &self,
        event_id: &EventId,
        section: &Section,
    ) -> Result<bool, BackendError> {
        let head = self.line_head(event_id, section.as_str(), 1, true).await?;
        Ok(!head.is_empty())
    }

    async fn waiting(
        &self,
        event_id: &EventId,
        section: &Section,
        depth: usize,
    ) -> Result<Vec<Job>, BackendError> {
        self.waiting_jobs(event_id, section, depth).await
    }

    async fn buyer_count(
        &self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<BuyerCount, BackendError> {
        let item = self.count_item(count_key(event_id, buyer)).await?;
        count_of(item.as_ref(), now)
    }

    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<(CodeRecord, BuyerCount)>, BackendError> {
        let code = self.code_with_count(event_id, hash, now).await?;
        Ok(code.map(|(record, count, _)| (record, count)))
    }

    async fn open_lines(&self) -> Result<Vec<(EventId, Vec<Section>)>, BackendError> {
        let mut lines = Vec::new();
        for event_id in self.events_with_open_waitlists().await? {
            let Some(meta) = self.event_meta(&event_id).await? else {
                continue;
            };
            let sections = (meta.sections.iter())
                .map(|s| Section::parse(s).map_err(|e| BackendError::permanent(e.to_string())))
                .collect::<Result<_, _>>()?;
            lines.push((event_id, sections));
        }
        Ok(lines)
    }
}
