//! The second half of a restore: the reservation events published after the backup's moment,
//! re-applied to the restored database in one transaction (committed with fsync, as every
//! write of this backend), so that no sale, hold, cancel or expiry buyers were told of is
//! forgotten. The domain decides what each job becomes and what that does to its seats
//! (`domain::reapply`); this reads and writes. Re-applying the same log to the same backup
//! writes the same state and reports the same.

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::catalog::{SEAT_COLUMNS, read_seat};
use super::job_rows::{count_decided, load_job, restore_job};
use super::newer_events::newer_events;
use crate::error::sqlite_error;
use seatclaim_core::codec::{SeatRecord, encode_event, to_ms};
use seatclaim_core::domain::{
    EventId, JobId, JobStatus, NotReapplied, Reapplied, ReservationEvent, SeatId, SeatState,
    reapply,
};
use seatclaim_core::ports::BackendError;
use seatclaim_core::reports::{NotReappliedJob, Reapplication, ReappliedJob};

/// Re-applies the events of the log in `data_dir` that are not older than the restored
/// database's last change, in one transaction, and says what it did.
pub(super) fn reapply_log(
    conn: &mut Connection,
    data_dir: &Path,
) -> Result<Reapplication, BackendError> {
    let events = newer_events(conn, data_dir)?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite_error)?;
    let report = reapply_events(&tx, &events)?;
    tx.commit().map_err(sqlite_error)?;
    Ok(report)
}

/// A job to write: what it becomes, its events, and its status before (`None`: no row).
type Decided = (Reapplied, Vec<ReservationEvent>, Option<JobStatus>);

/// Re-applies `events` (in the order they happened) job by job in `tx`.
pub(super) fn reapply_events(
    tx: &Transaction<'_>,
    events: &[ReservationEvent],
) -> Result<Reapplication, BackendError> {
    let mut report = Reapplication::default();
    let mut decided: Vec<Decided> = Vec::new();
    for history in by_job(events) {
        let stored = load_job(tx, history[0].job_id)?;
        match reapply(stored.as_ref(), &history) {
            Ok(None) => report.unchanged += 1,
            Ok(Some(job)) => decided.push((job, history, stored.map(|job| job.status))),
            Err(why) => report.not_reapplied.push(refused(&history, why)),
        }
    }
    // Ended jobs first, since what they give back may be what a later hold took; then the
    // holds and sales in the order they took their seats.
    decided.sort_by_key(|(job, ..)| (takes_seats(job), job.taken_at));
    for (job, history, before) in decided {
        match seat_writes(tx, &job) {
            Ok(writes) => {
                write(tx, &job, &history, before, &writes)?;
                report.reapplied.push(reapplied(&job, &history));
            }
            Err(Refusal::Not(why)) => report.not_reapplied.push(refused(&history, why)),
            Err(Refusal::Failed(error)) => return Err(error),
        }
    }
    Ok(report)
}

/// The events of each job, in order, the jobs in the order of their first event.
fn by_job(events: &[ReservationEvent]) -> Vec<Vec<ReservationEvent>> {
    let mut jobs: Vec<Vec<ReservationEvent>> = Vec::new();
    let mut index: HashMap<JobId, usize> = HashMap::new();
    for event in events {
        let at = *index.entry(event.job_id).or_insert_with(|| {
            jobs.push(Vec::new());
            jobs.len() - 1
        });
        jobs[at].push(event.clone());
    }
    jobs
}

fn takes_seats(job: &Reapplied) -> bool {
    matches!(job.job.status, JobStatus::Held | JobStatus::Sold)
}

/// Why a job is not written: the domain's refusal, or the database failed.
enum Refusal {
    Not(NotReapplied),
    Failed(BackendError),
}

impl From<BackendError> for Refusal {
    fn from(error: BackendError) -> Self {
        Self::Failed(error)
    }
}

/// What the job's seats must become, each as the domain says; refused as a whole if any one
/// cannot be.
fn seat_writes(tx: &Transaction<'_>, job: &Reapplied) -> Result<Vec<(SeatId, SeatState)>, Refusal> {
    let event_id = &job.job.event_id;
    if !event_exists(tx, event_id)? {
        return Err(Refusal::Not(NotReapplied::NoSuchEvent));
    }
    let mut writes = Vec::new();
    for seat_id in &job.job.seat_ids {
        let Some(state) = seat_state(tx, event_id, seat_id)? else {
            let seat_id = seat_id.clone();
            return Err(Refusal::Not(NotReapplied::NoSuchSeat { seat_id }));
        };
        if let Some(after) = job.seat_after(seat_id, &state).map_err(Refusal::Not)? {
            writes.push((seat_id.clone(), after));
        }
    }
    Ok(writes)
}

/// Writes the job, its seats, its events (published already) and, for a job decided since
/// the backup, its event's count of decisions.
fn write(
    tx: &Transaction<'_>,
    job: &Reapplied,
    history: &[ReservationEvent],
    before: Option<JobStatus>,
    seats: &[(SeatId, SeatState)],
) -> Result<(), BackendError> {
    for (seat_id, state) in seats {
        write_seat(tx, &job.job.event_id, seat_id, state)?;
    }
    let last = history
        .last()
        .map_or(job.taken_at, |event| event.occurred_at);
    restore_job(tx, &job.job, job.created, last)?;
    if before.is_none_or(|status| status == JobStatus::Pending) {
        count_decided(tx, &job.job.event_id, 1)?;
    }
    history
        .iter()
        .try_for_each(|event| record_published(tx, event))
}

fn event_exists(tx: &Transaction<'_>, event_id: &EventId) -> Result<bool, BackendError> {
    tx.prepare_cached("SELECT 1 FROM events WHERE event_id = ?1")
        .map_err(sqlite_error)?
        .query_row([event_id.as_str()], |_| Ok(()))
        .optional()
        .map(|found| found.is_some())
        .map_err(sqlite_error)
}

fn seat_state(
    tx: &Transaction<'_>,
    event_id: &EventId,
    seat_id: &SeatId,
) -> Result<Option<SeatState>, BackendError> {
    let sql = format!("SELECT {SEAT_COLUMNS} FROM seats WHERE event_id = ?1 AND seat_id = ?2");
    let record = tx
        .prepare_cached(&sql)
        .map_err(sqlite_error)?
        .query_row(params![event_id.as_str(), seat_id.as_str()], read_seat)
        .optional()
        .map_err(sqlite_error)?;
    record
        .map(|record| record.into_seat().map(|seat| seat.state))
        .transpose()
}

fn write_seat(
    tx: &Transaction<'_>,
    event_id: &EventId,
    seat_id: &SeatId,
    state: &SeatState,
) -> Result<(), BackendError> {
    let (text, job_id, until) = match state {
        SeatState::Available => (SeatRecord::AVAILABLE, None, None),
        SeatState::Held { job_id, until } => (
            SeatRecord::HELD,
            Some(job_id.to_string()),
            Some(to_ms(*until)),
        ),
        SeatState::Sold { job_id } => (SeatRecord::SOLD, Some(job_id.to_string()), None),
    };
    tx.prepare_cached(
        "UPDATE seats SET state = ?3, job_id = ?4, hold_until = ?5
         WHERE event_id = ?1 AND seat_id = ?2",
    )
    .map_err(sqlite_error)?
    .execute(params![
        event_id.as_str(),
        seat_id.as_str(),
        text,
        job_id,
        until
    ])
    .map_err(sqlite_error)?;
    Ok(())
}

/// Records a re-applied event in the job's history as published (it was: the log is where it
/// came from), unless the history has it already; the relay does not publish it again.
fn record_published(tx: &Transaction<'_>, event: &ReservationEvent) -> Result<(), BackendError> {
    let (job_id, body, at) = (
        event.job_id.to_string(),
        encode_event(event)?,
        to_ms(event.occurred_at),
    );
    tx.prepare_cached(
        "INSERT INTO outbox (job_id, body, created_at, published_at)
         SELECT ?1, ?2, ?3, ?3
         WHERE NOT EXISTS (SELECT 1 FROM outbox WHERE job_id = ?1 AND body = ?2)",
    )
    .map_err(sqlite_error)?
    .execute(params![job_id, body, at])
    .map_err(sqlite_error)?;
    Ok(())
}

fn reapplied(job: &Reapplied, history: &[ReservationEvent]) -> ReappliedJob {
    ReappliedJob {
        job_id: job.job.job_id,
        event_id: job.job.event_id.clone(),
        buyer_id: job.job.buyer_id.clone(),
        status: job.job.status,
        seat_ids: job.job.seat_ids.clone(),
        occurred_at: history
            .last()
            .map_or(job.taken_at, |event| event.occurred_at),
        created: job.created,
    }
}

fn refused(history: &[ReservationEvent], why: NotReapplied) -> NotReappliedJob {
    let last = &history[history.len() - 1];
    NotReappliedJob {
        job_id: last.job_id,
        event_id: last.event_id.clone(),
        status: last.status,
        why,
    }
}

#[cfg(test)]
mod tests;
