//! The inventory port on DynamoDB: claims, settlements and the sweeper's expiry of lapsed holds,
//! after which it serves the waitlists, each decided by the core's optimistic step
//! (`seatclaim_core::step::optimistic`) over this store's `Commit` port (`commit/`).

use async_trait::async_trait;
use futures_util::{StreamExt, TryStreamExt};
use jiff::Timestamp;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{get_s, n, s};
use crate::dynamo::keys::held_shard_key;
use crate::setup::names::HELD_JOBS_INDEX;
use seatclaim_core::domain::{
    EventId, Intent, JobAction, JobId, JobStatus, ReservationEvent, Tender, Waitlist,
};
use seatclaim_core::ports::{BackendError, ClaimOutcome, Claims, Inventory, Outbox, Settled};
use seatclaim_core::step::optimistic;

/// `held-by-deadline` shards the sweeper reads at once.
const SWEEP_READS: usize = 16;

impl DynamoStore {
    /// Up to `limit` HELD jobs of one `held-by-deadline` shard whose deadline has passed.
    async fn lapsed_in_shard(
        &self,
        shard: u32,
        now: Timestamp,
        limit: usize,
    ) -> Result<Vec<JobId>, BackendError> {
        let output = self
            .db
            .query()
            .table_name(&self.names.jobs_table)
            .index_name(HELD_JOBS_INDEX)
            .key_condition_expression("held_shard = :shard AND hold_until <= :now")
            .expression_attribute_values(":shard", s(held_shard_key(shard)))
            .expression_attribute_values(":now", n(now.as_millisecond()))
            .projection_expression("job_id")
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| classify("Query held jobs", e))?;
        output
            .items()
            .iter()
            .map(|item| Ok(JobId::parse(get_s(item, "job_id")?)))
            .filter_map(Result::transpose)
            .collect()
    }
}

#[async_trait]
impl Inventory for DynamoStore {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let claimed = optimistic::claim_each(self, intents, now).await;
        if let Some(failed) = claimed.iter().find_map(|result| result.as_ref().err()) {
            // The batch's outcome is unknown to the caller, who claims it again intent by
            // intent; the rejections it did decide wait for the relay, so that their claims
            // again find them recorded instead of waiting out the record's grace.
            let decided: Vec<ReservationEvent> = claimed
                .iter()
                .filter_map(|result| result.as_ref().ok()?.1.clone())
                .collect();
            let every: Vec<usize> = (0..decided.len()).collect();
            self.record(&decided, &every).await?;
            return Err(failed.clone());
        }
        let (outcomes, unrecorded): (Vec<_>, Vec<_>) = claimed.into_iter().flatten().unzip();
        for (intent, outcome) in intents.iter().zip(&outcomes) {
            if !matches!(outcome, ClaimOutcome::AlreadyDecided(_)) {
                self.process.lines.decided(&intent.event_id, 1);
            }
        }
        Ok(Claims {
            outcomes,
            unrecorded: unrecorded.into_iter().flatten().collect(),
        })
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        // The API's role writes no seats: a worker settles for it.
        if self.settings.settlements == crate::Settlements::SentToWorkers {
            return self.settle_on_worker(job_id, action, tender).await;
        }
        optimistic::settle(self, job_id, action, tender).await
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        let Some(meta) = self.event_meta(event_id).await? else {
            return Ok(None);
        };
        if meta.waitlist == Waitlist::None {
            return Ok(Some(0));
        }
        self.close_lines(event_id, &meta.sections).await.map(Some)
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let lapsed = futures_util::stream::iter(0..self.settings.held_shards)
            .map(|shard| self.lapsed_in_shard(shard, now, limit))
            .buffer_unordered(SWEEP_READS)
            .try_collect::<Vec<_>>()
            .await?;
        // Expirations are conditional writes on separate jobs: they run side by side.
        let settled = futures_util::stream::iter(lapsed.into_iter().flatten().take(limit))
            .map(|job_id| optimistic::settle(self, job_id, JobAction::Expire, &Tender::Nothing))
            .buffer_unordered(SWEEP_READS)
            .try_collect::<Vec<_>>()
            .await?;
        let expired = settled
            .iter()
            .filter(|s| matches!(s, Settled::Done(job) if job.status == JobStatus::Expired))
            .count();
        optimistic::serve_open_lines(self).await?;
        Ok(expired)
    }
}
