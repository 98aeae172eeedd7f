//! The waitlist on SQLite: WAITLISTED jobs are found on their own partial index, by event and
//! section in line order (`line_place`, the domain's: admission order, or drawn order for a
//! sale's pre-queue); the core's step serves a line inside the write transaction of whatever freed
//! its seats, so nothing can take them in between.

use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::catalog::{SEAT_COLUMNS, read_seat};
use super::job_rows::{load_job, save_transition};
use super::terms::terms as event_terms;
use crate::error::sqlite_error;
use seatclaim_core::codec::{SeatRecord, to_ms};
use seatclaim_core::domain::{EventId, Job, JobId, JobStatus, Reason, Section};
use seatclaim_core::ports::BackendError;

/// Up to `size` `WAITLISTED` jobs of `event_id` in `section` in line order, after `after`.
pub(super) fn line_page(
    tx: &Transaction<'_>,
    event_id: &EventId,
    section: &Section,
    after: Option<JobId>,
    size: usize,
) -> Result<Vec<Job>, BackendError> {
    let after = after.map(|id| id.to_string()).unwrap_or_default();
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT job_id FROM jobs
             WHERE event_id = ?1 AND json_extract(request, '$.section.section') = ?2
               AND status = 'WAITLISTED'
               AND line_place > COALESCE((SELECT line_place FROM jobs WHERE job_id = ?3), '')
             ORDER BY line_place",
        )
        .map_err(sqlite_error)?
        .query_map(params![event_id.as_str(), section.as_str(), after], |row| {
            row.get(0)
        })
        .map_err(sqlite_error)?
        .take(size)
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    let mut jobs = Vec::with_capacity(ids.len());
    for id in ids.iter().filter_map(|id| JobId::parse(id)) {
        jobs.extend(load_job(tx, id)?);
    }
    Ok(jobs)
}

/// Whether `section` of `event_id` has a line: one probe of the line's index.
pub(super) fn has_line(
    tx: &Transaction<'_>,
    event_id: &EventId,
    section: &Section,
) -> Result<bool, BackendError> {
    tx.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM jobs
             WHERE event_id = ?1 AND json_extract(request, '$.section.section') = ?2
               AND status = 'WAITLISTED')",
    )
    .map_err(sqlite_error)?
    .query_row(params![event_id.as_str(), section.as_str()], |row| {
        row.get(0)
    })
    .map_err(sqlite_error)
}

/// A WAITLISTED job's place in its line, from 1.
pub(super) fn position(tx: &Transaction<'_>, job: &Job) -> Result<u64, BackendError> {
    let ahead: i64 = tx
        .prepare_cached(
            "SELECT count(*) FROM jobs
             WHERE event_id = ?1 AND json_extract(request, '$.section.section') = ?2
               AND status = 'WAITLISTED'
               AND line_place < (SELECT line_place FROM jobs WHERE job_id = ?3)",
        )
        .map_err(sqlite_error)?
        .query_row(
            params![
                job.event_id.as_str(),
                job.request.section().map(Section::as_str),
                job.job_id.to_string()
            ],
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    Ok(u64::try_from(ahead).unwrap_or(0) + 1)
}

/// The claimable seats of a section in the organiser's order: free ones, then lapsed holds.
pub(super) fn claimable(
    tx: &Transaction<'_>,
    event_id: &EventId,
    section: &Section,
    now: Timestamp,
) -> Result<Vec<seatclaim_core::domain::Seat>, BackendError> {
    let rows: Vec<SeatRecord> = tx
        .prepare_cached(&format!(
            "SELECT {SEAT_COLUMNS} FROM seats
             WHERE event_id = ?1 AND section = ?2
               AND (state = 'AVAILABLE' OR (state = 'HELD' AND hold_until <= ?3))
             ORDER BY state = 'HELD', position"
        ))
        .map_err(sqlite_error)?
        .query_map(
            params![event_id.as_str(), section.as_str(), to_ms(now)],
            read_seat,
        )
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    rows.into_iter().map(SeatRecord::into_seat).collect()
}

/// Closes `event_id`'s waitlist: every WAITLISTED job is REJECTED ("waitlist closed") and the
/// event behaves as one without a waitlist. `None`: no such event.
pub(super) fn close(
    tx: &Transaction<'_>,
    event_id: &EventId,
    now: Timestamp,
) -> Result<Option<Vec<Job>>, BackendError> {
    let changed = tx
        .prepare_cached(
            "UPDATE events SET waitlist = 'closed' WHERE event_id = ?1 AND waitlist = 'open'",
        )
        .map_err(sqlite_error)?
        .execute([event_id.as_str()])
        .map_err(sqlite_error)?;
    if changed == 0 && event_terms(tx, event_id)?.is_none() {
        return Ok(None);
    }
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT job_id FROM jobs WHERE event_id = ?1 AND status = 'WAITLISTED'
             ORDER BY line_place",
        )
        .map_err(sqlite_error)?
        .query_map([event_id.as_str()], |row| row.get(0))
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    let mut closed = Vec::with_capacity(ids.len());
    for id in ids.iter().filter_map(|id| JobId::parse(id)) {
        let Some(job) = load_job(tx, id)?.filter(|job| job.status == JobStatus::Waitlisted) else {
            continue;
        };
        if let Ok(transition) = job.reject_waiting(&Reason::waitlist_closed(), now) {
            save_transition(tx, &transition)?;
            closed.push(transition.job);
        }
    }
    Ok(Some(closed))
}
