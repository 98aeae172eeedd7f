//! The deterministic simulation of the claim protocol (`seatclaim_e2e::sim`, docs/simulation.md)
//! over 10,000 seeds: each seed a sale through a storm of store and queue faults, crashes at
//! every step and duplicated messages, then a quiescent tail, with the invariants checked after
//! every step, adversaries among the buyers. A failure names the lowest failing seed and the one
//! command that replays it. Each mutant (a rule broken on purpose) must be caught by its own
//! invariant within a few seeds.

use seatclaim_e2e::sim::{self, DEFAULT_STEPS, Mutant, Options};

/// Seeds the suite runs; `seatclaim-sim --seeds N` soaks further (docs/simulation.md).
const SEEDS: u64 = 10_000;

/// Seeds a mutant may pass before the suite fails for not catching it.
const MUTANT_SEEDS: u64 = 2_000;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

#[test]
fn ten_thousand_seeds_keep_every_invariant() {
    soak_keeps_every_invariant(false);
}

/// The same seeds decided as the AWS backend decides: the core's optimistic step, each read and
/// each plan's commit a step of its own, with other actors' writes in between.
#[test]
fn ten_thousand_seeds_keep_every_invariant_when_each_decision_is_a_committed_plan() {
    soak_keeps_every_invariant(true);
}

fn soak_keeps_every_invariant(optimistic: bool) {
    let options = Options {
        steps: DEFAULT_STEPS,
        verbose: false,
        mutant: None,
        optimistic,
    };
    let soak = sim::soak(0, SEEDS, options, cores());
    eprintln!(
        "{} seeds in {:.1} s: {:.0} seeds/s\n{}",
        soak.seeds,
        soak.elapsed.as_secs_f64(),
        soak.rate(),
        soak.totals
    );
    if let Some(failure) = soak.failure {
        panic!(
            "seed {} broke an invariant at step {}: {}\nreplay it with: {}",
            failure.seed,
            failure.at_step,
            failure.violation,
            sim::replay_command(failure.seed, failure.options)
        );
    }
    assert_eq!(soak.seeds, SEEDS);
    let totals = &soak.totals;
    assert!(
        totals.faults.before > 0 && totals.faults.after > 0,
        "the storm failed calls before and after they committed"
    );
    for point in ["inventory.claim", "queue.ack_and_receive", "queue.delete"] {
        assert!(
            totals.crashes.get(point).is_some_and(|n| *n > 0),
            "no crash before {point}: {:?}",
            totals.crashes
        );
    }
    let b = &totals.batches;
    assert!(b.already_decided > 0 && b.dead_lettered > 0 && b.expired > 0 && b.retried > 0);
    assert!(totals.duplicates > 0 && totals.replays > 0 && totals.retries > 0);
    let a = &totals.adversaries;
    assert!(
        a.confirms > 0 && a.unpaid_refused > 0 && a.unservable > 0 && a.payers > 0 && a.races > 0,
        "every adversary attacked: {a:?}"
    );
}

#[test]
fn each_mutant_is_caught_by_its_invariant() {
    for mutant in Mutant::ALL {
        let options = Options {
            steps: DEFAULT_STEPS,
            verbose: false,
            mutant: Some(mutant),
            optimistic: false,
        };
        let soak = sim::soak(0, MUTANT_SEEDS, options, cores());
        let Some(failure) = soak.failure else {
            panic!(
                "mutant {} passed {} seeds: no invariant caught it",
                mutant.name(),
                soak.seeds
            );
        };
        eprintln!(
            "mutant {} caught at seed {} (step {}): {}\n  replay it with: {}",
            mutant.name(),
            failure.seed,
            failure.at_step,
            failure.violation,
            sim::replay_command(failure.seed, failure.options)
        );
        assert!(
            failure.violation.contains(mutant.caught_by()),
            "mutant {} was caught at seed {} by another check than its own ({:?}): {}",
            mutant.name(),
            failure.seed,
            mutant.caught_by(),
            failure.violation
        );
    }
}

#[test]
fn a_seed_replays_exactly() {
    for optimistic in [false, true] {
        let options = Options {
            steps: DEFAULT_STEPS,
            verbose: true,
            mutant: None,
            optimistic,
        };
        let first = sim::run(7, options).expect("seed 7 passes");
        let again = sim::run(7, options).expect("seed 7 passes");
        assert!(first.trace.len() > 100, "the trace has every step");
        assert_eq!(
            first.trace, again.trace,
            "the same seed takes the same steps (optimistic: {optimistic})"
        );
    }
}
