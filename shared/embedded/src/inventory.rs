//! The claim and its siblings: each decision is read, decided by the domain, and written back
//! under a condition on the seats' current state, all inside one SQLite transaction.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::{Transaction, params};

use super::EmbeddedStore;
use super::job_rows::{count_decided, load_job, save_transition};
use super::settle::settle_one;
use super::terms::{counted_seats, terms as event_terms};
use super::waitlist;
use crate::db::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::{
    ClaimDecision, EventId, Intent, Job, JobAction, JobId, JobStatus, Payment, REASON_UNAVAILABLE,
    SaleTerms, SeatId, SeatLimit, Transition,
};
use seatclaim_core::ports::{BackendError, ClaimOutcome, Claims, Inventory, Settled};

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
                    )
                    .map_err(sqlite_error)?
                    .query_map(params![to_ms(now), limit], |row| row.get(0))
                    .map_err(sqlite_error)?
                    .collect::<Result<_, _>>()
                    .map_err(sqlite_error)?;
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
    let candidates = super::candidates::candidate_seats(tx, intent, event.best, now)?;
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
        tx.prepare_cached("SAVEPOINT hold")
            .map_err(sqlite_error)?
            .execute([])
            .map_err(sqlite_error)?;
    }
    let mut update = tx
        .prepare_cached(
            "UPDATE seats SET state = 'HELD', job_id = ?3, hold_until = ?4
         WHERE event_id = ?1 AND seat_id = ?2
           AND (state = 'AVAILABLE' OR (state = 'HELD' AND hold_until <= ?5))",
        )
        .map_err(sqlite_error)?;
    for seat in seat_ids {
        let changed = update
            .execute(params![
                job.event_id.as_str(),
                seat.as_str(),
                job.job_id.to_string(),
                to_ms(until),
                to_ms(now)
            ])
            .map_err(sqlite_error)?;
        if changed == 0 {
            if atomic {
                tx.prepare_cached("ROLLBACK TO hold")
                    .map_err(sqlite_error)?
                    .execute([])
                    .map_err(sqlite_error)?;
                tx.prepare_cached("RELEASE hold")
                    .map_err(sqlite_error)?
                    .execute([])
                    .map_err(sqlite_error)?;
            }
            return Ok(false);
        }
    }
    if atomic {
        tx.prepare_cached("RELEASE hold")
            .map_err(sqlite_error)?
            .execute([])
            .map_err(sqlite_error)?;
    }
    Ok(true)
}
