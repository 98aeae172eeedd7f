//! Admissions on SQLite: the PENDING job (which carries its idempotency key) and the queued
//! intent in one write; or, when the process runs the worker and no queued intent is waiting,
//! the job decided (the claim's conditional seat writes and its outbox event) in that one write,
//! with nothing queued. Admissions that arrive together share the writer's round (`writer.rs`):
//! one durable commit, one fsync, for all of them, each answered only after it.

use std::sync::Arc;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, Transaction, params};

use super::EmbeddedStore;
use super::event_shapes::EventShapes;
use super::intent_queue::{enqueue, is_empty};
use super::job_rows::{Admitted, insert_decided, insert_job};
use super::opening::{opening_undrawn, park, prequeued, waits_for_opening};
use super::step::SqlStep;
use crate::error::sqlite_error;
use seatclaim_core::domain::{
    BuyerId, IdempotencyKey, Intent, Job, JobId, SaleTerms, SeatId, SeatRequest,
};
use seatclaim_core::ports::{Admission, Admissions, BackendError, SectionKnown};
use seatclaim_core::step::decide_pending;

#[async_trait]
impl Admissions for EmbeddedStore {
    async fn admit(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        self.admit_in_round(key, intent, false).await
    }

    async fn admit_and_decide(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        self.admit_in_round(key, intent, true).await
    }

    fn new_job_id(&self, _buyer: &BuyerId, _key: &IdempotencyKey) -> JobId {
        JobId::time_ordered()
    }
}

impl EmbeddedStore {
    /// Admits in the writer's next round, deciding there too if `decide` allows; wakes the
    /// receivers of a queued intent, or the long polls of a decided job.
    async fn admit_in_round(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
        decide: bool,
    ) -> Result<Admission, BackendError> {
        let (key, intent, clock) = (key.clone(), intent.clone(), Arc::clone(&self.clock));
        let shapes = Arc::clone(&self.shapes);
        let admission = self
            .db
            .write(move |tx| admit_one(tx, &shapes, &key, &intent, decide, clock.now()))
            .await?;
        match &admission {
            Admission::Accepted(_) => self.enqueued.notify_waiters(),
            Admission::Decided(job) => self.decisions.announce(job),
            _ => {}
        }
        Ok(admission)
    }
}

/// One admission inside the round's transaction: an earlier record of the key decides
/// (duplicate or reused), else the request is checked and the key is recorded with the job:
/// PENDING in its event's pre-queue before the sale opens (one per buyer), decided at once if
/// `decide` and nothing queued or pre-queued comes first, else PENDING with its intent queued.
fn admit_one(
    tx: &Transaction<'_>,
    shapes: &EventShapes,
    key: &IdempotencyKey,
    intent: &Intent,
    decide: bool,
    now: jiff::Timestamp,
) -> Result<Admission, BackendError> {
    if let Some((earlier, job_id)) = find_key(tx, intent, key)? {
        return Ok(match Admission::for_earlier(&earlier, intent, job_id) {
            Admission::Duplicate(job_id) if prequeued(tx, job_id)? => Admission::Prequeued(job_id),
            earlier => earlier,
        });
    }
    let event_terms = match check_request(tx, shapes, intent)? {
        Ok(event_terms) => event_terms,
        Err(refusal) => return Ok(refusal),
    };
    let admitted = Admitted {
        key,
        fingerprint: intent.request.fingerprint(&intent.event_id),
        at: now,
    };
    let pending = Job::pending(intent);
    // Only a sale that announced a start has an opening to look up.
    let start = event_terms.start_for(intent);
    if let Some(start) = &start
        && waits_for_opening(tx, &intent.event_id, start, now)?
    {
        // It waits for the opening: its age counts from then.
        let waiting = Intent {
            opens_at: Some(start.at),
            ..intent.clone()
        };
        if let Some(queued) = park(tx, &waiting, start)? {
            return Ok(Admission::AlreadyQueued(queued));
        }
        insert_job(tx, &pending, &admitted)?;
        return Ok(Admission::Prequeued(intent.job_id));
    }
    let undrawn = match &start {
        Some(start) => opening_undrawn(tx, &intent.event_id, start)?,
        None => false,
    };
    if decide && is_empty(tx)? && !undrawn {
        let mut step = SqlStep::knowing(tx, intent.event_id.clone(), event_terms);
        let transition = decide_pending(&mut step, &pending, intent, now)?;
        insert_decided(tx, &transition, &admitted)?;
        return Ok(Admission::Decided(Box::new(transition.job)));
    }
    insert_job(tx, &pending, &admitted)?;
    enqueue(tx, intent, now)?;
    Ok(Admission::Accepted(intent.job_id))
}

fn find_key(
    tx: &Transaction<'_>,
    intent: &Intent,
    key: &IdempotencyKey,
) -> Result<Option<(String, JobId)>, BackendError> {
    let row = tx
        .prepare_cached(
            "SELECT fingerprint, job_id FROM jobs WHERE buyer_id = ?1 AND idempotency_key = ?2",
        )
        .map_err(sqlite_error)?
        .query_row(params![intent.buyer_id.as_str(), key.as_str()], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })
        .optional()
        .map_err(sqlite_error)?;
    row.map(|(fingerprint, job_id)| {
        JobId::parse(&job_id)
            .map(|id| (fingerprint, id))
            .ok_or_else(|| BackendError::permanent(format!("a job row has the id {job_id:?}")))
    })
    .transpose()
}

/// The event's terms for an admissible request; else its refusal, for an event, seats or section
/// that do not exist, or a request its section can never serve: the client can fix those, so
/// they are answered now rather than becoming a rejected job.
fn check_request(
    tx: &Transaction<'_>,
    shapes: &EventShapes,
    intent: &Intent,
) -> Result<Result<SaleTerms, Admission>, BackendError> {
    let Some(shape) = shapes.get(tx, &intent.event_id)? else {
        return Ok(Err(Admission::UnknownEvent));
    };
    let (found, section) = match &intent.request {
        SeatRequest::Seats(wanted) => {
            let found: Vec<SeatId> = wanted
                .iter()
                .filter(|seat| shape.has_seat(seat.as_str()))
                .cloned()
                .collect();
            (found, SectionKnown::No)
        }
        SeatRequest::Section { section, .. } => (Vec::new(), shape.section(section)),
    };
    match Admission::refusal(&intent.request, &found, section) {
        Some(refused) => Ok(Err(refused)),
        None => shape.terms_in(tx, &intent.event_id).map(Ok),
    }
}
