//! The claim on DynamoDB (seat reads are in `seat_reads.rs`, settlements in `settle.rs`). A hold
//! is one transaction: a conditional update per seat (AVAILABLE, or HELD past its deadline), the
//! job's move from PENDING, and the outbox event. A rejection is the job's conditional update
//! alone; its event is handed back to be published and recorded (`Claims::unrecorded`, and
//! `rejections.rs`).

use async_trait::async_trait;
use aws_sdk_dynamodb::types::TransactWriteItem;
use jiff::{SignedDuration, Timestamp};

use futures_util::{StreamExt, TryStreamExt};

use super::DynamoStore;
use super::error::classify;
use super::item::{Transacted, get_s, n, s, transact, update};
use super::keys::{held_shard_key, seat_key};
use super::names::HELD_JOBS_INDEX;
use crate::domain::{
    ClaimDecision, Intent, Job, JobAction, JobId, JobStatus, REASON_UNAVAILABLE, ReservationEvent,
    SeatId, SeatRequest, decide_claim,
};
use crate::ports::{BackendError, ClaimOutcome, Claims, Inventory, Outbox, Settled};

/// `held-by-deadline` shards the sweeper reads at once.
const SWEEP_READS: usize = 16;

/// Rounds of a section claim whose candidates were taken between the (eventually consistent)
/// index read and the write: each tries fresh ones; past the last, the intent is retried later.
const SECTION_ROUNDS: usize = 12;

/// How long a rejection's deciding delivery has to record its event. A delivery of the same
/// job within that time (a duplicate) is retried later instead of taking the event over, so that
/// only a crash, never a duplicate, publishes a rejection twice; a crashed worker's intent comes
/// back only after the visibility timeout, by when the grace has passed.
const RECORD_GRACE: SignedDuration = SignedDuration::from_secs(5);

/// A claim's outcome, with the event of a rejection still to publish and record.
type Claimed = (ClaimOutcome, Option<ReservationEvent>);

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

    async fn claim_one(&self, intent: &Intent, now: Timestamp) -> Result<Claimed, BackendError> {
        // The job as admission stored it: an undecided job is exactly the intent's PENDING job,
        // and every write below is conditioned on it still being PENDING, so it is not read
        // first (one request fewer per claim). A redelivery of a decided job fails that
        // condition, and only then is the job read to say how it was decided.
        let job = Job::pending(intent);
        let hold = self
            .event_meta(&intent.event_id)
            .await?
            .map(|meta| SignedDuration::from_millis(meta.hold_ms))
            .ok_or_else(|| {
                BackendError::permanent(format!("intent for unknown event {}", intent.event_id))
            })?;
        // An exact claim that loses a race is lost; a section claim tries other free seats.
        let section = matches!(intent.request, SeatRequest::Section { .. });
        for _ in 0..if section { SECTION_ROUNDS } else { 1 } {
            let mut candidates = self.candidates(intent).await?;
            // Concurrent section claims each try their own few of the free seats, instead of
            // all racing for the first ones.
            fastrand::shuffle(&mut candidates);
            let (seat_ids, until) = match decide_claim(&intent.request, &candidates, now, hold) {
                ClaimDecision::Hold { seat_ids, until } => (seat_ids, until),
                ClaimDecision::Reject { reason } => return self.reject(&job, &reason, now).await,
            };
            if let Some(outcome) = self.hold_seats(&job, seat_ids, until, now).await? {
                return Ok(outcome);
            }
        }
        if section {
            // The section still had free seats at the last look: never a rejection, a retry.
            return Err(BackendError::transient(format!(
                "job {}: section claims kept losing races for its free seats",
                job.job_id
            )));
        }
        self.reject(&job, REASON_UNAVAILABLE, now).await
    }

    /// The conditional write of a hold: the seats (each AVAILABLE or lapsed), the job's move
    /// from PENDING and its event, in one transaction. `None` when a seat was taken since it was
    /// read; otherwise the job's outcome (held, or decided by another delivery).
    async fn hold_seats(
        &self,
        job: &Job,
        seat_ids: Vec<SeatId>,
        until: Timestamp,
        now: Timestamp,
    ) -> Result<Option<Claimed>, BackendError> {
        let Ok(held) = job.hold(seat_ids.clone(), until, now) else {
            return Ok(Some((ClaimOutcome::AlreadyDecided(job.status), None)));
        };
        let mut writes = seat_ids
            .iter()
            .map(|seat| self.hold_write(job, seat, until, now))
            .collect::<Result<Vec<_>, _>>()?;
        writes.extend(self.transition(&held)?);
        match transact(&self.db, writes).await? {
            Transacted::Committed => Ok(Some((ClaimOutcome::of(&held), None))),
            // The job's own condition (after the seats) failed: another delivery decided it.
            Transacted::ConditionFailed(failed)
                if failed.get(seat_ids.len()).copied().unwrap_or(false) =>
            {
                self.already_decided(job.job_id, now).await.map(Some)
            }
            Transacted::ConditionFailed(_) => Ok(None),
        }
    }

    /// Rejects a PENDING job for `reason` (the job's update alone: its event is recorded after),
    /// unless another delivery decided it first.
    async fn reject(
        &self,
        job: &Job,
        reason: &str,
        now: Timestamp,
    ) -> Result<Claimed, BackendError> {
        let Ok(rejected) = job.reject(reason, now) else {
            return Ok((ClaimOutcome::AlreadyDecided(job.status), None));
        };
        match transact(&self.db, vec![self.job_write(&rejected)?]).await? {
            Transacted::Committed => Ok((ClaimOutcome::of(&rejected), Some(rejected.event))),
            Transacted::ConditionFailed(_) => self.already_decided(job.job_id, now).await,
        }
    }

    /// How another delivery decided the job. A rejection whose event is not recorded gets it
    /// recorded now if a crash kept it from being recorded; within [`RECORD_GRACE`] of the
    /// rejection its deciding delivery may still be recording it, so this one is retried later.
    async fn already_decided(
        &self,
        job_id: JobId,
        now: Timestamp,
    ) -> Result<Claimed, BackendError> {
        let (job, at) = self
            .load_job_at(job_id)
            .await?
            .ok_or_else(|| BackendError::permanent(format!("job {job_id} vanished")))?;
        let decided = ClaimOutcome::AlreadyDecided(job.status);
        if job.status != JobStatus::Rejected || self.is_recorded(job_id, at).await? {
            return Ok((decided, None));
        }
        if now.duration_since(at) < RECORD_GRACE {
            return Err(BackendError::transient(format!(
                "job {job_id} was rejected at {at} by another delivery, which may still be recording its event"
            )));
        }
        Ok((decided, Some(ReservationEvent::of(&job, at))))
    }
}

#[async_trait]
impl Inventory for DynamoStore {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        // Intents are independent decisions (the conditions settle any race between them), so
        // the batch is claimed concurrently: its latency is one claim's, not ten.
        let claimed = futures_util::future::join_all(
            intents.iter().map(|intent| self.claim_one(intent, now)),
        )
        .await;
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
        Ok(Claims {
            outcomes,
            unrecorded: unrecorded.into_iter().flatten().collect(),
        })
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
        let lapsed = futures_util::stream::iter(0..self.held_shards)
            .map(|shard| self.lapsed_in_shard(shard, now, limit))
            .buffer_unordered(SWEEP_READS)
            .try_collect::<Vec<_>>()
            .await?;
        // Expirations are conditional writes on separate jobs: they run side by side.
        let settled = futures_util::stream::iter(lapsed.into_iter().flatten().take(limit))
            .map(|job_id| self.settle_job(job_id, JobAction::Expire, now))
            .buffer_unordered(SWEEP_READS)
            .try_collect::<Vec<_>>()
            .await?;
        Ok(settled
            .iter()
            .filter(|s| matches!(s, Settled::Done(job) if job.status == JobStatus::Expired))
            .count())
    }
}
