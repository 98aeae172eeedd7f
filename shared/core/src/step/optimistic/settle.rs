//! Settling (or extending) a hold without an interactive transaction: the seat writes
//! conditioned on this job's hold, and the job's transition, in one plan; a race with another
//! writer decides again on fresh reads. Seats given back (or a place in line given up) on an
//! event with a waitlist are served to the line right after the commit.

use super::serve::serve_after;
use crate::domain::{
    HoldExtension, Job, JobAction, JobConflict, JobId, JobStatus, Seat, SeatState, Section,
    Settlement, Settling, Tender,
};
use crate::ports::{BackendError, Settled};
use crate::step::Commit;
use crate::step::{Committed, CountChange, Plan, SeatChange, SeatCondition, Write};

/// Rounds of read-decide-write for a settlement that races another writer.
const SETTLE_ROUNDS: usize = 3;

/// Settles a job ([`settle_write`]), then serves the line the seats it gave back (or the place
/// it gave up) belong to.
pub async fn settle(
    store: &impl Commit,
    job_id: JobId,
    action: JobAction,
    tender: &Tender,
) -> Result<Settled, BackendError> {
    let (settled, freed) = settle_write(store, job_id, action, tender).await?;
    if let (Settled::Done(job), Some(freed)) = (&settled, freed) {
        serve_after(store, job, freed).await;
    }
    Ok(settled)
}

/// Confirms, cancels, expires or extends a job as the domain's `Job::settle` decides, at the
/// instant its plan is committed: "now" is read after every read of the round, so only the
/// commit's own flight separates the decision from the write. A release also returns the
/// sections of the seats it gave back.
pub(super) async fn settle_write(
    store: &impl Commit,
    job_id: JobId,
    action: JobAction,
    tender: &Tender,
) -> Result<(Settled, Option<Vec<Section>>), BackendError> {
    for round in 1..=SETTLE_ROUNDS {
        let loaded = store.job(job_id).await?;
        let (seats, terms) = match &loaded {
            Some(job) => (
                store.seats(&job.event_id, &job.seat_ids).await?,
                store.terms(&job.event_id).await?,
            ),
            None => (Vec::new(), None),
        };
        let limited = terms.as_ref().is_some_and(|t| t.limit.is_some());
        let extension = terms.map_or(HoldExtension::NONE, |t| t.extension);
        let now = store.now();
        let (job, settling) = match Settled::plan(loaded, action, tender, extension, now) {
            Ok(plan) => plan,
            Err(answer) => return Ok((answer, None)),
        };
        let Some(writes) = settlement_writes(&job, &seats, &settling, limited) else {
            if round == SETTLE_ROUNDS {
                // Still not its seats on fresh reads: another job took one over, on a clock that
                // saw this hold lapse first. The hold is gone; it cannot be sold.
                return Ok((Settled::Conflict(JobConflict::HoldLapsed), None));
            }
            // A racing settlement moved the seats after the job was read: read again.
            continue;
        };
        let plan = Plan::new(&job, now, writes);
        if let Committed::Written(_) = store.commit(&plan).await? {
            let freed = (settling.seats == Settlement::Release)
                .then(|| seats.into_iter().map(|seat| seat.section).collect());
            return Ok((Settled::Done(Box::new(settling.transition.job)), freed));
        }
        // Something changed between the reads and the commit: decide again on fresh reads.
    }
    Err(BackendError::transient(format!(
        "job {job_id} kept changing while being settled"
    )))
}

/// The plan's writes: each seat the job holds moves as the settlement says, on condition that
/// the job still holds it (a release skips seats another job took over after this hold lapsed);
/// then the transition, and the place in line or the buyer's count. `None`: a sale or extension
/// whose seats are not all held by the job as read, which means they changed between the job's
/// read and theirs (a racing settlement), or another job took one over.
fn settlement_writes(
    job: &Job,
    seats: &[Seat],
    settling: &Settling,
    limited: bool,
) -> Option<Vec<Write>> {
    let mine =
        |seat: &&Seat| matches!(seat.state, SeatState::Held { job_id, .. } if job_id == job.job_id);
    let held: Vec<&Seat> = seats.iter().filter(mine).collect();
    let settlement = settling.seats;
    if settlement != Settlement::Release && held.len() != job.seat_ids.len() {
        return None;
    }
    let seats = u32::try_from(job.seat_ids.len()).unwrap_or(u32::MAX);
    let (change, until, count) = match settlement {
        Settlement::Sell => (SeatChange::Sell, None, CountChange::Sold { seats }),
        // On the deadline read: an expiry (or a cancel) that an extension overtook between the
        // reads and the commit decides again, so a hold extended meanwhile never expires early.
        Settlement::Release => (
            SeatChange::Release,
            job.hold_expires_at,
            CountChange::Released { seats },
        ),
        Settlement::Extend { from, until } => (
            SeatChange::Extend { until },
            Some(from),
            CountChange::Extended { until },
        ),
    };
    let mut writes: Vec<Write> = (held.into_iter())
        .map(|seat| Write::Seat {
            seat_id: seat.seat_id.clone(),
            change,
            condition: SeatCondition::HeldBy { until },
        })
        .collect();
    writes.push(Write::Job(Box::new(settling.transition.clone())));
    let count = match job.status {
        // A place given up: no seats; the place itself, and the quantity it counted.
        JobStatus::Waitlisted => {
            writes.push(Write::Leave);
            CountChange::Unwait
        }
        _ => count,
    };
    if limited {
        writes.push(Write::Count(count));
    }
    if job.code().is_some() {
        writes.push(Write::CodeCount(count));
    }
    Some(writes)
}
