//! `seatclaimctl dlq`: prints what `app::dead_letters` lists, replays and purges.

use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use seatclaim_core::Backend;
use seatclaim_core::app::dead_letters::{self, DeadLetterView, Selection};
use seatclaim_core::domain::JobId;
use serde_json::{Value, json};

use super::{emit, parse_duration};

#[derive(Debug, Subcommand)]
pub(super) enum DlqCommand {
    /// Lists dead-lettered intents: job, buyer, event, seats, receive count, first and last failure, age.
    List {
        /// Print one JSON array instead of a table (`[]` when the queue is empty).
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

/// A dead letter as a row: what the job record adds (buyer, event, seats, failures).
fn row(view: &DeadLetterView, now: jiff::Timestamp) -> Value {
    let (letter, intent, job) = (&view.letter, view.intent.as_ref(), view.job.as_ref());
    let age = now.duration_since(letter.dead_lettered_at);
    json!({
        "job_id": letter.job_id,
        "status": job.map(|j| j.status),
        "buyer_id": intent.map(|i| i.buyer_id.as_str()),
        "event_id": intent.map(|i| i.event_id.as_str()),
        "request": intent.map(|i| &i.request),
        "receive_count": letter.receive_count,
        "first_failure": job.and_then(|j| j.first_error.clone()).or_else(|| letter.reason.clone()),
        "last_failure": letter.reason,
        "dead_lettered_at": letter.dead_lettered_at,
        "age_seconds": age.as_secs(),
    })
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
    let views = dead_letters::list(backend)
        .await
        .context("cannot read the DLQ")?;
    let now = backend.clock.now();
    let rows: Vec<Value> = views.iter().map(|view| row(view, now)).collect();
    emit(json, &Value::Array(rows.clone()), || {
        if rows.is_empty() {
            return "the dead-letter queue is empty".to_owned();
        }
        rows.iter().map(line).collect::<Vec<_>>().join("\n")
    });
    Ok(ExitCode::SUCCESS)
}

async fn replay(backend: &Backend, args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let selection = if args.all {
        Selection::All
    } else {
        Selection::Jobs(
            args.jobs
                .iter()
                .map(|id| JobId::parse(id).with_context(|| format!("{id:?} is not a job id")))
                .collect::<anyhow::Result<_>>()?,
        )
    };
    let replayed = dead_letters::replay(backend, &selection, args.dry_run)
        .await
        .context("cannot replay the dead letters")?;
    let (count, reopened) = (replayed.jobs.len(), replayed.reopened);
    let summary = json!({"dry_run": args.dry_run, "replayed": count, "reopened": reopened, "jobs": replayed.jobs});
    emit(args.json, &summary, || {
        let verb = if args.dry_run {
            "would replay"
        } else {
            "replayed"
        };
        format!("{verb} {count} intents ({reopened} FAILED jobs reopened as PENDING)")
    });
    Ok(ExitCode::SUCCESS)
}

async fn purge(
    backend: &Backend,
    older_than: jiff::SignedDuration,
    yes: bool,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let purged = dead_letters::purge(backend, older_than, yes)
        .await
        .context("cannot purge the DLQ")?;
    if !purged.deleted {
        eprintln!(
            "{} dead letters are older than {older_than:#}; add --yes to delete them for good",
            purged.old
        );
        return Ok(ExitCode::from(2));
    }
    emit(json, &json!({"purged": purged.old}), || {
        format!("purged {} dead letters", purged.old)
    });
    Ok(ExitCode::SUCCESS)
}
