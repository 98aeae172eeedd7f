//! The claim on DynamoDB. Each intent is one transaction: a conditional update per seat
//! (AVAILABLE, or HELD past its deadline), the job's move from PENDING, and the outbox event.

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{KeysAndAttributes, TransactWriteItem};
use jiff::{SignedDuration, Timestamp};

use super::DynamoStore;
use super::catalog::{free_key, seat_from_item, seat_key};
use super::error::{build_error, classify};
use super::item::{Item, Transacted, get_s, n, s, transact, update};
use super::jobs::HELD_SHARDS;
use super::names::{FREE_SEATS_INDEX, HELD_JOBS_INDEX};
use crate::domain::{
    ClaimDecision, Intent, Job, JobAction, JobId, JobStatus, REASON_UNAVAILABLE, Seat, SeatId,
    SeatRequest, SeatState, Settlement, Settling, decide_claim,
};
use crate::ports::{BackendError, ClaimOutcome, Inventory, Settled};

/// Rounds of read-decide-write for one intent. A section claim whose candidates were taken
/// between the (eventually consistent) index read and the write tries again with fresh ones.
const CLAIM_ROUNDS: usize = 3;

impl DynamoStore {
    /// Reads seats with strongly consistent reads, in the order asked.
    pub(super) async fn read_seats(
        &self,
        job_event: &crate::domain::EventId,
        ids: &[SeatId],
    ) -> Result<Vec<Seat>, BackendError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Item> = ids.iter().map(|id| seat_key(job_event, id)).collect();
        let request = KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(true)
            .build()
            .map_err(build_error)?;
        let output = self
            .db
            .batch_get_item()
            .request_items(&self.names.seats_table, request)
            .send()
            .await
            .map_err(|e| classify("BatchGetItem seats", e))?;
        if output
            .unprocessed_keys()
            .is_some_and(|left| !left.is_empty())
        {
            return Err(BackendError::transient(
                "BatchGetItem left seats unprocessed",
            ));
        }
        let items = output
            .responses()
            .and_then(|r| r.get(&self.names.seats_table))
            .cloned()
            .unwrap_or_default();
        let mut seats = items
            .iter()
            .map(seat_from_item)
            .collect::<Result<Vec<_>, _>>()?;
        seats.sort_by_key(|seat| ids.iter().position(|id| id == &seat.seat_id));
        Ok(seats)
    }

    /// Free seats of a section from the sparse index, a few more than needed so one lost race
    /// does not reject an intent that other free seats could satisfy.
    async fn free_seats(
        &self,
        intent: &Intent,
        section: &str,
        quantity: u8,
    ) -> Result<Vec<Seat>, BackendError> {
        let output = self
            .db
            .query()
            .table_name(&self.names.seats_table)
            .index_name(FREE_SEATS_INDEX)
            .key_condition_expression("free_key = :key")
            .expression_attribute_values(":key", s(free_key(&intent.event_id, section)))
            .limit(i32::from(quantity) * 2 + 2)
            .send()
            .await
            .map_err(|e| classify("Query free seats", e))?;
        output
            .items()
            .iter()
            .map(|item| {
                Ok(Seat {
                    seat_id: SeatId::parse(get_s(item, "seat_id")?)
                        .map_err(|_| BackendError::permanent("invalid seat id"))?,
                    section: crate::domain::Section::parse(section)
                        .map_err(|_| BackendError::permanent("invalid section"))?,
                    state: SeatState::Available,
                })
            })
            .collect()
    }

    async fn candidates(&self, intent: &Intent) -> Result<Vec<Seat>, BackendError> {
        match &intent.request {
            SeatRequest::Seats(ids) => self.read_seats(&intent.event_id, ids).await,
            SeatRequest::Section { section, quantity } => {
                self.free_seats(intent, section.as_str(), *quantity).await
            }
        }
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
        let Ok(rejected) = job.reject(&reason, now) else {
            return Ok(ClaimOutcome::AlreadyDecided(job.status));
        };
        match transact(&self.db, self.transition(&rejected)?).await? {
            Transacted::Committed => Ok(ClaimOutcome::Rejected { reason }),
            Transacted::ConditionFailed(_) => self.already_decided(intent.job_id).await,
        }
    }

    async fn already_decided(&self, job_id: JobId) -> Result<ClaimOutcome, BackendError> {
        let job = self
            .load_job(job_id)
            .await?
            .ok_or_else(|| BackendError::permanent(format!("job {job_id} vanished")))?;
        Ok(ClaimOutcome::AlreadyDecided(job.status))
    }

    /// The seat writes of a settlement, each conditioned on the seat still being held by the job.
    /// A release skips seats another job took over after this hold lapsed.
    fn settlement_writes(
        &self,
        job: &Job,
        seats: &[Seat],
        settlement: Settlement,
    ) -> Result<Vec<TransactWriteItem>, BackendError> {
        let mine = |seat: &&Seat| matches!(seat.state, SeatState::Held { job_id, .. } if job_id == job.job_id);
        let held: Vec<&Seat> = seats.iter().filter(mine).collect();
        if settlement == Settlement::Sell && held.len() != job.seat_ids.len() {
            return Err(BackendError::permanent(format!(
                "job {} holds {} of its {} seats",
                job.job_id,
                held.len(),
                job.seat_ids.len()
            )));
        }
        held.into_iter()
            .map(|seat| {
                let (expression, mut values) = match settlement {
                    Settlement::Sell => (
                        "SET #state = :sold REMOVE hold_until",
                        vec![(":sold", s("SOLD"))],
                    ),
                    Settlement::Release => (
                        "SET #state = :available, free_key = :free REMOVE job_id, hold_until",
                        vec![
                            (":available", s("AVAILABLE")),
                            (":free", s(free_key(&job.event_id, seat.section.as_str()))),
                        ],
                    ),
                };
                values.extend([(":held", s("HELD")), (":job", s(job.job_id.to_string()))]);
                update(
                    &self.names.seats_table,
                    seat_key(&job.event_id, &seat.seat_id),
                    expression,
                    "#state = :held AND job_id = :job",
                    &[("#state", "state")],
                    values,
                )
            })
            .collect()
    }

    async fn settle_job(
        &self,
        job_id: JobId,
        action: JobAction,
        now: Timestamp,
    ) -> Result<Settled, BackendError> {
        for _ in 0..CLAIM_ROUNDS {
            let (
                job,
                Settling {
                    transition,
                    seats: settlement,
                },
            ) = match Settled::plan(self.load_job(job_id).await?, action, now) {
                Ok(plan) => plan,
                Err(answer) => return Ok(answer),
            };
            let seats = self.read_seats(&job.event_id, &job.seat_ids).await?;
            let mut writes = self.settlement_writes(&job, &seats, settlement)?;
            writes.extend(self.transition(&transition)?);
            if let Transacted::Committed = transact(&self.db, writes).await? {
                return Ok(Settled::Done(Box::new(transition.job)));
            }
            // Something changed between the read and the write: decide again on fresh state.
        }
        Err(BackendError::transient(format!(
            "job {job_id} kept changing while being settled"
        )))
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
