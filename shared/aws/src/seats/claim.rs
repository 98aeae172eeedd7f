//! The claim on DynamoDB (seat reads are in `seat_reads.rs`, the seat limit's count in
//! `seat_counts.rs`). A hold is one transaction: a conditional update per seat (AVAILABLE, or
//! HELD past its deadline), the job's move from PENDING, the outbox event and, for an event with
//! a seat limit, the buyer's count (a join of the line counts its quantity the same way). A rejection is the job's conditional update alone; its event
//! is handed back to be published and recorded (`Claims::unrecorded`, and `rejections.rs`).

use std::collections::{HashMap, HashSet};

use aws_sdk_dynamodb::types::{ConditionCheck, TransactWriteItem};
use jiff::{SignedDuration, Timestamp};

use crate::DynamoStore;
use crate::dynamo::error::build_error;
use crate::dynamo::item::{Transacted, n, s, transact, update};
use crate::dynamo::keys::seat_key;
use seatclaim_core::codec::SeatRecord;
use seatclaim_core::domain::{
    BuyerId, ClaimDecision, EventId, Intent, Job, JobId, JobStatus, Money, Reason,
    ReservationEvent, SaleTerms, Seat, SeatId, SeatRequest,
};
use seatclaim_core::ports::{BackendError, ClaimOutcome};

/// The condition on a seat a claim may take: AVAILABLE, or HELD past its deadline.
const CLAIMABLE: &str = "#state = :available OR (#state = :held AND hold_until <= :now)";
/// The condition on a seat another claim of this process was writing beside a block: taken.
const TAKEN: &str = "NOT (#state = :available OR (#state = :held AND hold_until <= :now))";

/// Rounds of a section claim whose candidates were taken between the (eventually consistent)
/// index read and the write: each tries fresh ones; past the last, the intent is retried later.
const SECTION_ROUNDS: usize = 12;

/// Waits of one claim for this process's other claims ([`AROUND_OTHERS`] each): two seconds.
const AWAITS: usize = 100;

/// How long a section claim waits when only seats this process's other claims are writing
/// would do: their writes end within a request's flight.
const AROUND_OTHERS: std::time::Duration = std::time::Duration::from_millis(20);

/// How long a rejection's deciding delivery has to record its event. A delivery of the same
/// job within that time (a duplicate) waits for that record instead of taking the event over, so
/// that only a crash, never a duplicate, publishes a rejection twice; a crashed worker's intent
/// comes back only after the visibility timeout, by when the grace has usually passed.
const RECORD_GRACE: SignedDuration = SignedDuration::from_secs(5);

/// How often a duplicate delivery looks for the deciding delivery's record during the grace.
const RECORD_POLL: SignedDuration = SignedDuration::from_millis(100);

/// A claim's outcome, with the event of a rejection still to publish and record.
pub(crate) type Claimed = (ClaimOutcome, Option<ReservationEvent>);

/// The seats a claim decided to hold, until when, what they cost, the seats beside a block
/// that must still be claimable for it to commit (the domain's `block_guards`), and those beside
/// it that this process's other claims were writing, which must be taken (`blocks.rs`).
struct Hold {
    seat_ids: Vec<SeatId>,
    until: Timestamp,
    amount_due: Option<Money>,
    guards: Vec<SeatId>,
    awaited: Vec<SeatId>,
}

/// How an attempt to hold ended.
enum Attempt {
    /// Held, rejected, or decided by another delivery.
    Decided(Box<Claimed>),
    /// The buyer's count left no room (only under a seat limit); the rejection's reason.
    OverLimit(Reason),
}

impl Attempt {
    fn decided(claimed: Claimed) -> Self {
        Self::Decided(Box::new(claimed))
    }
}

/// How one transaction of a hold ended.
enum Written {
    /// The job is decided (by this write or an earlier delivery).
    Decided(Box<Claimed>),
    /// These seats were taken since they were read.
    SeatTaken(Vec<SeatId>),
    /// Seats beside the block that another claim of this process was writing are not taken
    /// (yet, or its write failed).
    Awaited,
    /// The buyer's seat count left no room.
    OverLimit,
}

impl DynamoStore {
    /// Claims each intent, in the intents' order. Intents are independent decisions (the
    /// conditions settle any race between them), so the batch is claimed concurrently, its
    /// latency one claim's, not ten; only one buyer's intents for one event go in turn, since
    /// under a seat limit they write one count item, where racing transactions cancel each other.
    pub(crate) async fn claim_each(
        &self,
        intents: &[Intent],
        now: Timestamp,
    ) -> Vec<Result<Claimed, BackendError>> {
        let mut turns: HashMap<(&EventId, &BuyerId), Vec<usize>> = HashMap::new();
        for (position, intent) in intents.iter().enumerate() {
            turns
                .entry((&intent.event_id, &intent.buyer_id))
                .or_default()
                .push(position);
        }
        let mut claimed: Vec<(usize, Result<Claimed, BackendError>)> =
            futures_util::future::join_all(turns.into_values().map(|positions| async move {
                let mut claimed = Vec::with_capacity(positions.len());
                for position in positions {
                    claimed.push((position, self.claim_one(&intents[position], now).await));
                }
                claimed
            }))
            .await
            .into_iter()
            .flatten()
            .collect();
        claimed.sort_by_key(|(position, _)| *position);
        claimed.into_iter().map(|(_, result)| result).collect()
    }

    pub(crate) fn hold_write(
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
            Some(CLAIMABLE),
            &[("#state", "state")],
            vec![
                (":held", s(SeatRecord::HELD)),
                (":available", s(SeatRecord::AVAILABLE)),
                (":job", s(job.job_id.to_string())),
                (":until", n(until.as_millisecond())),
                (":now", n(now.as_millisecond())),
            ],
        )
    }

    /// The check, in a hold's transaction, that a seat beside the block is as the choice judged
    /// it: still claimable ([`CLAIMABLE`], as [`Self::hold_write`] conditions a seat it takes),
    /// or taken ([`TAKEN`]).
    fn state_check(
        &self,
        job: &Job,
        seat: &SeatId,
        now: Timestamp,
        condition: &str,
    ) -> Result<TransactWriteItem, BackendError> {
        let check = ConditionCheck::builder()
            .table_name(&self.names.seats_table)
            .set_key(Some(seat_key(&job.event_id, seat)))
            .condition_expression(condition)
            .expression_attribute_names("#state", "state")
            .expression_attribute_values(":available", s(SeatRecord::AVAILABLE))
            .expression_attribute_values(":held", s(SeatRecord::HELD))
            .expression_attribute_values(":now", n(now.as_millisecond()))
            .build()
            .map_err(build_error)?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }

    async fn claim_one(&self, intent: &Intent, now: Timestamp) -> Result<Claimed, BackendError> {
        // The job as admission stored it: an undecided job is exactly the intent's PENDING job,
        // and every write below is conditioned on it still being PENDING, so it is not read
        // first (one request fewer per claim). A redelivery of a decided job fails that
        // condition, and only then is the job read to say how it was decided.
        let job = Job::pending(intent);
        let meta = self.event_meta(&intent.event_id).await?.ok_or_else(|| {
            BackendError::permanent(format!("intent for unknown event {}", intent.event_id))
        })?;
        let terms = meta.terms();
        let ceiling = match terms.ceiling(intent) {
            Ok(ceiling) => ceiling,
            Err(reason) => return self.reject(&job, &reason, now).await,
        };
        match self.try_hold(intent, &job, &terms, ceiling, now).await? {
            Attempt::Decided(claimed) => Ok(*claimed),
            // Lapsed holds still count until expired: expire them, then try once more.
            Attempt::OverLimit(_)
                if self
                    .expire_lapsed_of(&job.event_id, &job.buyer_id, ceiling, now)
                    .await? =>
            {
                match self.try_hold(intent, &job, &terms, ceiling, now).await? {
                    Attempt::Decided(claimed) => Ok(*claimed),
                    Attempt::OverLimit(reason) => self.reject(&job, &reason, now).await,
                }
            }
            Attempt::OverLimit(reason) => self.reject(&job, &reason, now).await,
        }
    }

    /// Decides and writes a hold of the seats as read; `ceiling` is the most seats the buyer may
    /// count before it, for an event with a seat limit.
    async fn try_hold(
        &self,
        intent: &Intent,
        job: &Job,
        terms: &SaleTerms,
        ceiling: Option<u32>,
        now: Timestamp,
    ) -> Result<Attempt, BackendError> {
        // An exact claim that loses a race is lost; a section claim tries other free seats,
        // without those it lost (the index may still list them).
        let section = matches!(intent.request, SeatRequest::Section { .. });
        let mut lost: HashSet<SeatId> = HashSet::new();
        let rounds = if section { SECTION_ROUNDS } else { 1 };
        // A wait for this process's other claims spends no round: it ends when their writes
        // do, bounded all the same.
        let (mut round, mut waits) = (0, 0);
        while round < rounds && waits <= AWAITS {
            let mut candidates = self.candidates(intent).await?;
            candidates.retain(|seat| !lost.contains(&seat.seat_id));
            // Seats without places (events created before best-available) are taken in the
            // order given: concurrent claims of such an event each try their own few of them.
            fastrand::shuffle(&mut candidates);
            let lines = self.lined_sections(intent, terms, &candidates, now).await?;
            // A release and its serving are two steps on DynamoDB, so seats given back beside a
            // line may not have been offered to it yet: a section request there joins the line's
            // end and the line is served at once (`wait_in_line`), first fit, which gives the
            // newcomer those seats only if nobody ahead fits them.
            let joins = (intent.request.section()).is_some_and(|s| lines.lined.contains(s));
            let decide = |seats: &[Seat]| {
                let seats = if joins { &[][..] } else { seats };
                let decided =
                    terms.decide(&intent.request, seats, now, |s| lines.lined.contains(s));
                let chosen = match &decided {
                    ClaimDecision::Hold { seat_ids, .. } => seat_ids.clone(),
                    _ => Vec::new(),
                };
                (decided, chosen)
            };
            // This process's other section claims choose around the seats this one writes.
            let block = matches!(intent.request, SeatRequest::Section { together: true, .. });
            let (decided, _aside, awaited) = if section {
                let chosen = (candidates, block, now);
                let Some((decided, aside, awaited)) =
                    self.claiming.choose(&intent.event_id, chosen, decide)
                else {
                    waits += 1;
                    tokio::time::sleep(AROUND_OTHERS).await;
                    continue;
                };
                (decided, Some(aside), awaited)
            } else {
                (decide(&candidates).0, None, Vec::new())
            };
            let hold = match decided {
                ClaimDecision::Hold {
                    seat_ids,
                    until,
                    amount_due,
                    guards,
                } => Hold {
                    seat_ids,
                    until,
                    amount_due,
                    guards,
                    awaited,
                },
                ClaimDecision::Reject { reason } => {
                    return self.reject(job, &reason, now).await.map(Attempt::decided);
                }
                ClaimDecision::Waitlist => {
                    let forms = intent
                        .request
                        .section()
                        .is_some_and(|s| lines.unflagged.contains(s));
                    return Ok(match self.wait_in_line(job, now, forms, ceiling).await? {
                        Some(claimed) => Attempt::decided(claimed),
                        None => Attempt::OverLimit(terms.limit_reason()),
                    });
                }
            };
            match self.hold_seats(job, hold, now, ceiling).await? {
                Written::Decided(claimed) => return Ok(Attempt::Decided(claimed)),
                Written::OverLimit => return Ok(Attempt::OverLimit(terms.limit_reason())),
                Written::SeatTaken(taken) => {
                    round += 1;
                    lost.extend(taken);
                }
                // Another claim of this process has not committed the seats beside: give it
                // the time its write takes, then choose again.
                Written::Awaited => {
                    waits += 1;
                    tokio::time::sleep(AROUND_OTHERS).await;
                }
            }
        }
        if section {
            // The section still had free seats at the last look: never a rejection, a retry.
            return Err(BackendError::transient(format!(
                "job {}: section claims kept losing races for its free seats",
                job.job_id
            )));
        }
        self.reject(job, &Reason::seat_unavailable(), now)
            .await
            .map(Attempt::decided)
    }

    /// The conditional write of a hold: the seats (each AVAILABLE or lapsed), a check that each
    /// guard is still claimable, the job's move from PENDING, its event and, under a seat limit,
    /// the buyer's count, in one transaction. A guard taken meanwhile counts as a seat taken: the
    /// claim chooses again without it.
    async fn hold_seats(
        &self,
        job: &Job,
        Hold {
            seat_ids,
            until,
            amount_due,
            guards,
            awaited,
        }: Hold,
        now: Timestamp,
        ceiling: Option<u32>,
    ) -> Result<Written, BackendError> {
        let Ok(held) = job.hold(seat_ids.clone(), until, amount_due, now) else {
            return Ok(Written::Decided(Box::new((
                ClaimOutcome::AlreadyDecided(job.status),
                None,
            ))));
        };
        let mut writes = seat_ids
            .iter()
            .map(|seat| self.hold_write(job, seat, until, now))
            .chain(
                guards
                    .iter()
                    .map(|seat| self.state_check(job, seat, now, CLAIMABLE)),
            )
            .chain(
                awaited
                    .iter()
                    .map(|seat| self.state_check(job, seat, now, TAKEN)),
            )
            .collect::<Result<Vec<_>, _>>()?;
        writes.extend(self.transition(&held)?);
        if let Some(ceiling) = ceiling {
            writes.push(self.count_hold(&held.job, until, ceiling)?);
        }
        let failed = match transact(&self.db, writes).await? {
            Transacted::Committed => {
                return Ok(Written::Decided(Box::new((ClaimOutcome::of(&held), None))));
            }
            Transacted::ConditionFailed(failed) => failed,
        };
        let checked = seat_ids.len() + guards.len();
        // The job's own condition (after the seats and checks) failed: another delivery
        // decided it.
        if failed
            .get(checked + awaited.len())
            .copied()
            .unwrap_or(false)
        {
            return Ok(Written::Decided(Box::new(
                self.already_decided(job.job_id, now).await?,
            )));
        }
        if ceiling.is_some() && failed.last().copied().unwrap_or(false) {
            return Ok(Written::OverLimit);
        }
        let taken: Vec<SeatId> = seat_ids
            .iter()
            .chain(&guards)
            .zip(&failed)
            .filter(|(_, failed)| **failed)
            .map(|(seat, _)| seat.clone())
            .collect();
        if taken.is_empty() && failed.iter().skip(checked).take(awaited.len()).any(|f| *f) {
            return Ok(Written::Awaited);
        }
        Ok(Written::SeatTaken(taken))
    }

    /// Rejects a PENDING job for `reason` (the job's update alone: its event is recorded after),
    /// unless another delivery decided it first.
    async fn reject(
        &self,
        job: &Job,
        reason: &Reason,
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
    /// recorded now if a crash kept it from being recorded. Within [`RECORD_GRACE`] of the
    /// rejection its deciding delivery may still be recording it, so this one waits for that
    /// record first. It waits rather than failing: a failure would spend one of the intent's
    /// attempts, and an intent whose attempts ran out on a decided job would be dead-lettered
    /// with its rejection never published.
    pub(crate) async fn already_decided(
        &self,
        job_id: JobId,
        now: Timestamp,
    ) -> Result<Claimed, BackendError> {
        let (job, at) = self
            .load_job_at(job_id)
            .await?
            .ok_or_else(|| BackendError::permanent(format!("job {job_id} vanished")))?;
        let decided = ClaimOutcome::AlreadyDecided(job.status);
        if job.status != JobStatus::Rejected {
            return Ok((decided, None));
        }
        // The polls are counted, not timed against the store's clock, which a test may hold.
        let left = (RECORD_GRACE - now.duration_since(at)).max(SignedDuration::ZERO);
        let polls = left.as_millis() / RECORD_POLL.as_millis();
        for poll in 0..=polls {
            if self.is_recorded(job_id, at).await? {
                return Ok((decided, None));
            }
            if poll < polls {
                tokio::time::sleep(RECORD_POLL.unsigned_abs()).await;
            }
        }
        Ok((decided, Some(ReservationEvent::of(&job, at))))
    }
}
