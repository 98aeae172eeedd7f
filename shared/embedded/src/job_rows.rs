//! The `jobs` table's rows: reading a job, inserting a PENDING one, persisting a decided
//! transition with its outbox event, and writing one as a restore re-applies it.
//! Every module that touches a job row goes through here.

use crate::error::sqlite_error;
use jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use seatclaim_core::codec::{JobRecord, encode_event, to_ms};
use seatclaim_core::domain::{EventId, IdempotencyKey, Job, JobId, JobStatus, Line, Transition};
use seatclaim_core::ports::BackendError;

/// Reads one job, on its own or inside a transaction (which derefs to its connection).
pub(super) fn load_job(conn: &Connection, job_id: JobId) -> Result<Option<Job>, BackendError> {
    let record = conn
        .prepare_cached(
            "SELECT job_id, event_id, buyer_id, request, status, seat_ids, hold_until, reason,
                    accepted_at, first_error, last_error, payment, hold_extensions, reason_code,
                    access
             FROM jobs WHERE job_id = ?1",
        )
        .map_err(sqlite_error)?
        .query_row([job_id.to_string()], |row| {
            Ok(JobRecord {
                job_id: row.get(0)?,
                event_id: row.get(1)?,
                buyer_id: row.get(2)?,
                request: row.get(3)?,
                status: row.get(4)?,
                seat_ids: row.get(5)?,
                hold_until: row.get(6)?,
                reason: row.get(7)?,
                accepted_at: row.get(8)?,
                first_error: row.get(9)?,
                last_error: row.get(10)?,
                payment: row.get(11)?,
                hold_extensions: row.get(12)?,
                reason_code: row.get(13)?,
                access: row.get(14)?,
            })
        })
        .optional()
        .map_err(sqlite_error)?;
    record.map(JobRecord::into_job).transpose()
}

/// Where a PENDING `job` stands: a pre-queued job by its pre-queue (`opening.rs`); any other by
/// the event's PENDING jobs admitted before it (their ids are time-ordered), counted on the index
/// of PENDING jobs; and the event's decisions so far.
pub(super) fn line(tx: &Transaction<'_>, job: &Job) -> Result<Line, BackendError> {
    let event = job.event_id.as_str();
    let decided: i64 = tx
        .prepare_cached("SELECT decided FROM events WHERE event_id = ?1")
        .map_err(sqlite_error)?
        .query_row([event], |row| row.get(0))
        .optional()
        .map_err(sqlite_error)?
        .unwrap_or(0);
    let decided = u64::try_from(decided).unwrap_or(0);
    if let Some(line) = super::opening::line(tx, job.job_id, decided)? {
        return Ok(line);
    }
    let ahead: i64 = tx
        .prepare_cached(
            "SELECT count(*) FROM jobs
             WHERE event_id = ?1 AND status = 'PENDING' AND job_id < ?2",
        )
        .map_err(sqlite_error)?
        .query_row(params![event, job.job_id.to_string()], |row| row.get(0))
        .map_err(sqlite_error)?;
    Ok(Line {
        ahead: u64::try_from(ahead).unwrap_or(0),
        decided,
        opens_at: None,
    })
}

/// The idempotency record a new job's row carries: the buyer's key, the fingerprint of the
/// request it was first used for, and when it was admitted.
pub(super) struct Admitted<'a> {
    /// The key, unique per buyer.
    pub key: &'a IdempotencyKey,
    /// Tells a retry from a reused key.
    pub fingerprint: String,
    /// The admission's instant.
    pub at: Timestamp,
}

/// Inserts a new job with its idempotency record: PENDING, or decided in the write that admits
/// it.
pub(super) fn insert_job(
    tx: &Transaction<'_>,
    job: &Job,
    admitted: &Admitted<'_>,
) -> Result<(), BackendError> {
    let record = JobRecord::of(job)?;
    tx.prepare_cached(
        "INSERT INTO jobs (job_id, event_id, buyer_id, request, status, seat_ids, hold_until,
                           reason, accepted_at, updated_at, idempotency_key, fingerprint, payment,
                           reason_code, access)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )
    .map_err(sqlite_error)?
    .execute(params![
        record.job_id,
        record.event_id,
        record.buyer_id,
        record.request,
        record.status,
        record.seat_ids,
        record.hold_until,
        record.reason,
        record.accepted_at,
        to_ms(admitted.at),
        admitted.key.as_str(),
        admitted.fingerprint,
        record.payment,
        record.reason_code,
        record.access,
    ])
    .map_err(sqlite_error)?;
    Ok(())
}

/// Inserts the job a transition from PENDING decided, with its reservation event: the decision
/// made in the write that admits the job, which never stored it PENDING.
pub(super) fn insert_decided(
    tx: &Transaction<'_>,
    transition: &Transition,
    admitted: &Admitted<'_>,
) -> Result<(), BackendError> {
    insert_job(tx, &transition.job, admitted)?;
    count_decided(tx, &transition.job.event_id, 1)?;
    if transition.job.status == JobStatus::Waitlisted {
        super::line_place::join(tx, &transition.job)?;
    }
    record_event(tx, transition)
}

/// Persists a decided transition and records its reservation event in the outbox, in the
/// caller's transaction, on the domain's condition that the job still has the status it moved
/// from: the transition and its event commit together or not at all.
pub(super) fn save_transition(
    tx: &Transaction<'_>,
    transition: &Transition,
) -> Result<(), BackendError> {
    let (job, at) = (
        JobRecord::of(&transition.job)?,
        to_ms(transition.event.occurred_at),
    );
    let changed = tx
        .prepare_cached(
            "UPDATE jobs SET status = ?2, seat_ids = ?3, hold_until = ?4, reason = ?5, updated_at = ?6,
                             payment = ?8, hold_extensions = ?9, reason_code = ?10
             WHERE job_id = ?1 AND status = ?7",
        ).map_err(sqlite_error)?
        .execute(params![
            job.job_id,
            job.status,
            job.seat_ids,
            job.hold_until,
            job.reason,
            at,
            transition.from.as_str(),
            job.payment,
            job.hold_extensions,
            job.reason_code,
        ]).map_err(sqlite_error)?;
    if changed != 1 {
        // The caller read the job in this same write transaction, so only a bug gets here.
        return Err(BackendError::permanent(format!(
            "job {} was no longer {} when its transition was written",
            job.job_id,
            transition.from.as_str()
        )));
    }
    if transition.job.status == JobStatus::Waitlisted && transition.from != JobStatus::Waitlisted {
        super::line_place::join(tx, &transition.job)?;
    }
    record_event(tx, transition)
}

/// Writes `job` as a restore re-applies its published events, last changed `at`: over its row,
/// or as a new row (`created`) without an idempotency key, which no event carries.
pub(super) fn restore_job(
    tx: &Transaction<'_>,
    job: &Job,
    created: bool,
    at: Timestamp,
) -> Result<(), BackendError> {
    let record = JobRecord::of(job)?;
    if created {
        tx.prepare_cached(
            "INSERT INTO jobs (job_id, event_id, buyer_id, request, accepted_at, updated_at,
                               status, seat_ids, access)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )
        .map_err(sqlite_error)?
        .execute(params![
            record.job_id,
            record.event_id,
            record.buyer_id,
            record.request,
            record.accepted_at,
            to_ms(at),
            record.status,
            record.seat_ids,
            record.access,
        ])
        .map_err(sqlite_error)?;
    }
    // The rest of a new row as of a row the backup has.
    tx.prepare_cached(
        "UPDATE jobs SET status = ?2, seat_ids = ?3, hold_until = ?4, reason = ?5,
                         updated_at = ?6, payment = ?7, hold_extensions = ?8, reason_code = ?9
         WHERE job_id = ?1",
    )
    .map_err(sqlite_error)?
    .execute(params![
        record.job_id,
        record.status,
        record.seat_ids,
        record.hold_until,
        record.reason,
        to_ms(at),
        record.payment,
        record.hold_extensions,
        record.reason_code,
    ])
    .map_err(sqlite_error)?;
    Ok(())
}

/// Adds `decided` decisions (moves from PENDING) to the running count of `event_id`, which the
/// queue positions' rate is learnt from: once per event per write, not per job.
pub(super) fn count_decided(
    tx: &Transaction<'_>,
    event_id: &EventId,
    decided: usize,
) -> Result<(), BackendError> {
    if decided > 0 {
        tx.prepare_cached("UPDATE events SET decided = decided + ?2 WHERE event_id = ?1")
            .map_err(sqlite_error)?
            .execute(params![
                event_id.as_str(),
                i64::try_from(decided).unwrap_or(i64::MAX)
            ])
            .map_err(sqlite_error)?;
    }
    Ok(())
}

/// Records a transition's reservation event in the outbox.
fn record_event(tx: &Transaction<'_>, transition: &Transition) -> Result<(), BackendError> {
    let at = to_ms(transition.event.occurred_at);
    tx.prepare_cached("INSERT INTO outbox (job_id, body, created_at) VALUES (?1, ?2, ?3)")
        .map_err(sqlite_error)?
        .execute(params![
            transition.job.job_id.to_string(),
            encode_event(&transition.event)?,
            at
        ])
        .map_err(sqlite_error)?;
    Ok(())
}
