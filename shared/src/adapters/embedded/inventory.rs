//! The claim and its siblings: each decision is read, decided by the domain, and written back
//! under a condition on the seats' current state, all inside one SQLite transaction.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::EmbeddedStore;
use super::catalog::{SEAT_COLUMNS, read_seat};
use super::job_rows::{count_decided, load_job, save_transition};
use super::settle::settle_one;
use super::terms::{counted_seats, terms as event_terms};
use super::waitlist;
use crate::codec::{SeatRecord, to_ms};
use crate::domain::{
    Best, BlockSearch, ClaimDecision, EventId, Intent, Job, JobAction, JobId, JobStatus, Payment,
    REASON_UNAVAILABLE, SaleTerms, Seat, SeatId, SeatLimit, SeatRequest, Section, Transition,
};
use crate::ports::{BackendError, ClaimOutcome, Claims, Inventory, Settled};

#[async_trait]
impl Inventory for EmbeddedStore {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let intents = intents.to_vec();
        // One transaction for the whole batch: one durable commit (one fsync) decides every intent
        // in it, which is what makes batching pay on SQLite.
        let decided: Vec<(ClaimOutcome, Option<Job>)> = self
            .db
            .write(move |tx| {
                let mut terms = HashMap::new();
                let decided = intents
                    .iter()
                    .map(|intent| claim_one(tx, &mut terms, intent, now))
                    .collect::<Result<Vec<_>, _>>()?;
                let mut counts: HashMap<&EventId, usize> = HashMap::new();
                for ((_, job), intent) in decided.iter().zip(&intents) {
                    *counts.entry(&intent.event_id).or_default() += usize::from(job.is_some());
                }
                for (event_id, count) in counts {
                    count_decided(tx, event_id, count)?;
                }
                Ok(decided)
            })
            .await?;
        let outcomes = decided
            .into_iter()
            .map(|(outcome, job)| {
                if let Some(job) = &job {
                    self.decisions.announce(job);
                }
                outcome
            })
            .collect();
        // Every event is in the outbox with its transition: nothing is left to the caller.
        Ok(Claims {
            outcomes,
            unrecorded: Vec::new(),
        })
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        payment: Option<&Payment>,
    ) -> Result<Settled, BackendError> {
        let clock = Arc::clone(&self.clock);
        let payment = payment.cloned();
        // The clock is read inside the write transaction, once this writer holds the lock.
        let (settled, served) = self
            .db
            .write(move |tx| settle_one(tx, job_id, action, payment.as_ref(), clock.now()))
            .await?;
        self.announce_all(&served);
        Ok(settled)
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.db
            .write(move |tx| {
                let lapsed: Vec<String> = tx
                    .prepare_cached(
                        "SELECT job_id FROM jobs WHERE status = 'HELD' AND hold_until <= ?1
                         ORDER BY hold_until LIMIT ?2",
                    )?
                    .query_map(params![to_ms(now), limit], |row| row.get(0))?
                    .collect::<Result<_, _>>()?;
                let (mut released, mut served) = (0, Vec::new());
                for job_id in lapsed.iter().filter_map(|id| JobId::parse(id)) {
                    let (settled, moved) = settle_one(tx, job_id, JobAction::Expire, None, now)?;
                    released += usize::from(matches!(settled, Settled::Done(_)));
                    served.extend(moved);
                }
                Ok((released, served))
            })
            .await
            .map(|(released, served)| {
                self.announce_all(&served);
                released
            })
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        let (event_id, clock) = (event_id.clone(), Arc::clone(&self.clock));
        let closed = self
            .db
            .write(move |tx| waitlist::close(tx, &event_id, clock.now()))
            .await?;
        Ok(closed.map(|jobs| {
            self.announce_all(&jobs);
            jobs.len()
        }))
    }
}

impl EmbeddedStore {
    /// Hands jobs changed by a write to the long polls waiting for them.
    fn announce_all(&self, jobs: &[Job]) {
        for job in jobs {
            self.decisions.announce(job);
        }
    }
}

/// Decides one intent; the job comes back too when this call decided it, for the long polls.
/// `terms` remembers each event's terms for the rest of the batch.
fn claim_one(
    tx: &Transaction<'_>,
    terms: &mut HashMap<EventId, SaleTerms>,
    intent: &Intent,
    now: Timestamp,
) -> Result<(ClaimOutcome, Option<Job>), BackendError> {
    let Some(job) = load_job(tx, intent.job_id)? else {
        return Err(BackendError::permanent(format!(
            "intent for unknown job {}",
            intent.job_id
        )));
    };
    if job.status != JobStatus::Pending {
        return Ok((ClaimOutcome::AlreadyDecided(job.status), None));
    }
    let transition = decide_pending(tx, terms, &job, intent, now)?;
    save_transition(tx, &transition)?;
    Ok((ClaimOutcome::of(&transition), Some(transition.job)))
}

/// Decides the claim of `job`, PENDING, for `intent`: the per-buyer limit, then the seats, each
/// written under its condition in `tx`. The transition comes back for the caller to store.
pub(super) fn decide_pending(
    tx: &Transaction<'_>,
    terms: &mut HashMap<EventId, SaleTerms>,
    job: &Job,
    intent: &Intent,
    now: Timestamp,
) -> Result<Transition, BackendError> {
    let event = match terms.get(&intent.event_id) {
        Some(known) => known.clone(),
        None => {
            let read = event_terms(tx, &intent.event_id)?.ok_or_else(|| {
                BackendError::permanent(format!("intent for unknown event {}", intent.event_id))
            })?;
            terms.insert(intent.event_id.clone(), read.clone());
            read
        }
    };
    let decided = match over_limit(tx, event.limit, intent, now)? {
        Some(reason) => job.reject(&reason, now),
        None => hold_or_reject(tx, job, intent, &event, now)?,
    };
    decided.map_err(|status| {
        BackendError::permanent(format!(
            "job {} is {}, not PENDING",
            job.job_id,
            status.as_str()
        ))
    })
}

/// The rejection's reason if the buyer's HELD and SOLD seats in the event leave no room for
/// this claim; counted in the claim's own transaction, so racing claims cannot both pass.
fn over_limit(
    tx: &Transaction<'_>,
    limit: Option<SeatLimit>,
    intent: &Intent,
    now: Timestamp,
) -> Result<Option<String>, BackendError> {
    let Some(limit) = limit else {
        return Ok(None);
    };
    let counted = counted_seats(tx, &intent.event_id, &intent.buyer_id, now)?;
    Ok((!limit.admits(counted, intent.request.quantity())).then(|| limit.reason()))
}

/// The claim's decision on the seats as read, written under the condition that they are still
/// claimable; or the job's place at the end of its section's line.
fn hold_or_reject(
    tx: &Transaction<'_>,
    job: &Job,
    intent: &Intent,
    event: &SaleTerms,
    now: Timestamp,
) -> Result<Result<Transition, JobStatus>, BackendError> {
    let candidates = candidate_seats(tx, intent, event.best, now)?;
    let sections = intent
        .request
        .section()
        .into_iter()
        .chain(candidates.iter().map(|seat| &seat.section));
    let lined = waitlist::lines_of(tx, event, &intent.event_id, sections)?;
    let decision = event.decide(&intent.request, &candidates, now, |s| lined.contains(s));
    Ok(match decision {
        ClaimDecision::Hold {
            seat_ids,
            until,
            amount_due,
        } if hold_seats(tx, job, &seat_ids, now, until)? => {
            job.hold(seat_ids, until, amount_due, now)
        }
        // A seat changed since it was read: the condition refused it, so the claim is lost.
        ClaimDecision::Hold { .. } => job.reject(REASON_UNAVAILABLE, now),
        ClaimDecision::Reject { reason } => job.reject(&reason, now),
        ClaimDecision::Waitlist => job.join_waitlist(now),
    })
}

/// The seats the decision needs: the requested ones for an exact request; for a section request,
/// free seats first and then lapsed holds, enough of them to satisfy it if possible. (The
/// statements step only as far as they need instead of saying `LIMIT ?`: a bound LIMIT makes
/// SQLite compile the statement again on every run, to weigh its plan against the value.)
fn candidate_seats(
    tx: &Transaction<'_>,
    intent: &Intent,
    best: Best,
    now: Timestamp,
) -> Result<Vec<Seat>, BackendError> {
    let event = intent.event_id.as_str();
    let rows: Vec<SeatRecord> = match &intent.request {
        SeatRequest::Seats(wanted) => {
            let mut query = tx.prepare_cached(&format!(
                "SELECT {} FROM seats WHERE event_id = ?1 AND seat_id = ?2",
                SEAT_COLUMNS
            ))?;
            let mut rows = Vec::with_capacity(wanted.len());
            for seat in wanted {
                rows.extend(
                    query
                        .query_map(params![event, seat.as_str()], read_seat)?
                        .collect::<Result<Vec<_>, _>>()?,
                );
            }
            rows
        }
        SeatRequest::Section {
            section,
            quantity,
            together: true,
        } => return block_candidates(tx, intent, section, (*quantity, best), now),
        SeatRequest::Section {
            section, quantity, ..
        } => {
            // The best few of each kind are the best of all.
            let wanted = usize::from(*quantity);
            let mut free = tx.prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM seats
                 WHERE event_id = ?1 AND section = ?2 AND state = 'AVAILABLE' ORDER BY preference"
            ))?;
            let mut lapsed = tx.prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM seats
                 WHERE event_id = ?1 AND section = ?2 AND state = 'HELD' AND hold_until <= ?3
                 ORDER BY preference"
            ))?;
            free.query_map(params![event, section.as_str()], read_seat)?
                .take(wanted)
                .chain(
                    lapsed
                        .query_map(params![event, section.as_str(), to_ms(now)], read_seat)?
                        .take(wanted),
                )
                .collect::<Result<Vec<_>, _>>()?
        }
    };
    rows.into_iter().map(SeatRecord::into_seat).collect()
}

/// The claimable seats of a block's section, read row by row from the front until the domain's
/// search has seen enough ([`BlockSearch`]): the rows before the one that holds the block, and
/// that row; every row when no row has a block that strands nothing. Free seats stream from the
/// index in row order (seats without a row first: SQLite orders NULL first); the few lapsed holds
/// are read whole and merged in.
fn block_candidates(
    tx: &Transaction<'_>,
    intent: &Intent,
    section: &Section,
    (quantity, best): (u8, Best),
    now: Timestamp,
) -> Result<Vec<Seat>, BackendError> {
    let event = intent.event_id.as_str();
    let at = |seat: &Seat| seat.place.map(|p| (p.row, p.position));
    let mut lapsed: Vec<Seat> = tx
        .prepare_cached(&format!(
            "SELECT {SEAT_COLUMNS} FROM seats
             WHERE event_id = ?1 AND section = ?2 AND state = 'HELD' AND hold_until <= ?3"
        ))?
        .query_map(params![event, section.as_str(), to_ms(now)], read_seat)?
        .map(|record| record?.into_seat())
        .collect::<Result<_, BackendError>>()?;
    lapsed.sort_by_key(at);
    let mut lapsed = lapsed.into_iter().peekable();
    let mut free = tx.prepare_cached(&format!(
        "SELECT {SEAT_COLUMNS} FROM seats
         WHERE event_id = ?1 AND section = ?2 AND state = 'AVAILABLE'
         ORDER BY row_order, position"
    ))?;
    let mut rows = RowByRow::new(BlockSearch::new(usize::from(quantity), best));
    for record in free.query_map(params![event, section.as_str()], read_seat)? {
        let seat = record?.into_seat()?;
        while let Some(earlier) = lapsed.next_if(|l| at(l) < at(&seat)) {
            if rows.add(earlier) {
                return Ok(rows.seats);
            }
        }
        if rows.add(seat) {
            return Ok(rows.seats);
        }
    }
    rows.seats.extend(lapsed);
    Ok(rows.seats)
}

/// Seats in row order, handed to a block search a whole row at a time.
struct RowByRow {
    search: BlockSearch,
    seats: Vec<Seat>,
    row_start: usize,
}

impl RowByRow {
    fn new(search: BlockSearch) -> Self {
        Self {
            search,
            seats: Vec::new(),
            row_start: 0,
        }
    }

    /// Adds the next seat; `true` once the search needs no more (the seat is not added then).
    fn add(&mut self, seat: Seat) -> bool {
        let row = |seat: &Seat| seat.place.and_then(|p| p.row);
        let ended = self
            .seats
            .last()
            .is_some_and(|last| row(last) != row(&seat));
        if ended {
            let whole: Vec<&Seat> = self.seats[self.row_start..].iter().collect();
            if self.search.row(&whole) {
                return true;
            }
            self.row_start = self.seats.len();
        }
        self.seats.push(seat);
        false
    }
}

/// The conditional write: each seat moves to HELD only if it is still AVAILABLE or its hold has
/// lapsed. If any seat fails the condition, the savepoint rolls back the others (all or none).
pub(super) fn hold_seats(
    tx: &Transaction<'_>,
    job: &Job,
    seat_ids: &[SeatId],
    now: Timestamp,
    until: Timestamp,
) -> Result<bool, BackendError> {
    // One seat needs no savepoint: its single conditional UPDATE is all or nothing by itself.
    let atomic = seat_ids.len() > 1;
    if atomic {
        tx.prepare_cached("SAVEPOINT hold")?.execute([])?;
    }
    let mut update = tx.prepare_cached(
        "UPDATE seats SET state = 'HELD', job_id = ?3, hold_until = ?4
         WHERE event_id = ?1 AND seat_id = ?2
           AND (state = 'AVAILABLE' OR (state = 'HELD' AND hold_until <= ?5))",
    )?;
    for seat in seat_ids {
        let changed = update.execute(params![
            job.event_id.as_str(),
            seat.as_str(),
            job.job_id.to_string(),
            to_ms(until),
            to_ms(now)
        ])?;
        if changed == 0 {
            if atomic {
                tx.prepare_cached("ROLLBACK TO hold")?.execute([])?;
                tx.prepare_cached("RELEASE hold")?.execute([])?;
            }
            return Ok(false);
        }
    }
    if atomic {
        tx.prepare_cached("RELEASE hold")?.execute([])?;
    }
    Ok(true)
}
