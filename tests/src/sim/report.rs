//! What a run reports: for a passing seed, what it went through (so a soak can show it covered
//! crashes at every point and faults of every kind); for a failing one, the broken invariant,
//! where, the one command that replays it, and, when replayed alone, the trace of every step.

use std::collections::BTreeMap;
use std::fmt;

use seatclaim_core::app::BatchOutcome;

use super::gate::FaultCounts;
use super::ledger::AdversaryCounts;
use super::options::Options;

/// The steps a run takes before its quiescent tail, unless told otherwise.
pub const DEFAULT_STEPS: usize = 300;

/// The command that replays `seed` run with `options`.
#[must_use]
pub fn replay_command(seed: u64, options: Options) -> String {
    let steps = if options.steps == DEFAULT_STEPS {
        String::new()
    } else {
        format!(" --steps {}", options.steps)
    };
    let mutant = options
        .mutant
        .map_or_else(String::new, |m| format!(" --mutant {}", m.name()));
    let optimistic = if options.optimistic {
        " --optimistic"
    } else {
        ""
    };
    format!(
        "cargo run -p seatclaim-e2e --bin seatclaim-sim -- --seed {seed}{steps}{mutant}{optimistic}"
    )
}

/// What one passing seed did.
#[derive(Debug, Clone, Default)]
pub struct SeedReport {
    /// Steps taken, the tail's included.
    pub steps: u64,
    /// Simulated time that passed, in seconds.
    pub simulated_secs: f64,
    /// Jobs by final status.
    pub jobs: BTreeMap<&'static str, u64>,
    /// Faults injected.
    pub faults: FaultCounts,
    /// Crashes, by the call the process was about to make.
    pub crashes: BTreeMap<&'static str, u64>,
    /// The workers' batches, summed.
    pub batches: BatchOutcome,
    /// Copies of messages the queue delivered on its own.
    pub duplicates: u64,
    /// Dead-letter replays the operator ran.
    pub replays: u64,
    /// Client retries of answered requests.
    pub retries: u64,
    /// What the adversaries did.
    pub adversaries: AdversaryCounts,
    /// Every step, when the run was verbose.
    pub trace: Vec<String>,
}

impl SeedReport {
    /// Adds `other` into this one, for a soak's totals.
    pub fn absorb(&mut self, other: &Self) {
        self.steps += other.steps;
        self.simulated_secs += other.simulated_secs;
        for (status, n) in &other.jobs {
            *self.jobs.entry(status).or_default() += n;
        }
        self.faults.calls += other.faults.calls;
        self.faults.before += other.faults.before;
        self.faults.after += other.faults.after;
        for (at, n) in &other.crashes {
            *self.crashes.entry(at).or_default() += n;
        }
        add_batch(&mut self.batches, &other.batches);
        self.duplicates += other.duplicates;
        self.replays += other.replays;
        self.retries += other.retries;
        self.adversaries.absorb(&other.adversaries);
    }
}

impl fmt::Display for SeedReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "  steps {}, simulated time {:.0} s, port calls {} ({} failed before, {} after the commit)",
            self.steps,
            self.simulated_secs,
            self.faults.calls,
            self.faults.before,
            self.faults.after
        )?;
        writeln!(f, "  jobs: {:?}", self.jobs)?;
        let b = &self.batches;
        writeln!(
            f,
            "  worker decisions: held {}, rejected {}, waitlisted {}, request expired {}, redelivered already decided {}, retried {}, dead-lettered {}",
            b.held,
            b.rejected,
            b.waitlisted,
            b.expired,
            b.already_decided,
            b.retried,
            b.dead_lettered
        )?;
        writeln!(
            f,
            "  crashes, by the call they preceded: {:?}",
            self.crashes
        )?;
        writeln!(
            f,
            "  queue duplicates {}, operator replays {}, client retries {}",
            self.duplicates, self.replays, self.retries
        )?;
        let a = &self.adversaries;
        write!(
            f,
            "  adversaries: {} confirms without payment ({} refused as unpaid), {} unservable \
             requests refused, {} payers, {} races of cancel, extend and pay",
            a.confirms, a.unpaid_refused, a.unservable, a.payers, a.races
        )
    }
}

/// Adds `batch`'s counts into `total`.
pub fn add_batch(total: &mut BatchOutcome, batch: &BatchOutcome) {
    total.held += batch.held;
    total.rejected += batch.rejected;
    total.waitlisted += batch.waitlisted;
    total.expired += batch.expired;
    total.already_decided += batch.already_decided;
    total.retried += batch.retried;
    total.dead_lettered += batch.dead_lettered;
}

/// A seed that broke an invariant.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The seed.
    pub seed: u64,
    /// How it was run.
    pub options: Options,
    /// The step at which the invariant broke.
    pub at_step: u64,
    /// What broke.
    pub violation: String,
    /// Every step, when the run was verbose.
    pub trace: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.trace {
            writeln!(f, "{line}")?;
        }
        writeln!(
            f,
            "seed {} broke an invariant at step {}: {}",
            self.seed, self.at_step, self.violation
        )?;
        write!(
            f,
            "replay it with: {}",
            replay_command(self.seed, self.options)
        )
    }
}
