//! The mutants: at least one broken rule per invariant the adversaries added, switched on for a run
//! (`Options::mutant`, `seatclaim-sim --mutant NAME`) so that a test can show the simulation
//! catches each. Product code names none of them: the inventory the simulation hands the app is
//! wrapped here, and the line's hand-out is broken through the memory store's step seam
//! (`MemoryStore::step`) by a [`StepStore`] that feeds the real algorithm (`seatclaim_core::step`)
//! a line it mangles. Every other mutation of docs/simulation.md is made by hand, in a copy of
//! the tree.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use jiff::Timestamp;
use seatclaim_core::Backend;
use seatclaim_core::domain::{
    Best, BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobAction, JobId, SaleTerms, Seat,
    SeatId, Section, Settlement, Tender, Transition, hand_out,
};
use seatclaim_core::memory::{Memory, MemoryStore};
use seatclaim_core::ports::{BackendError, Claims, Inventory, Settled};
use seatclaim_core::step::{StepStore, serve_released, settle_one};

/// A rule broken on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// A confirm without a payment sells a priced hold (the tender is read as waived).
    SellUnpaid,
    /// The hand-out stops at the first waiter the seats cannot serve (the line's old rule).
    StopAtFirstUnfit,
    /// The hand-out serves the line last admitted first.
    LineReversed,
    /// The hand-out serves the line in admission order, a pre-queue's draw ignored.
    DrawIgnored,
    /// The optimistic step's commit writes a plan's writes one by one, not all or none
    /// (`plans.rs`; the run decides as the AWS backend does).
    PiecemealCommit,
    /// The sweeper's pass serves no line a channel's release opened: the released seats sit
    /// free while the public waits for them.
    ReleaseUnserved,
}

impl Mutant {
    /// Every mutant, for the test that each is caught.
    pub const ALL: [Self; 6] = [
        Self::SellUnpaid,
        Self::StopAtFirstUnfit,
        Self::LineReversed,
        Self::DrawIgnored,
        Self::PiecemealCommit,
        Self::ReleaseUnserved,
    ];

    /// Its name on the command line.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::SellUnpaid => "sell-unpaid",
            Self::StopAtFirstUnfit => "stop-at-first-unfit",
            Self::LineReversed => "line-reversed",
            Self::DrawIgnored => "draw-ignored",
            Self::PiecemealCommit => "piecemeal-commit",
            Self::ReleaseUnserved => "release-unserved",
        }
    }

    /// The mutant named `name`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Words of the violation of the invariant that must catch it (docs/simulation.md, 9-11).
    #[must_use]
    pub fn caught_by(self) -> &'static str {
        match self {
            Self::SellUnpaid => "SOLD without its payment",
            Self::StopAtFirstUnfit | Self::ReleaseUnserved => "AVAILABLE while job",
            Self::LineReversed | Self::DrawIgnored => "was served from section",
            Self::PiecemealCommit => "but its job is",
        }
    }
}

/// The memory backend's ports, the inventory broken by `mutant` if there is one.
pub fn mutate(memory: &Memory, mutant: Option<Mutant>) -> Backend {
    let mut backend = memory.backend.clone();
    if let Some(mutant) = mutant.filter(|m| *m != Mutant::PiecemealCommit) {
        backend.inventory = Arc::new(Mutated {
            store: Arc::clone(&memory.store),
            mutant,
        });
    }
    backend
}

/// The memory store's inventory, broken.
struct Mutated {
    store: Arc<MemoryStore>,
    mutant: Mutant,
}

#[async_trait]
impl Inventory for Mutated {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        self.store.claim(intents, now).await
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        if self.mutant == Mutant::SellUnpaid {
            let tender = match tender {
                Tender::Nothing => &Tender::Waived,
                paid => paid,
            };
            return self.store.settle(job_id, action, tender).await;
        }
        self.store.step(|step, now| {
            let mut step = Mangled::new(step, self.mutant, now);
            settle_one(&mut step, job_id, action, tender, now).map(|(settled, _)| settled)
        })
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        self.store.close_waitlist(event_id).await
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        if self.mutant == Mutant::SellUnpaid {
            return self.store.release_lapsed_holds(now, limit).await;
        }
        // As the memory store does, but every release through the mangled step.
        let lapsed = self.store.inspect(|state| state.lapsed_holds(now, limit));
        self.store.step(|step, _| {
            let mut step = Mangled::new(step, self.mutant, now);
            let mut released = 0;
            for job_id in lapsed {
                let expire = JobAction::Expire;
                let (settled, _) = settle_one(&mut step, job_id, expire, &Tender::Nothing, now)?;
                released += usize::from(matches!(settled, Settled::Done(_)));
            }
            if self.mutant != Mutant::ReleaseUnserved {
                serve_released(&mut step, now)?;
            }
            Ok(released)
        })
    }
}

/// The store's step with the line it reads mangled by the mutant.
struct Mangled<'a> {
    inner: &'a mut dyn StepStore,
    mutant: Mutant,
    now: Timestamp,
}

impl<'a> Mangled<'a> {
    fn new(inner: &'a mut dyn StepStore, mutant: Mutant, now: Timestamp) -> Self {
        Self { inner, mutant, now }
    }

    /// The first waiters of `line` up to the first one the section's seats cannot serve: the
    /// old rule, under which nobody behind a waiter that does not fit is served.
    fn head_that_fits(
        &mut self,
        event_id: &EventId,
        section: &Section,
        mut line: Vec<Job>,
    ) -> Result<Vec<Job>, BackendError> {
        let Some(terms) = self.inner.terms(event_id)? else {
            return Ok(line);
        };
        let free = self.inner.claimable(event_id, section, self.now)?;
        let mut counted = HashMap::new();
        for job in &line {
            let seats = self
                .inner
                .counted_seats(event_id, &job.buyer_id, self.now)?;
            counted.insert(job.buyer_id.clone(), seats);
        }
        let steps = hand_out(&line, &free, &terms, self.now, |buyer| {
            counted.get(buyer).copied().unwrap_or(0)
        });
        let handed = |job: &Job| {
            steps
                .iter()
                .any(|step| step.transition.job.job_id == job.job_id)
        };
        let cut = line
            .iter()
            .position(|job| !handed(job))
            .unwrap_or(line.len());
        line.truncate(cut);
        Ok(line)
    }
}

impl StepStore for Mangled<'_> {
    fn line_page(
        &mut self,
        event_id: &EventId,
        section: &Section,
        after: Option<JobId>,
        size: usize,
    ) -> Result<Vec<Job>, BackendError> {
        let mut line = self.inner.line_page(event_id, section, after, size)?;
        match self.mutant {
            Mutant::LineReversed => line.reverse(),
            // Job ids are the memory store's admission order.
            Mutant::DrawIgnored => line.sort_by_key(|job| job.job_id),
            Mutant::StopAtFirstUnfit => line = self.head_that_fits(event_id, section, line)?,
            Mutant::SellUnpaid | Mutant::PiecemealCommit | Mutant::ReleaseUnserved => {}
        }
        Ok(line)
    }

    fn job(&mut self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        self.inner.job(job_id)
    }

    fn terms(&mut self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError> {
        self.inner.terms(event_id)
    }

    fn counted_seats(
        &mut self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<u32, BackendError> {
        self.inner.counted_seats(event_id, buyer, now)
    }

    fn candidate_seats(
        &mut self,
        intent: &Intent,
        best: Best,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        self.inner.candidate_seats(intent, best, now)
    }

    fn code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
    ) -> Result<Option<CodeRecord>, BackendError> {
        self.inner.code(event_id, hash)
    }

    fn code_used(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<u32, BackendError> {
        self.inner.code_used(event_id, hash, now)
    }

    fn bind_code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        buyer: &BuyerId,
    ) -> Result<(), BackendError> {
        self.inner.bind_code(event_id, hash, buyer)
    }

    fn channel_events(&mut self) -> Result<Vec<EventId>, BackendError> {
        self.inner.channel_events()
    }

    fn has_line(&mut self, event_id: &EventId, section: &Section) -> Result<bool, BackendError> {
        self.inner.has_line(event_id, section)
    }

    fn hold_seats(
        &mut self,
        job: &Job,
        seat_ids: &[SeatId],
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, BackendError> {
        self.inner.hold_seats(job, seat_ids, now, until)
    }

    fn settle_seats(&mut self, job: &Job, settlement: Settlement) -> Result<usize, BackendError> {
        self.inner.settle_seats(job, settlement)
    }

    fn save_transition(&mut self, transition: &Transition) -> Result<(), BackendError> {
        self.inner.save_transition(transition)
    }

    fn sections_of(
        &mut self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Section>, BackendError> {
        self.inner.sections_of(event_id, seat_ids)
    }

    fn claimable(
        &mut self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        self.inner.claimable(event_id, section, now)
    }
}
