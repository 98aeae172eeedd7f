//! `seatclaim-loadgen`: simulates buyers against any seatclaim base URL (embedded, emulator, or a
//! real deployment) and reports throughput, time to decision, outcomes and the invariants.
//!
//! Buyers do what real clients do: POST an intent with an Idempotency-Key (with `--prefer-wait`,
//! asking for the decision in the answer), poll the status URL (with `?wait=` long polling and
//! backoff) until the job is decided, and sometimes confirm or cancel. Closed loop (`--concurrency N` buyers, each starting again when done) or open loop
//! (`--rate R` new buyers per second, whatever the service's speed).

/// mimalloc, as the API has: a buyer allocates and frees per request, and the load generator's
/// core is the ceiling of every closed loop pinned to one core.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod buyer;
mod report;
mod token;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use tokio::sync::Semaphore;

use buyer::{Buyer, Mix, Shared};

/// Load generator for seatclaim.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    /// Base URL of the service.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    url: String,
    /// How long to generate load, e.g. 30s or 2m.
    #[arg(long, value_parser = parse_duration, default_value = "30s")]
    duration: Duration,
    /// Closed loop: this many buyers at once, each starting again when done.
    #[arg(long, conflicts_with = "rate")]
    concurrency: Option<usize>,
    /// Open loop: this many new buyers per second.
    #[arg(long)]
    rate: Option<f64>,
    /// Seats of the fresh event to create (ignored with --event).
    #[arg(long, default_value_t = 10_000)]
    seats: u32,
    /// Use this existing event (sections are read from its seat map) instead of creating one.
    #[arg(long)]
    event: Option<String>,
    /// Share of exact single-seat, exact multi-seat and any-in-section requests.
    #[arg(long, value_parser = Mix::parse, default_value = "60,20,20")]
    mix: Mix,
    /// Share of buyers who want one of the few hot seats (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    hot_share: f64,
    /// How many seats are hot.
    #[arg(long, default_value_t = 10)]
    hot_seats: usize,
    /// One-request mode: send `Prefer: wait=SECS` on every reservation, so that a decision made
    /// within SECS comes back in the POST's own answer (200) and needs no status request; a 202
    /// is followed by polls as without it.
    #[arg(long, value_name = "SECS")]
    prefer_wait: Option<u64>,
    /// Share of buyers who confirm a hold (the rest of those holding may cancel).
    #[arg(long, default_value_t = 0.3)]
    confirm: f64,
    /// Share of buyers who cancel a hold.
    #[arg(long, default_value_t = 0.1)]
    cancel: f64,
    /// Authentication on: sign each buyer's bearer token (and the admin token that creates the
    /// event) with this HS256 secret, the API's `SEATCLAIM_AUTH_HS256_SECRET`.
    #[arg(long)]
    hs256_secret: Option<String>,
    /// Write the report as JSON to this file.
    #[arg(long)]
    json: Option<std::path::PathBuf>,
    /// Write an SVG plot of time to decision over the run to this file.
    #[arg(long)]
    plot: Option<std::path::PathBuf>,
    /// No progress bar (for scripts and CI logs).
    #[arg(long)]
    quiet: bool,
}

/// How buyers are started: at most `buyers` at once, one every `interval` if set, for `duration`.
struct Pace {
    buyers: usize,
    interval: Option<Duration>,
    duration: Duration,
}

/// Starts buyers at `pace` and waits for the last of them (at most 60 s after the run); returns
/// how long it started them. A task of its own, on the runtime's workers: run by the main thread,
/// which is not one of them, each buyer that finished would wake it, a switch between threads
/// per decision on the load generator's core (a sixth of its CPU, pinned to one core).
async fn generate(
    shared: Arc<Shared>,
    pace: Pace,
    progress: ProgressBar,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let mut buyers = tokio::task::JoinSet::new();
    let in_flight = Arc::new(Semaphore::new(pace.buyers));
    let mut next_start = Instant::now();
    let mut n = 0_u64;
    while started.elapsed() < pace.duration {
        let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
            break;
        };
        if let Some(interval) = pace.interval {
            next_start += interval;
            tokio::time::sleep_until(next_start.into()).await;
        }
        let buyer = Buyer::new(Arc::clone(&shared), n)?;
        n += 1;
        buyers.spawn(async move {
            buyer.run().await;
            drop(permit);
        });
        // A finished buyer's task stays in the set until joined: without this, the set would
        // hold one per decision of the run, and fresh memory for them cost page faults.
        while buyers.try_join_next().is_some() {}
        if n.is_multiple_of(64) {
            progress.set_position(started.elapsed().as_secs());
            progress.set_message(shared.summary(started.elapsed()));
        }
    }
    let generating = started.elapsed();
    progress.set_message("waiting for the last decisions");
    let drained = tokio::time::timeout(Duration::from_secs(60), async {
        while buyers.join_next().await.is_some() {}
    })
    .await;
    progress.finish_and_clear();
    if drained.is_err() {
        eprintln!("some buyers were still waiting after 60 s; they count as undecided");
    }
    Ok(generating)
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let span: jiff::Span = text.parse().map_err(|e| format!("{text:?}: {e}"))?;
    let signed = span
        .to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .map_err(|e| e.to_string())?;
    Duration::try_from(signed).map_err(|e| e.to_string())
}

#[tokio::main]
async fn main() -> anyhow::Result<std::process::ExitCode> {
    let cli = Cli::parse();
    // No redirects and no retries: a buyer's requests go to the service and count as they are
    // answered, and both layers cost CPU on every request.
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(1024)
        .redirect(reqwest::redirect::Policy::none())
        .retry(reqwest::retry::never())
        .build()?;
    let url = cli.url.trim_end_matches('/').to_owned();
    let base = reqwest::Url::parse(&url).with_context(|| format!("--url {url}"))?;
    let signer = cli.hs256_secret.as_deref().map(token::Signer::new);
    let (event_id, seats) = match &cli.event {
        Some(event) => (
            event.clone(),
            buyer::read_seats(&client, &url, event).await?,
        ),
        None => buyer::create_event(&client, &url, cli.seats, signer.as_ref()).await?,
    };
    if seats.is_empty() {
        bail!("the event has no seats");
    }
    let shared = Arc::new(Shared::new(client, base, event_id, seats, signer, &cli));
    let progress = if cli.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(cli.duration.as_secs())
    };
    progress.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:40}] {msg}")
            .context("progress style")?,
    );
    let pace = Pace {
        buyers: cli.concurrency.unwrap_or(20_000),
        interval: cli
            .rate
            .map(|rate| Duration::from_secs_f64(1.0 / rate.max(0.001))),
        duration: cli.duration,
    };
    let generating = tokio::spawn(generate(Arc::clone(&shared), pace, progress))
        .await
        .context("the buyers' task")??;
    let invariants = buyer::check_invariants(&shared).await?;
    let report = report::Report::new(&shared, generating, invariants.is_empty());
    println!("{}", report.text());
    for problem in &invariants {
        println!("INVARIANT BROKEN: {problem}");
    }
    if let Some(path) = &cli.json {
        let mut value = report.json();
        value["invariant_violations"] = json!(invariants);
        std::fs::write(path, serde_json::to_vec_pretty(&value)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &cli.plot {
        report::plot(&shared, path)?;
    }
    Ok(if invariants.is_empty() {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}
