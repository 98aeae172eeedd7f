//! `seatclaimctl dlq`: what the dead-letter queue holds, replaying it, purging it.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{Intent, JobId};
use seatclaim_shared::ports::DeadLetter;
use serde_json::{Value, json};

use super::{emit, parse_duration};

/// The most dead letters one command reads.
const MAX_LETTERS: usize = 10_000;
/// How long the letters a command is about to act on stay reserved (SQS hides what it lists).
const ACTING_HOLD: Duration = Duration::from_secs(120);
/// A mere listing hides nothing.
const LISTING_HOLD: Duration = Duration::ZERO;

#[derive(Debug, Subcommand)]
pub(super) enum DlqCommand {
    /// Lists dead-lettered intents: job, buyer, event, seats, receive count, first and last failure, age.
    List {
        /// Print JSON lines instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Moves dead-lettered intents back to the queue. Their FAILED jobs become PENDING again and
    /// are decided once; an intent whose job was decided otherwise changes nothing.
    Replay(ReplayArgs),
    /// Deletes dead-lettered intents older than a given age, for good.
    Purge {
        /// Only those dead-lettered longer ago than this (e.g. 7d, 12h).
        #[arg(long, value_parser = parse_duration)]
        older_than: jiff::SignedDuration,
        /// Confirms the deletion; without it nothing is deleted.
        #[arg(long)]
        yes: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub(super) struct ReplayArgs {
    /// Replay the intents of these jobs.
    #[arg(long = "job", value_name = "ID", required_unless_present = "all")]
    jobs: Vec<String>,
    /// Replay every dead-lettered intent.
    #[arg(long, conflicts_with = "jobs")]
    all: bool,
    /// Show what would be replayed, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub(super) async fn run(backend: &Backend, command: DlqCommand) -> anyhow::Result<ExitCode> {
    match command {
        DlqCommand::List { json } => list(backend, json).await,
        DlqCommand::Replay(args) => replay(backend, args).await,
        DlqCommand::Purge {
            older_than,
            yes,
            json,
        } => purge(backend, older_than, yes, json).await,
    }
}

/// A dead letter with what the job record adds (buyer, event, seats, failures).
async fn describe(backend: &Backend, letter: &DeadLetter) -> anyhow::Result<Value> {
    let intent: Option<Intent> = serde_json::from_str(&letter.body).ok();
    let job = match letter.job_id {
        Some(id) => backend.jobs.job(id).await?,
        None => None,
    };
    let age = backend.clock.now().duration_since(letter.dead_lettered_at);
    Ok(json!({
        "job_id": letter.job_id,
        "status": job.as_ref().map(|j| j.status),
        "buyer_id": intent.as_ref().map(|i| i.buyer_id.as_str()),
        "event_id": intent.as_ref().map(|i| i.event_id.as_str()),
        "request": intent.as_ref().map(|i| &i.request),
        "receive_count": letter.receive_count,
        "first_failure": job.as_ref().and_then(|j| j.first_error.clone()).or_else(|| letter.reason.clone()),
        "last_failure": letter.reason,
        "dead_lettered_at": letter.dead_lettered_at,
        "age_seconds": age.as_secs(),
    }))
}

fn line(row: &Value) -> String {
    let text = |key: &str| row[key].as_str().unwrap_or("-").to_owned();
    format!(
        "{}  {}  buyer {}  event {}  {}  received {}x  age {}s\n    first failure: {}\n    last failure:  {}",
        text("job_id"),
        text("status"),
        text("buyer_id"),
        text("event_id"),
        row["request"],
        row["receive_count"],
        row["age_seconds"],
        text("first_failure"),
        text("last_failure"),
    )
}

async fn list(backend: &Backend, json: bool) -> anyhow::Result<ExitCode> {
    let letters = backend
        .queue
        .dead_letters(MAX_LETTERS, LISTING_HOLD)
        .await
        .context("cannot read the DLQ")?;
    if letters.is_empty() && !json {
        println!("the dead-letter queue is empty");
    }
    for letter in &letters {
        let row = describe(backend, letter).await?;
        emit(json, &row, || line(&row));
    }
    Ok(ExitCode::SUCCESS)
}

async fn replay(backend: &Backend, args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let wanted: Vec<JobId> = args
        .jobs
        .iter()
        .map(|id| JobId::parse(id).with_context(|| format!("{id:?} is not a job id")))
        .collect::<anyhow::Result<_>>()?;
    let hold = if args.dry_run {
        LISTING_HOLD
    } else {
        ACTING_HOLD
    };
    let letters = backend
        .queue
        .dead_letters(MAX_LETTERS, hold)
        .await
        .context("cannot read the DLQ")?;
    let (chosen, others): (Vec<DeadLetter>, Vec<DeadLetter>) = letters
        .into_iter()
        .partition(|l| args.all || l.job_id.is_some_and(|id| wanted.contains(&id)));
    backend
        .queue
        .release(&others)
        .await
        .context("cannot release the other dead letters")?;
    let missing: Vec<&JobId> = wanted
        .iter()
        .filter(|id| !chosen.iter().any(|l| l.job_id == Some(**id)))
        .collect();
    if !missing.is_empty() && !args.all {
        bail!("not in the dead-letter queue: {missing:?}");
    }
    let mut reopened = 0;
    if !args.dry_run {
        // Reopen first, then move: a worker that got the intent before its job was PENDING again
        // would take it for a decided job and drop it.
        let now = backend.clock.now();
        for job_id in chosen.iter().filter_map(|l| l.job_id) {
            reopened += usize::from(backend.jobs.reopen(job_id, now).await?);
        }
        backend
            .queue
            .redrive(&chosen)
            .await
            .context("cannot move the intents back")?;
    }
    let jobs: Vec<Option<JobId>> = chosen.iter().map(|l| l.job_id).collect();
    let summary = json!({"dry_run": args.dry_run, "replayed": chosen.len(), "reopened": reopened, "jobs": jobs});
    emit(args.json, &summary, || {
        let verb = if args.dry_run {
            "would replay"
        } else {
            "replayed"
        };
        format!(
            "{verb} {} intents ({reopened} FAILED jobs reopened as PENDING)",
            chosen.len()
        )
    });
    Ok(ExitCode::SUCCESS)
}

async fn purge(
    backend: &Backend,
    older_than: jiff::SignedDuration,
    yes: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let hold = if yes { ACTING_HOLD } else { LISTING_HOLD };
    let letters = backend
        .queue
        .dead_letters(MAX_LETTERS, hold)
        .await
        .context("cannot read the DLQ")?;
    let now = backend.clock.now();
    let (old, recent): (Vec<DeadLetter>, Vec<DeadLetter>) = letters
        .into_iter()
        .partition(|l| now.duration_since(l.dead_lettered_at) > older_than);
    backend
        .queue
        .release(&recent)
        .await
        .context("cannot release the recent dead letters")?;
    if !yes {
        eprintln!(
            "{} dead letters are older than {older_than:#}; add --yes to delete them for good",
            old.len()
        );
        return Ok(ExitCode::from(2));
    }
    backend.queue.purge(&old).await.context("cannot purge")?;
    emit(json, &json!({"purged": old.len()}), || {
        format!("purged {} dead letters", old.len())
    });
    Ok(ExitCode::SUCCESS)
}
