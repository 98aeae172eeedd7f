//! `seatclaim-sim`: the deterministic simulation of the claim protocol (`seatclaim_e2e::sim`,
//! `docs/simulation.md`). `--seed N` runs one seed and, if it fails, prints every step it took;
//! `--seeds N` runs seeds `--first` to `--first + N - 1` on every core and prints the lowest
//! failing seed's replay command, or the totals and the seeds per second.

use std::process::ExitCode;

use clap::Parser;
use seatclaim_e2e::sim::{self, DEFAULT_STEPS, Mutant, Options};

/// Runs the deterministic simulation of the claim protocol.
#[derive(Debug, Parser)]
struct Cli {
    /// Runs this one seed, tracing every step if it fails.
    #[arg(long, conflicts_with = "seeds")]
    seed: Option<u64>,
    /// Runs this many seeds, from `--first`.
    #[arg(long, default_value_t = 1_000)]
    seeds: u64,
    /// The first seed of `--seeds`.
    #[arg(long, default_value_t = 0)]
    first: u64,
    /// Steps of each run's storm, before its quiescent tail.
    #[arg(long, default_value_t = DEFAULT_STEPS)]
    steps: usize,
    /// Threads for `--seeds` (every core by default).
    #[arg(long)]
    threads: Option<usize>,
    /// With `--seed`, print the trace even when the seed passes.
    #[arg(long)]
    trace: bool,
    /// Breaks a rule on purpose (sell-unpaid, stop-at-first-unfit, line-reversed, draw-ignored, piecemeal-commit), to see the
    /// simulation catch it (docs/simulation.md, "Mutations it catches").
    #[arg(long, value_parser = parse_mutant)]
    mutant: Option<Mutant>,
    /// Decides as the AWS backend does: the core's optimistic step, its reads and each plan's
    /// commit a step of their own, instead of the interactive step the embedded backend runs.
    #[arg(long)]
    optimistic: bool,
}

fn parse_mutant(name: &str) -> Result<Mutant, String> {
    Mutant::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Mutant::ALL.iter().map(|m| m.name()).collect();
        format!("no mutant {name}: one of {}", names.join(", "))
    })
}

impl Cli {
    fn options(&self, verbose: bool) -> Options {
        Options {
            steps: self.steps,
            verbose,
            mutant: self.mutant,
            optimistic: self.optimistic,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.seed {
        Some(seed) => one(seed, &cli),
        None => many(&cli),
    }
}

fn one(seed: u64, cli: &Cli) -> ExitCode {
    let options = cli.options(true);
    match sim::run(seed, options) {
        Ok(report) => {
            if cli.trace {
                for line in &report.trace {
                    println!("{line}");
                }
            }
            println!("seed {seed} passed\n{report}");
            ExitCode::SUCCESS
        }
        Err(failure) => {
            println!("{failure}");
            ExitCode::FAILURE
        }
    }
}

fn many(cli: &Cli) -> ExitCode {
    let threads = cli
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let soak = sim::soak(cli.first, cli.seeds, cli.options(false), threads);
    println!(
        "{} seeds in {:.1} s on {threads} threads: {:.0} seeds/s",
        soak.seeds,
        soak.elapsed.as_secs_f64(),
        soak.rate()
    );
    println!("{}", soak.totals);
    match soak.failure {
        Some(failure) => {
            println!(
                "seed {} broke an invariant at step {}: {}",
                failure.seed, failure.at_step, failure.violation
            );
            println!(
                "replay it with: {}",
                sim::replay_command(failure.seed, failure.options)
            );
            ExitCode::FAILURE
        }
        None => ExitCode::SUCCESS,
    }
}
