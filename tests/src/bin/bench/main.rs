//! `seatclaim-bench`: the two benchmark pieces that are not the load generator.
//!
//! - `claim`: the worker's decision without HTTP. Fills a fresh embedded backend with intents (not
//!   timed), then times either the decision alone (`Inventory::claim` on batches already received:
//!   the conditional seat writes, the job transitions and their outbox events, one durable commit
//!   per batch) or the whole worker path (receive, decide, acknowledge) until every intent is
//!   decided. Prints claims per second as JSON.
//! - `readers`: paced readers of a seat map, as the web page reads it (`readers.rs`).
//! - `bare`: an axum server that stores and decides nothing and answers as seatclaim answers
//!   (`bare.rs`): the ceilings the admission, per-core and read-path benchmarks compare the real
//!   endpoints to; with `--durable FILE`, it answers a reservation only once its body is synced
//!   to `FILE` (`durable_log.rs`), the floor under any server that makes a request durable.

mod bare;
mod durable_log;
mod readers;

use seatclaim_runtime::backend;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Parser, Subcommand};
use seatclaim_core::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, NewEvent, SeatRequest, SectionSpec,
};
use seatclaim_core::ports::{ClaimOutcome, Message};
use seatclaim_core::{Backend, app};
use seatclaim_runtime::config::BackendSettings;
use seatclaim_runtime::loops::{Limits, decide_batch};
use serde_json::json;

/// Benchmark helpers for seatclaim (see tests/bench/run.sh).
#[derive(Debug, Parser)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Times the embedded backend's claim step.
    Claim {
        /// Intents to decide.
        #[arg(long, default_value_t = 20_000)]
        intents: u32,
        /// Seats in the event.
        #[arg(long, default_value_t = 2_000)]
        seats: u32,
        /// Every intent wants one of this many seats (0: any seat, uniformly).
        #[arg(long, default_value_t = 0)]
        hot: u32,
        /// What each intent asks for.
        #[arg(long, value_enum, default_value_t = Requests::Exact)]
        requests: Requests,
        /// Intents per receive and claim transaction.
        #[arg(long, default_value_t = 100)]
        batch: usize,
        /// What is timed.
        #[arg(long, value_enum, default_value_t = Timed::Worker)]
        timed: Timed,
        /// Data folder (a fresh one per run).
        #[arg(long)]
        data_dir: std::path::PathBuf,
    },
    /// Reads a seat map as many web pages would: each reader every interval, with If-None-Match.
    Readers {
        /// The seat map's URL.
        #[arg(long)]
        url: String,
        /// How many readers.
        #[arg(long, default_value_t = 1_000)]
        readers: usize,
        /// How often each reader asks, in milliseconds (the page's refresh).
        #[arg(long, default_value_t = 2_000)]
        interval_ms: u64,
        /// How long, in seconds.
        #[arg(long, default_value_t = 10)]
        seconds: u64,
    },
    /// Serves the bare handlers (`bare.rs`).
    Bare {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8090")]
        listen: SocketAddr,
        /// Seats in the bare seat map (sections of 1,000, named as the loadgen names them).
        #[arg(long, default_value_t = 10_000)]
        seats: usize,
        /// Answers a reservation only once its body is appended to this file and synced.
        #[arg(long)]
        durable: Option<std::path::PathBuf>,
    },
}

/// What each intent of a claim run asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Requests {
    /// One named seat (of the pool `--hot` sets).
    Exact,
    /// Two seats of the section, the best first.
    Section,
    /// Two seats together in one row.
    Together,
}

/// The part of the claim step a run times.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Timed {
    /// `Inventory::claim` alone, on intents received beforehand.
    Decision,
    /// Receive, decide and acknowledge, as the worker loop does.
    Worker,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match Cli::parse().command {
        Command::Claim {
            intents,
            seats,
            hot,
            requests,
            batch,
            timed,
            data_dir,
        } => {
            let backend = filled(intents, seats, (hot, requests), data_dir).await?;
            let started = Instant::now();
            let tally = match timed {
                Timed::Decision => decide(&backend, batch).await?,
                Timed::Worker => work(&backend, batch).await?,
            };
            let seconds = (started.elapsed() - tally.untimed).as_secs_f64();
            let pool = if hot > 0 { hot } else { seats };
            println!(
                "{}",
                json!({"system": "seatclaim-embedded", "timed": format!("{timed:?}").to_lowercase(),
                       "intents": intents, "seats": pool, "requests": format!("{requests:?}").to_lowercase(), "batch": batch, "held": tally.held, "rejected": tally.rejected,
                       "seconds": seconds, "claims_per_sec": f64::from(intents) / seconds})
            );
            Ok(())
        }
        Command::Readers {
            url,
            readers,
            interval_ms,
            seconds,
        } => {
            let (interval, duration) = (
                Duration::from_millis(interval_ms),
                Duration::from_secs(seconds),
            );
            readers::run(url, readers, interval, duration).await
        }
        Command::Bare {
            listen,
            seats,
            durable,
        } => {
            let log = durable.as_deref().map(durable_log::DurableLog::open);
            bare::serve(listen, seats, log.transpose()?).await
        }
    }
}

/// A fresh embedded backend with one event and `intents` admitted intents, each for one seat of
/// the `hot` pool (all seats if 0) or for two seats of the section.
async fn filled(
    intents: u32,
    seats: u32,
    (hot, requests): (u32, Requests),
    data_dir: std::path::PathBuf,
) -> anyhow::Result<Arc<Backend>> {
    let backend = seatclaim_e2e::running(
        backend::open(&BackendSettings::in_folder(data_dir))
            .await
            .context("open")?,
    );
    let event = NewEvent::parse(EventSpec {
        event_id: "bench".into(),
        name: "bench".into(),
        hold_seconds: Some(3_600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "A".into(),
            rows: seats.div_ceil(100),
            seats_per_row: 100,
            price: None,
        }]),
        // No per-buyer limit, as the peers compared have none.
        max_seats_per_buyer: Some(0),
        ..EventSpec::default()
    })?;
    backend.catalog.create_event(&event).await?;
    let pool = if hot > 0 { hot } else { seats };
    let mut admitting = tokio::task::JoinSet::new();
    let backend = Arc::new(backend);
    for n in 0..intents {
        let seat = fastrand::u32(0..pool);
        let (buyer_id, key) = (
            BuyerId::parse(&format!("b{n}"))?,
            IdempotencyKey::parse(&format!("k{n}"))?,
        );
        let intent = Intent {
            access: None,
            job_id: backend.admissions.new_job_id(&buyer_id, &key),
            event_id: EventId::parse("bench")?,
            buyer_id,
            request: match requests {
                Requests::Exact => {
                    SeatRequest::exact(&[format!("A-{}-{}", seat / 100 + 1, seat % 100 + 1)])?
                }
                Requests::Section => SeatRequest::in_section("A", 2)?,
                Requests::Together => SeatRequest::together_in("A", 2)?,
            },
            accepted_at: backend.clock.now(),
            opens_at: None,
        };
        let backend = Arc::clone(&backend);
        admitting.spawn(async move { backend.admissions.admit(&key, &intent).await });
        if admitting.len() >= 64 {
            admitting.join_next().await.context("admission task")???;
        }
    }
    while let Some(done) = admitting.join_next().await {
        done??;
    }
    Ok(backend)
}

/// What a timed run decided, and how much of its time was preparation rather than the step itself.
#[derive(Default)]
struct Tally {
    held: usize,
    rejected: usize,
    untimed: Duration,
}

/// Receives every intent (untimed), then times the decisions alone.
async fn decide(backend: &Backend, batch: usize) -> anyhow::Result<Tally> {
    let receiving = Instant::now();
    let mut batches = Vec::new();
    loop {
        let deliveries = backend.queue.receive(batch, Duration::ZERO).await?;
        if deliveries.is_empty() {
            break;
        }
        let intents = deliveries
            .into_iter()
            .map(|d| match d.message {
                Message::Intent(intent) => Ok(intent),
                Message::Undecodable { error, .. } => Err(anyhow::anyhow!(error)),
            })
            .collect::<anyhow::Result<Vec<Intent>>>()?;
        batches.push(intents);
    }
    let mut tally = Tally {
        untimed: receiving.elapsed(),
        ..Tally::default()
    };
    for intents in batches {
        for outcome in app::claim(backend, &intents, backend.clock.now()).await? {
            match outcome {
                ClaimOutcome::Held { .. } => tally.held += 1,
                ClaimOutcome::Rejected { .. } => tally.rejected += 1,
                ClaimOutcome::AlreadyDecided(_) => {
                    anyhow::bail!("a fresh intent was already decided")
                }
                ClaimOutcome::Waitlisted => anyhow::bail!("the bench's event keeps no waitlist"),
            }
        }
    }
    Ok(tally)
}

/// Runs the worker loop's path until the queue is empty: each batch's acknowledgements go with
/// the next receive, as in the worker.
async fn work(backend: &Backend, batch: usize) -> anyhow::Result<Tally> {
    let mut tally = Tally::default();
    let mut decided = Vec::new();
    loop {
        let deliveries = backend
            .queue
            .acknowledge_and_receive(&decided, batch, Duration::ZERO)
            .await?;
        if deliveries.is_empty() {
            break;
        }
        let outcome;
        (outcome, decided) = decide_batch(backend, deliveries, Limits::attempts(5)).await;
        tally.held += outcome.held;
        tally.rejected += outcome.rejected;
    }
    Ok(tally)
}
