//! A deterministic simulation of the whole claim protocol, in the spirit of FoundationDB's
//! simulator and TigerBeetle's VOPR: one seed draws a sale and a storm (store calls failing
//! before or after they commit, a queue that redelivers, reorders, duplicates and dead-letters,
//! workers, sweeper, relay and operator crashing at any step, holds lapsing while sweeps race
//! claims) and drives the real application code (`seatclaim_core::app`) and the real domain
//! over the memory backend, which passes the same port contract as the real adapters. Time is
//! simulated and every choice comes from the seed, so a failing seed replays exactly; the
//! invariants are checked after every step. See `docs/simulation.md`.

mod actors;
mod adversary;
mod buyer;
mod calls;
mod clock;
mod dice;
mod gate;
mod invariants;
mod ledger;
mod lines;
mod mutants;
mod options;
mod payer;
mod payments;
mod plans;
mod ports;
mod presale;
mod racer;
mod report;
mod rules;
mod run;
mod scheduler;
mod world;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use ledger::AdversaryCounts;
pub use mutants::Mutant;
pub use options::Options;
pub use report::{DEFAULT_STEPS, Failure, SeedReport, replay_command};
pub use run::run;

/// What a range of seeds came to.
#[derive(Debug, Clone, Default)]
pub struct Soak {
    /// Seeds run to their end.
    pub seeds: u64,
    /// Wall time taken.
    pub elapsed: Duration,
    /// The passing seeds' reports, summed.
    pub totals: SeedReport,
    /// The lowest failing seed's failure, if any seed failed.
    pub failure: Option<Failure>,
}

impl Soak {
    /// Seeds per second of wall time.
    #[must_use]
    pub fn rate(&self) -> f64 {
        self.seeds as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs seeds `first..first + count` on `threads` threads (each seed on one thread alone, so
/// each stays deterministic). Seeds are handed out in order and none is started after a
/// failure, so the failure reported is the lowest failing seed of the range.
#[must_use]
pub fn soak(first: u64, count: u64, options: Options, threads: usize) -> Soak {
    let next = AtomicU64::new(first);
    let failed = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let results = Mutex::new((SeedReport::default(), None::<Failure>));
    let started = Instant::now();
    let options = Options {
        verbose: false,
        ..options
    };
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                while !failed.load(Ordering::SeqCst) {
                    let seed = next.fetch_add(1, Ordering::SeqCst);
                    if seed >= first + count {
                        return;
                    }
                    let outcome = run(seed, options);
                    let mut results = results.lock().expect("results lock");
                    match outcome {
                        Ok(report) => results.0.absorb(&report),
                        Err(failure) => {
                            failed.store(true, Ordering::SeqCst);
                            if results.1.as_ref().is_none_or(|f| f.seed > seed) {
                                results.1 = Some(failure);
                            }
                        }
                    }
                    done.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    let (totals, failure) = results.into_inner().expect("results lock");
    Soak {
        seeds: done.into_inner(),
        elapsed: started.elapsed(),
        totals,
        failure,
    }
}
