//! The invariants, checked after every step against the memory store's tables and the bus's
//! log: no seat held or sold by two jobs; the seat table and the jobs agree; every job moved only
//! as the state machine allows, and the reservation events recorded for it are exactly its moves
//! (none lost, none for a move that did not happen); no sale made once its hold had lapsed;
//! every published event was recorded; no buyer holds more than the event's limit; one job per
//! idempotency key; nobody passes a line and no free seat waits while a waiter it fits does
//! (`lines.rs`); no priced seat sold without its payment where payments are required
//! (`payments.rs`). At the end of a run, once faults have stopped and everything drained: every
//! job is final, the queue is empty and every recorded event was published.

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use seatclaim_core::domain::{
    EventId, Job, JobId, JobStatus, ReservationEvent, SaleTerms, SeatId, Section,
};
use seatclaim_core::memory::{Lane, Memory, State};

use super::ledger::Ledger;
use super::lines::{Lines, Since, check_served};
use super::payments::check_paid;
use super::presale::Presale;
use super::rules::{
    Look, QUEUE_REDRIVE, allowed, check_audit, check_block, check_event, check_limits, late_sale,
    names,
};
use super::world::Plan;

mod seats;

/// Follows the store from step to step.
#[derive(Debug)]
pub struct Observer {
    /// The event's terms, for the line's checks.
    terms: SaleTerms,
    /// Whether a priced hold may only be sold by its payment.
    payments: bool,
    /// The jobs seen waiting in a pre-queue.
    prequeued: BTreeSet<JobId>,
    /// Their places in the draw, in the order the opening queued them.
    drawn: BTreeMap<JobId, u64>,
    outbox_seen: usize,
    published_seen: usize,
    /// The statuses each job was seen in, in order, from PENDING.
    moves: BTreeMap<JobId, Vec<JobStatus>>,
    /// The events recorded for each job, in order.
    recorded: BTreeMap<JobId, Vec<ReservationEvent>>,
    /// Who bought each sold seat: a sale is for ever.
    sold: BTreeMap<SeatId, JobId>,
    /// What the tables looked like at the last full check (see [`Observer::check`]).
    last_look: Option<Look>,
    /// When each job was first seen waiting in a line (`lines::check_served`).
    waiting_since: Since,
    /// The seed's presale and its event, whose invariants are checked too (`presale.rs`).
    presale: Option<(Presale, EventId)>,
    /// Whether the run decides as the AWS backend does, where a release and its line's serving
    /// are two commits: free seats may then wait for the serving (or the sweeper's next pass)
    /// for a step or more, so no seat sitting free while a waiter fits it is the interactive
    /// step's invariant alone.
    optimistic: bool,
}

impl Observer {
    /// An observer of a run of `plan`, before anything happened.
    pub fn new(plan: &Plan, optimistic: bool) -> Self {
        Self {
            terms: plan.terms(),
            payments: plan.payments,
            prequeued: BTreeSet::new(),
            drawn: BTreeMap::new(),
            outbox_seen: 0,
            published_seen: 0,
            moves: BTreeMap::new(),
            recorded: BTreeMap::new(),
            sold: BTreeMap::new(),
            last_look: None,
            waiting_since: Since::new(),
            optimistic,
            presale: (plan.presale.clone()).map(|p| (p, plan.event.event_id.clone())),
        }
    }

    /// Checks every invariant at `now`, with what the `ledger` saw (the payments the provider
    /// took, the sweeper's last pass); the first broken one, in words. The seat checks are
    /// skipped when no job, seat or event changed since the last step: time passing alone only
    /// turns live holds into lapsed ones, which can break none of them.
    pub fn check(
        &mut self,
        memory: &Memory,
        now: Timestamp,
        ledger: &Ledger,
    ) -> Result<(), String> {
        memory.store.inspect(|state| {
            let look = Look::of(state);
            if self.last_look == Some(look) {
                return Ok(());
            }
            self.last_look = Some(look);
            self.follow_outbox(state, now)?;
            self.follow_jobs(state)?;
            self.note_draws(state);
            self.check_seats(state, now)?;
            check_limits(state, now)?;
            if let Some((presale, event_id)) = &self.presale {
                presale.check(state, event_id, now)?;
            }
            for job in state
                .jobs()
                .filter(|job| job.status == JobStatus::Waitlisted)
            {
                self.waiting_since.entry(job.job_id).or_insert(now);
            }
            if !self.optimistic {
                let since = (&self.drawn, ledger.swept_at, &self.waiting_since);
                check_served(state, &self.terms, since, now)?;
            }
            check_paid(state, &ledger.payments, self.payments)?;
            check_audit(state, now)?;
            self.check_intents(state)?;
            let (keys, jobs) = (state.key_records(), state.jobs().count());
            if keys != jobs {
                return Err(format!("{jobs} jobs for {keys} idempotency keys"));
            }
            Ok(())
        })?;
        memory
            .publisher
            .inspect(|published| self.follow_published(published))
    }

    /// The checks of a run's end: every job final, nothing left in the main queue, every
    /// recorded event published.
    pub fn check_end(&self, memory: &Memory) -> Result<(), String> {
        memory.store.inspect(|state| {
            if let Some(job) = state
                .jobs()
                .find(|job| job.status.awaits_decision() || job.status == JobStatus::Held)
            {
                return Err(format!(
                    "job {} is still {} at the end",
                    job.job_id,
                    job.status.as_str()
                ));
            }
            if let Some((id, message)) =
                state.queue().messages().find(|(_, m)| m.lane == Lane::Main)
            {
                return Err(format!(
                    "message {id} (job {:?}) is still in the queue at the end",
                    message.job_id
                ));
            }
            if let Some(entry) = state.outbox().iter().find(|e| e.published_at.is_none()) {
                return Err(format!("event {} was never published", entry.seq));
            }
            Ok(())
        })?;
        memory.publisher.inspect(|published| {
            for events in self.recorded.values() {
                if let Some(lost) = events.iter().find(|e| !published.contains(e)) {
                    return Err(format!(
                        "event {} of job {} was marked published but never reached the bus",
                        lost.status.as_str(),
                        lost.job_id
                    ));
                }
            }
            Ok(())
        })
    }

    /// Every new outbox entry is a move its job may make, with the right content.
    fn follow_outbox(&mut self, state: &State, now: Timestamp) -> Result<(), String> {
        // The last job served from each section's line in this step.
        let mut served: BTreeMap<Section, (String, JobId)> = BTreeMap::new();
        for entry in &state.outbox()[self.outbox_seen..] {
            let event = &entry.event;
            let Some(job) = state.job(event.job_id) else {
                return Err(format!(
                    "an event was recorded for unknown job {}",
                    event.job_id
                ));
            };
            let lines = Lines {
                state,
                terms: &self.terms,
                recorded: &self.recorded,
                prequeued: &self.prequeued,
                drawn: &self.drawn,
                now,
                optimistic: self.optimistic,
            };
            lines.check_hold(job, event, &mut served)?;
            if let Some(starts) = self.opens_for(job)
                && event.occurred_at < starts
            {
                return Err(format!(
                    "job {} was decided at {} before its sale opened at {starts}",
                    job.job_id, event.occurred_at
                ));
            }
            let history = self.recorded.entry(event.job_id).or_default();
            let from = history.last().map_or(JobStatus::Pending, |e| e.status);
            if !allowed(from, event) {
                return Err(format!(
                    "job {} recorded a move {} -> {}",
                    job.job_id,
                    from.as_str(),
                    event.status.as_str()
                ));
            }
            check_event(job, history, event, now)?;
            check_block(job, event)?;
            // A plan is committed a flight after its decision: on the AWS shape a sale decided
            // before the lapse may land after it (its seats' condition still makes it the only
            // one), so the decision's instant is what must come first there.
            let decided = if self.optimistic {
                event.occurred_at
            } else {
                now
            };
            if let Some(until) = late_sale(history, event, decided) {
                return Err(format!(
                    "job {} was sold at {now} although its hold lapsed at {until}",
                    job.job_id
                ));
            }
            history.push(event.clone());
        }
        self.outbox_seen = state.outbox().len();
        Ok(())
    }

    /// When `job`'s sale opens, as the plan says (checked apart from the domain's
    /// `SaleTerms::start_of`, which it holds to account): its channel's own start if it has
    /// one, else the event's.
    fn opens_for(&self, job: &Job) -> Option<Timestamp> {
        let channels = &self.terms.channels;
        let channel = job.access.as_ref().and_then(|a| channels.get(&a.channel));
        channel
            .and_then(|c| c.sale_starts_at)
            .or(self.terms.opens_at)
    }

    /// The opening queues its pre-queue's intents in the drawn order, in one step: each
    /// pre-queued job's place in the draw is the order its first message appears in.
    fn note_draws(&mut self, state: &State) {
        for (_, message) in state.queue().messages() {
            if let Some(job_id) = message.job_id
                && self.prequeued.contains(&job_id)
                && !self.drawn.contains_key(&job_id)
            {
                let place = u64::try_from(self.drawn.len()).unwrap_or(u64::MAX);
                self.drawn.insert(job_id, place);
            }
        }
    }

    /// Every job's moves, as seen step by step, are exactly the moves its events record.
    fn follow_jobs(&mut self, state: &State) -> Result<(), String> {
        for job in state.jobs() {
            if state.is_prequeued(job.job_id) {
                self.prequeued.insert(job.job_id);
            }
            let moves = self
                .moves
                .entry(job.job_id)
                .or_insert_with(|| vec![JobStatus::Pending]);
            if moves.last() != Some(&job.status) {
                moves.push(job.status);
            }
            let recorded = self
                .recorded
                .get(&job.job_id)
                .map_or(&[][..], Vec::as_slice);
            // An extension is an event without a move: the job stays HELD.
            let recorded: Vec<JobStatus> = recorded
                .iter()
                .filter(|e| e.hold_extensions.is_none())
                .map(|e| e.status)
                .collect();
            if !moves[1..].iter().eq(recorded.iter()) {
                return Err(format!(
                    "job {} moved {} but its events record {}",
                    job.job_id,
                    names(moves),
                    names(&recorded)
                ));
            }
        }
        Ok(())
    }

    /// No intent is lost: a PENDING job has a message in the main queue (waiting or in flight),
    /// or one in the dead-letter queue that an operator's replay will bring back, where either
    /// the queue put it there itself (received too often: the worker never gave up on it) or
    /// the job was reopened for a replay still under way. A job left PENDING with neither
    /// would wait for ever: a worker acknowledged or dead-lettered its intent undecided.
    fn check_intents(&self, state: &State) -> Result<(), String> {
        let mut waiting: BTreeSet<JobId> = BTreeSet::new();
        let mut redriven: BTreeSet<JobId> = BTreeSet::new();
        let mut dead: BTreeSet<JobId> = BTreeSet::new();
        for (_, message) in state.queue().messages() {
            let Some(job_id) = message.job_id else {
                continue;
            };
            let by_the_queue = message
                .reason
                .as_deref()
                .is_some_and(|r| r.starts_with(QUEUE_REDRIVE));
            match message.lane {
                Lane::Main => waiting.insert(job_id),
                Lane::Dead if by_the_queue => redriven.insert(job_id),
                Lane::Dead => dead.insert(job_id),
            };
        }
        let reopened = |job_id: &JobId| {
            self.recorded
                .get(job_id)
                .and_then(|events| events.last())
                .is_some_and(|e| e.status == JobStatus::Pending)
        };
        // A pre-queued intent is kept by its pre-queue until the opening queues it.
        let kept = |job_id: &JobId| {
            state.is_prequeued(*job_id)
                || waiting.contains(job_id)
                || redriven.contains(job_id)
                || (dead.contains(job_id) && reopened(job_id))
        };
        let lost = state
            .jobs()
            .find(|job| job.status == JobStatus::Pending && !kept(&job.job_id));
        match lost {
            Some(job) => Err(format!(
                "job {} is PENDING but no message will decide it: its intent was lost",
                job.job_id
            )),
            None => Ok(()),
        }
    }

    /// Everything the bus received was recorded first.
    fn follow_published(&mut self, published: &[ReservationEvent]) -> Result<(), String> {
        for event in &published[self.published_seen..] {
            let known = self
                .recorded
                .get(&event.job_id)
                .is_some_and(|events| events.contains(event));
            if !known {
                return Err(format!(
                    "the bus received {} of job {}, which was never recorded",
                    event.status.as_str(),
                    event.job_id
                ));
            }
        }
        self.published_seen = published.len();
        Ok(())
    }
}
