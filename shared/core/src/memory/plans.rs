//! The memory tables behind the [`Commit`] port, as DynamoDB is: every read is a call of its
//! own (under the lock, then let go), and a plan's conditions are checked against the tables as
//! they stand when it commits, so whatever ran in between (another worker's commit, a
//! settlement, the sweeper) fails them exactly as a concurrent writer fails a DynamoDB
//! condition. The simulation runs the core's optimistic step over it, a gate before every call.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;

use super::MemoryStore;
use super::codes;
use super::state::State;
use super::waitlist;
use crate::domain::{
    Best, BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, SaleTerms, Seat, SeatId,
    SeatState, Section,
};
use crate::ports::{BackendError, ClaimOutcome};
use crate::step::{BuyerCount, Commit, Decided};
use crate::step::{
    Claiming, Committed, CountChange, Plan, SeatChange, SeatCondition, StepStore, Write,
};

/// One process's view of the memory store through the optimistic port: its own in-flight
/// claims ([`Claiming`]) over the shared tables.
pub struct MemoryPlans {
    store: Arc<MemoryStore>,
    claiming: Claiming,
}

impl MemoryPlans {
    /// A process's port over `store`.
    #[must_use]
    pub fn new(store: Arc<MemoryStore>) -> Self {
        Self {
            store,
            claiming: Claiming::default(),
        }
    }

    /// Runs `read` on the tables as the core's step sees them, under the lock for this call
    /// alone.
    fn read<T>(
        &self,
        read: impl FnOnce(&mut dyn StepStore, Timestamp) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.store.step(read)
    }
}

/// Whether the write's condition holds on the tables as they stand (before any write of the
/// plan, as DynamoDB judges a transaction's conditions).
fn holds(state: &State, plan: &Plan, write: &Write) -> Result<bool, BackendError> {
    let job = &plan.job;
    Ok(match write {
        Write::Seat {
            seat_id, condition, ..
        } => {
            let event = state.event(&job.event_id)?;
            let Some(seat) = event.position.get(seat_id).map(|at| &event.seats[*at]) else {
                return Ok(false);
            };
            match (condition, seat.state) {
                (SeatCondition::Claimable, state) => state.is_claimable(plan.now),
                (SeatCondition::Taken, state) => !state.is_claimable(plan.now),
                (SeatCondition::HeldBy { until }, SeatState::Held { job_id, until: at }) => {
                    job_id == job.job_id && until.is_none_or(|until| until == at)
                }
                (SeatCondition::HeldBy { .. }, _) => false,
            }
        }
        Write::Job(transition) => (state.job(transition.job.job_id))
            .is_some_and(|stored| stored.status == transition.from),
        Write::Count(CountChange::Hold { ceiling, .. } | CountChange::Wait { ceiling, .. }) => {
            waitlist::counted(state, &job.event_id, &job.buyer_id, plan.now) <= *ceiling
        }
        Write::CodeCount(CountChange::Hold { ceiling, .. } | CountChange::Wait { ceiling, .. }) => {
            let hash = job
                .code()
                .ok_or_else(|| BackendError::permanent("a code's count without a code"))?;
            let code = state.codes.get(&(job.event_id.clone(), hash.clone()));
            code.is_some_and(|code| !code.revoked)
                && codes::used(state, &job.event_id, hash, plan.now) <= *ceiling
        }
        Write::BindCode => {
            let code = job
                .code()
                .and_then(|hash| state.codes.get(&(job.event_id.clone(), hash.clone())));
            code.is_some_and(|code| {
                code.bound_to
                    .as_ref()
                    .is_none_or(|bound| *bound == job.buyer_id)
            })
        }
        // The jobs are the counts, and the line is its WAITLISTED jobs: nothing else to check.
        Write::Count(_) | Write::CodeCount(_) | Write::Join { .. } | Write::Leave => true,
        Write::LineOpen => state.event(&job.event_id)?.waitlist.is_open(),
    })
}

/// Applies one write whose condition held.
fn apply(state: &mut State, plan: &Plan, write: &Write) -> Result<(), BackendError> {
    let job_id = plan.job.job_id;
    match write {
        Write::Seat {
            seat_id, change, ..
        } => {
            let to = match *change {
                SeatChange::Check => return Ok(()),
                SeatChange::Hold { until } | SeatChange::Extend { until } => {
                    SeatState::Held { job_id, until }
                }
                SeatChange::Sell => SeatState::Sold { job_id },
                SeatChange::Release => SeatState::Available,
            };
            let at = state
                .event(&plan.job.event_id)?
                .position
                .get(seat_id)
                .copied();
            if let Some(at) = at {
                state.put_seat(&plan.job.event_id, at, to);
            }
            Ok(())
        }
        Write::Job(transition) => state.save_transition(transition),
        Write::BindCode => {
            let job = &plan.job;
            let key = job.code().map(|hash| (job.event_id.clone(), hash.clone()));
            if let Some(code) = key.and_then(|key| state.codes.get_mut(&key)) {
                code.bound_to.get_or_insert_with(|| job.buyer_id.clone());
            }
            Ok(())
        }
        Write::Count(_)
        | Write::CodeCount(_)
        | Write::Join { .. }
        | Write::Leave
        | Write::LineOpen => Ok(()),
    }
}

#[async_trait]
impl Commit for MemoryPlans {
    async fn commit(&self, plan: &Plan) -> Result<Committed, BackendError> {
        self.store.lock().atomically(|state| {
            let mut failed = Vec::new();
            for (index, write) in plan.writes.iter().enumerate() {
                if !holds(state, plan, write)? {
                    failed.push(index);
                }
            }
            if !failed.is_empty() {
                return Ok(Committed::Failed(failed));
            }
            for write in &plan.writes {
                apply(state, plan, write)?;
            }
            Ok(Committed::Written(None))
        })
    }

    fn now(&self) -> Timestamp {
        self.store.clock.now()
    }

    fn claiming(&self) -> &Claiming {
        &self.claiming
    }

    async fn pause(&self) {}

    async fn terms(&self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError> {
        self.read(|step, _| step.terms(event_id))
    }

    async fn job(&self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.read(|step, _| step.job(job_id))
    }

    async fn decided(&self, job_id: JobId, _now: Timestamp) -> Result<Decided, BackendError> {
        let job = self.read(|step, _| step.job(job_id))?;
        let job = job.ok_or_else(|| BackendError::permanent(format!("job {job_id} vanished")))?;
        // Every event is in the outbox with its transition: none is left to record.
        Ok((ClaimOutcome::AlreadyDecided(job.status), None))
    }

    async fn candidates(&self, intent: &Intent, now: Timestamp) -> Result<Vec<Seat>, BackendError> {
        self.read(|step, _| step.candidate_seats(intent, Best::default(), now))
    }

    async fn seats(
        &self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Seat>, BackendError> {
        self.store.inspect(|state| {
            let event = state.event(event_id)?;
            Ok((seat_ids.iter())
                .filter_map(|id| event.position.get(id).map(|at| event.seats[*at].clone()))
                .collect())
        })
    }

    async fn free_seats(
        &self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        self.read(|step, _| step.claimable(event_id, section, now))
    }

    async fn line_marked(
        &self,
        event_id: &EventId,
        section: &Section,
    ) -> Result<bool, BackendError> {
        self.read(|step, _| step.has_line(event_id, section))
    }

    async fn waiting(
        &self,
        event_id: &EventId,
        section: &Section,
        depth: usize,
    ) -> Result<Vec<Job>, BackendError> {
        self.read(|step, _| step.line_page(event_id, section, None, depth))
    }

    async fn buyer_count(
        &self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<BuyerCount, BackendError> {
        // Lapsed holds stop counting here the moment they lapse: none waits to be expired.
        let seats = self.read(|step, _| step.counted_seats(event_id, buyer, now))?;
        Ok(BuyerCount {
            seats: Some(seats),
            lapsed: Vec::new(),
        })
    }

    async fn code(
        &self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<Option<(CodeRecord, BuyerCount)>, BackendError> {
        Ok(self.store.inspect(|state| {
            let record = state.codes.get(&(event_id.clone(), hash.clone()))?.clone();
            // Lapsed holds stop counting here the moment they lapse: none waits to be expired.
            let seats = Some(codes::used(state, event_id, hash, now));
            let lapsed = Vec::new();
            Some((record, BuyerCount { seats, lapsed }))
        }))
    }

    async fn open_lines(&self) -> Result<Vec<(EventId, Vec<Section>)>, BackendError> {
        Ok(self.store.inspect(|state| {
            (state.events.iter())
                .filter(|(_, event)| event.waitlist.is_open())
                .map(|(event_id, event)| {
                    let sections: BTreeSet<&Section> =
                        event.seats.iter().map(|seat| &seat.section).collect();
                    (event_id.clone(), sections.into_iter().cloned().collect())
                })
                .collect()
        }))
    }
}
