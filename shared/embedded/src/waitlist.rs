//! The waitlist on SQLite: WAITLISTED jobs are found on their own partial index, by event and
//! section in admission order (time-ordered ids), and the line is served inside the write
//! transaction of whatever freed its seats, so nothing can take them in between.

use std::collections::{BTreeSet, HashMap};

use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::catalog::{SEAT_COLUMNS, read_seat};
use super::inventory::hold_seats;
use super::job_rows::{load_job, save_transition};
use super::terms::{counted_seats, terms as event_terms};
use crate::db::sqlite_error;
use seatclaim_core::codec::{SeatRecord, to_ms};
use seatclaim_core::domain::{
    EventId, Job, JobId, JobStatus, REASON_WAITLIST_CLOSED, SaleTerms, Section, hand_out,
};
use seatclaim_core::ports::BackendError;

/// Jobs of a line read per round of a hand-out: a round serves them or stops at the first that
/// must wait, so a long line is read no further than it moves.
const LINE_PAGE: usize = 64;

/// The `WAITLISTED` job ids of `event_id` in `section` in admission order, from `after` on.
fn line_page(
    tx: &Transaction<'_>,
    event_id: &EventId,
    section: &Section,
    after: &str,
) -> Result<Vec<Job>, BackendError> {
    let ids: Vec<String> = tx
        .prepare_cached(
            "SELECT job_id FROM jobs
             WHERE event_id = ?1 AND json_extract(request, '$.section.section') = ?2
               AND status = 'WAITLISTED' AND job_id > ?3
             ORDER BY job_id",
        )
        .map_err(sqlite_error)?
        .query_map(params![event_id.as_str(), section.as_str(), after], |row| {
            row.get(0)
        })
        .map_err(sqlite_error)?
        .take(LINE_PAGE)
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
               AND status = 'WAITLISTED' AND job_id < ?3",
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
fn claimable(
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

/// The sections among `sections` of `event_id` that have a line, where its waitlist is open.
pub(super) fn lines_of<'a>(
    tx: &Transaction<'_>,
    terms: &SaleTerms,
    event_id: &EventId,
    sections: impl Iterator<Item = &'a Section>,
) -> Result<BTreeSet<Section>, BackendError> {
    let mut lined = BTreeSet::new();
    if terms.waitlist.is_open() {
        for section in sections {
            if !lined.contains(section) && has_line(tx, event_id, section)? {
                lined.insert(section.clone());
            }
        }
    }
    Ok(lined)
}

/// Serves the lines `settled` may have moved (the seats it gave back, or its own place in line)
/// with their sections' claimable seats, in this write transaction; returns the jobs that left
/// a line, for the long polls.
pub(super) fn serve_after(
    tx: &Transaction<'_>,
    settled: &Job,
    now: Timestamp,
) -> Result<Vec<Job>, BackendError> {
    let event_id = &settled.event_id;
    let Some(terms) = event_terms(tx, event_id)?.filter(|t| t.waitlist.is_open()) else {
        return Ok(Vec::new());
    };
    let mut sections: BTreeSet<Section> = settled.request.section().cloned().into_iter().collect();
    let mut section_of = tx
        .prepare_cached("SELECT section FROM seats WHERE event_id = ?1 AND seat_id = ?2")
        .map_err(sqlite_error)?;
    for seat in &settled.seat_ids {
        let section: String = section_of
            .query_row(params![event_id.as_str(), seat.as_str()], |row| row.get(0))
            .map_err(sqlite_error)?;
        sections
            .insert(Section::parse(&section).map_err(|e| BackendError::permanent(e.to_string()))?);
    }
    let mut served = Vec::new();
    for section in &sections {
        served.extend(serve_line(tx, &terms, event_id, section, now)?);
    }
    Ok(served)
}

fn serve_line(
    tx: &Transaction<'_>,
    terms: &SaleTerms,
    event_id: &EventId,
    section: &Section,
    now: Timestamp,
) -> Result<Vec<Job>, BackendError> {
    let mut served = Vec::new();
    let mut after = String::new();
    loop {
        let line = line_page(tx, event_id, section, &after)?;
        let Some(last) = line.last() else {
            return Ok(served);
        };
        after = last.job_id.to_string();
        let mut counts = HashMap::new();
        for job in &line {
            if terms.limit.is_some() && !counts.contains_key(&job.buyer_id) {
                let counted = counted_seats(tx, event_id, &job.buyer_id, now)?;
                counts.insert(job.buyer_id.clone(), counted);
            }
        }
        let free = claimable(tx, event_id, section, now)?;
        let steps = hand_out(&line, &free, terms, now, |buyer| {
            counts.get(buyer).copied().unwrap_or(0)
        });
        let moved = steps.len();
        for step in steps {
            let job = &step.transition.job;
            if !step.seats.is_empty() {
                let until = job.hold_expires_at.unwrap_or(now);
                if !hold_seats(tx, job, &step.seats, now, until)? {
                    return Err(BackendError::permanent(format!(
                        "the line's seats for job {} changed inside their write",
                        job.job_id
                    )));
                }
            }
            save_transition(tx, &step.transition)?;
            served.push(step.transition.job);
        }
        // A round that did not move its whole page stopped at a job that must wait.
        if moved < line.len() || line.len() < LINE_PAGE {
            return Ok(served);
        }
    }
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
             ORDER BY job_id",
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
        if let Ok(transition) = job.reject_waiting(REASON_WAITLIST_CLOSED, now) {
            save_transition(tx, &transition)?;
            closed.push(transition.job);
        }
    }
    Ok(Some(closed))
}
