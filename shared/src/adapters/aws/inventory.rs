//! The claim on DynamoDB (seat reads are in `seat_reads.rs`, settlements in `settle.rs`). Each
//! intent is one transaction: a conditional update per seat
//! (AVAILABLE, or HELD past its deadline), the job's move from PENDING, and the outbox event.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::TransactWriteItem;
use jiff::{SignedDuration, Timestamp};

use super::DynamoStore;
use super::catalog::seat_key;
use super::error::classify;
use super::item::{Transacted, get_s, n, s, transact, update};
use super::jobs::HELD_SHARDS;
use super::names::HELD_JOBS_INDEX;
use crate::domain::{
    ClaimDecision, Intent, Job, JobAction, JobId, JobStatus, REASON_UNAVAILABLE, SeatId,
    SeatRequest, decide_claim,
};
use crate::ports::{BackendError, ClaimOutcome, Inventory, Settled};

/// Rounds of read-decide-write for one intent. A section claim whose candidates were taken
/// between the (eventually consistent) index read and the write tries again with fresh ones.
pub(super) const CLAIM_ROUNDS: usize = 3;

impl DynamoStore {
    fn hold_write(
        &self,
        job: &Job,
        seat: &SeatId,
        until: Timestamp,
        now: Timestamp,
    ) -> Result<TransactWriteItem, BackendError> {
        update(
            &self.names.seats_table,
            seat_key(&job.event_id, seat),
            "SET #state = :held, job_id = :job, hold_until = :until REMOVE free_key",
            "#state = :available OR (#state = :held AND hold_until <= :now)",
            &[("#state", "state")],
            vec![
                (":held", s("HELD")),
                (":available", s("AVAILABLE")),
                (":job", s(job.job_id.to_string())),
                (":until", n(until.as_millisecond())),
                (":now", n(now.as_millisecond())),
            ],
        )
    }

    async fn claim_one(
        &self,
        intent: &Intent,
        now: Timestamp,
    ) -> Result<ClaimOutcome, BackendError> {
        let Some(job) = self.load_job(intent.job_id).await? else {
            return Err(BackendError::permanent(format!(
                "intent for unknown job {}",
                intent.job_id
            )));
        };
        if job.status != JobStatus::Pending {
            return Ok(ClaimOutcome::AlreadyDecided(job.status));
        }
        let hold = self
            .event_meta(&intent.event_id)
            .await?
            .map(|meta| SignedDuration::from_millis(meta.hold_ms))
            .ok_or_else(|| {
                BackendError::permanent(format!("intent for unknown event {}", intent.event_id))
            })?;
        let mut reason = REASON_UNAVAILABLE.to_owned();
        for round in 1..=CLAIM_ROUNDS {
            let (seat_ids, until) =
                match decide_claim(&intent.request, &self.candidates(intent).await?, now, hold) {
                    ClaimDecision::Hold { seat_ids, until } => (seat_ids, until),
                    ClaimDecision::Reject { reason: why } => {
                        reason = why;
                        break;
                    }
                };
            let Ok(held) = job.hold(seat_ids.clone(), until, now) else {
                return Ok(ClaimOutcome::AlreadyDecided(job.status));
            };
            let mut writes = seat_ids
                .iter()
                .map(|seat| self.hold_write(&job, seat, until, now))
                .collect::<Result<Vec<_>, _>>()?;
            writes.extend(self.transition(&held)?);
            match transact(&self.db, writes).await? {
                Transacted::Committed => return Ok(ClaimOutcome::Held { seat_ids, until }),
                // The job's own condition (after the seats) failed: another delivery decided it.
                Transacted::ConditionFailed(failed)
                    if failed.get(seat_ids.len()).copied().unwrap_or(false) =>
                {
                    return self.already_decided(intent.job_id).await;
                }
                // A seat was taken since it was read; a section claim may find others.
                Transacted::ConditionFailed(_)
                    if matches!(intent.request, SeatRequest::Section { .. })
                        && round < CLAIM_ROUNDS => {}
                Transacted::ConditionFailed(_) => break,
            }
        }
        self.reject(&job, &reason, now).await
    }

    /// Rejects a PENDING job for `reason`, unless another delivery decided it first.
    async fn reject(
        &self,
        job: &Job,
        reason: &str,
        now: Timestamp,
    ) -> Result<ClaimOutcome, BackendError> {
        let Ok(rejected) = job.reject(reason, now) else {
            return Ok(ClaimOutcome::AlreadyDecided(job.status));
        };
        match transact(&self.db, self.transition(&rejected)?).await? {
            Transacted::Committed => Ok(ClaimOutcome::of(&rejected)),
            Transacted::ConditionFailed(_) => self.already_decided(job.job_id).await,
        }
    }

    async fn already_decided(&self, job_id: JobId) -> Result<ClaimOutcome, BackendError> {
        let job = self
            .load_job(job_id)
            .await?
            .ok_or_else(|| BackendError::permanent(format!("job {job_id} vanished")))?;
        Ok(ClaimOutcome::AlreadyDecided(job.status))
    }
}

#[async_trait]
impl Inventory for DynamoStore {
    async fn claim(
        &self,
        intents: &[Intent],
        now: Timestamp,
    ) -> Result<Vec<ClaimOutcome>, BackendError> {
        // Intents are independent decisions (the conditions settle any race between them), so
        // the batch is claimed concurrently: its latency is one claim's, not ten.
        futures_util::future::join_all(intents.iter().map(|intent| self.claim_one(intent, now)))
            .await
            .into_iter()
            .collect()
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        now: Timestamp,
    ) -> Result<Settled, BackendError> {
        self.settle_job(job_id, action, now).await
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let mut released = 0;
        for shard in 0..HELD_SHARDS {
            let output = self
                .db
                .query()
                .table_name(&self.names.jobs_table)
                .index_name(HELD_JOBS_INDEX)
                .key_condition_expression("held_shard = :shard AND hold_until <= :now")
                .expression_attribute_values(":shard", s(format!("held#{shard}")))
                .expression_attribute_values(":now", n(now.as_millisecond()))
                .limit(i32::try_from(limit).unwrap_or(i32::MAX))
                .send()
                .await
                .map_err(|e| classify("Query held jobs", e))?;
            for item in output.items() {
                let Some(job_id) = JobId::parse(get_s(item, "job_id")?) else {
                    continue;
                };
                if let Settled::Done(job) = self.settle_job(job_id, JobAction::Expire, now).await? {
                    released += usize::from(job.status == JobStatus::Expired);
                }
            }
        }
        Ok(released)
    }
}
