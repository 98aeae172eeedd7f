//! The claim and its siblings on SQLite: the core's step ([`seatclaim_core::step`]) decides each
//! one inside a write transaction (`step.rs`), whose conditional hold is `hold.rs`.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use rusqlite::params;

use super::EmbeddedStore;
use super::job_rows::count_decided;
use super::step::SqlStep;
use super::waitlist;
use crate::error::sqlite_error;
use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::{EventId, Intent, Job, JobAction, JobId, Tender};
use seatclaim_core::ports::{BackendError, ClaimOutcome, Claims, Inventory, Settled};
use seatclaim_core::step::{claim_one, serve_released, settle_one};

#[async_trait]
impl Inventory for EmbeddedStore {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let intents = intents.to_vec();
        // One transaction for the whole batch: one durable commit (one fsync) decides every intent
        // in it, which is what makes batching pay on SQLite.
        let (decided, moved): (Vec<(ClaimOutcome, Option<Job>)>, Vec<Job>) = self
            .db
            .write(move |tx| {
                let mut step = SqlStep::new(tx);
                let decided = intents
                    .iter()
                    .map(|intent| claim_one(&mut step, intent, now))
                    .collect::<Result<Vec<_>, _>>()?;
                let moved = std::mem::take(&mut step.moved);
                let mut counts: HashMap<&EventId, usize> = HashMap::new();
                for ((_, job), intent) in decided.iter().zip(&intents) {
                    *counts.entry(&intent.event_id).or_default() += usize::from(job.is_some());
                }
                for (event_id, count) in counts {
                    count_decided(tx, event_id, count)?;
                }
                Ok((decided, moved))
            })
            .await?;
        // The decided jobs, and any waiter a claim served from its line first.
        self.announce_all(&moved);
        let outcomes = decided.into_iter().map(|(outcome, _)| outcome).collect();
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
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        let clock = Arc::clone(&self.clock);
        let tender = tender.clone();
        // The clock is read inside the write transaction, once this writer holds the lock.
        let (settled, served) = self
            .db
            .write(move |tx| {
                let now = clock.now();
                settle_one(&mut SqlStep::new(tx), job_id, action, &tender, now)
            })
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
                let mut step = SqlStep::new(tx);
                for job_id in lapsed.iter().filter_map(|id| JobId::parse(id)) {
                    let (settled, moved) =
                        settle_one(&mut step, job_id, JobAction::Expire, &Tender::Nothing, now)?;
                    released += usize::from(matches!(settled, Settled::Done(_)));
                    served.extend(moved);
                }
                served.extend(serve_released(&mut step, now)?);
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
