//! Settling (or extending) a hold on DynamoDB: the seat writes conditioned on this job's hold, and the job's
//! transition, in one transaction; a race with another writer decides again on fresh state.
//! Seats given back (or a place in line given up) on an event with a waitlist are served to the
//! line right after the commit (`serve.rs`).

use aws_sdk_dynamodb::types::TransactWriteItem;

use crate::DynamoStore;
use crate::dynamo::item::{Transacted, n, s, transact, update};
use crate::dynamo::keys::seat_key;
use seatclaim_core::codec::SeatRecord;
use seatclaim_core::domain::{
    HoldExtension, Job, JobAction, JobConflict, JobId, JobStatus, Seat, SeatState, Section,
    Settlement, Settling, Tender,
};
use seatclaim_core::ports::{BackendError, Settled};

/// Rounds of read-decide-write for a settlement that races another writer.
const SETTLE_ROUNDS: usize = 3;

impl DynamoStore {
    /// The seat writes of a settlement, each conditioned on the seat still being held by the job.
    /// A release skips seats another job took over after this hold lapsed. `None`: a sale or
    /// extension whose seats are not all held by the job as read, which means they changed between the job's
    /// read and theirs (a racing settlement), or another job took one over.
    fn settlement_writes(
        &self,
        job: &Job,
        seats: &[Seat],
        settlement: Settlement,
    ) -> Result<Option<Vec<TransactWriteItem>>, BackendError> {
        let mine = |seat: &&Seat| matches!(seat.state, SeatState::Held { job_id, .. } if job_id == job.job_id);
        let held: Vec<&Seat> = seats.iter().filter(mine).collect();
        if settlement != Settlement::Release && held.len() != job.seat_ids.len() {
            return Ok(None);
        }
        held.into_iter()
            .map(|seat| {
                let (expression, condition, mut values) = match settlement {
                    Settlement::Sell => (
                        "SET #state = :sold REMOVE hold_until",
                        "#state = :held AND job_id = :job",
                        vec![(":sold", s(SeatRecord::SOLD))],
                    ),
                    Settlement::Release => (
                        // Back into the free-list shard the seat was created in.
                        "SET #state = :available, free_key = free_home REMOVE job_id, hold_until",
                        "#state = :held AND job_id = :job",
                        vec![(":available", s(SeatRecord::AVAILABLE))],
                    ),
                    // Conditioned on the deadline read: racing extensions add up to no more.
                    Settlement::Extend { from, until } => (
                        "SET hold_until = :until",
                        "#state = :held AND job_id = :job AND hold_until = :from",
                        vec![
                            (":until", n(until.as_millisecond())),
                            (":from", n(from.as_millisecond())),
                        ],
                    ),
                };
                values.extend([
                    (":held", s(SeatRecord::HELD)),
                    (":job", s(job.job_id.to_string())),
                ]);
                update(
                    &self.names.seats_table,
                    seat_key(&job.event_id, &seat.seat_id),
                    expression,
                    Some(condition),
                    &[("#state", "state")],
                    values,
                )
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }

    /// Settles a job ([`Self::settle_write`]), then serves the waitlist the seats it gave back
    /// (or the place it gave up) belong to.
    pub(crate) async fn settle_job(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        let (settled, freed) = self.settle_write(job_id, action, tender).await?;
        if let (Settled::Done(job), Some(freed)) = (&settled, freed) {
            self.serve_after(job, freed).await;
        }
        Ok(settled)
    }

    /// Confirms, cancels or expires a job as the domain's `Job::settle` decides, at the instant
    /// its conditional write is sent: "now" is read after every read of the round, so only the
    /// request's own flight separates the decision from the commit. A release also returns the
    /// sections of the seats it gave back.
    pub(crate) async fn settle_write(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<(Settled, Option<Vec<Section>>), BackendError> {
        for round in 1..=SETTLE_ROUNDS {
            let loaded = self.load_job(job_id).await?;
            let (seats, meta) = match &loaded {
                Some(job) => (
                    self.read_seats(&job.event_id, &job.seat_ids).await?,
                    self.event_meta(&job.event_id).await?,
                ),
                None => (Vec::new(), None),
            };
            let limited = meta.as_ref().is_some_and(|m| m.seat_limit.is_some());
            let extension = meta.map_or(HoldExtension::NONE, |m| m.extension);
            let (
                job,
                Settling {
                    transition,
                    seats: settlement,
                },
            ) = match Settled::plan(loaded, action, tender, extension, self.clock.now()) {
                Ok(plan) => plan,
                Err(answer) => return Ok((answer, None)),
            };
            let Some(mut writes) = self.settlement_writes(&job, &seats, settlement)? else {
                if round == SETTLE_ROUNDS {
                    // Still not its seats on fresh reads: another job took one over, on a clock
                    // that saw this hold lapse first. The hold is gone; it cannot be sold.
                    return Ok((Settled::Conflict(JobConflict::HoldLapsed), None));
                }
                // A racing settlement moved the seats after the job was read: read again.
                continue;
            };
            writes.extend(self.transition(&transition)?);
            writes.extend(self.payment_marker(&transition)?);
            let waiting = job.status == JobStatus::Waitlisted;
            if waiting {
                // A place given up: no seats; the place itself, and the quantity it counted.
                writes.push(self.leave_line(&job).await?);
                if limited {
                    writes.push(self.count_unwait(&job)?);
                }
            } else if limited {
                writes.push(self.count_settle(&job, settlement)?);
            }
            if let Transacted::Committed = transact(&self.db, writes).await? {
                let freed = (settlement == Settlement::Release)
                    .then(|| seats.into_iter().map(|seat| seat.section).collect());
                return Ok((Settled::Done(Box::new(transition.job)), freed));
            }
            // Something changed between the read and the write: decide again on fresh state.
        }
        Err(BackendError::transient(format!(
            "job {job_id} kept changing while being settled"
        )))
    }
}
