//! `seatclaimctl`: the operator's tool. It works on the configured backend, like the services,
//! and every command that a script might read has `--json`.

mod audit;
mod dlq;
mod events;
mod jobs;
mod restore;
mod token;

use seatclaim_runtime::backend;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use seatclaim_core::Backend;
use seatclaim_runtime::cli::{BackendArgs, TelemetryArgs};
use seatclaim_runtime::config::BackendSettings;
use seatclaim_runtime::loops::BackendTasks;
use seatclaim_runtime::telemetry;

/// Operates a seatclaim deployment. Configured by the same `SEATCLAIM_*` variables as the services.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    telemetry: TelemetryArgs,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Creates the queues (with the DLQ redrive policy), tables, indexes and event bus for the
    /// configured prefix, leaving existing ones in place. For emulators and first deploys; on the
    /// embedded backend it creates the data folder and database.
    Init,
    /// Brings the stored data to this version's schema, then says what it did; safe to run
    /// again. On AWS it creates this version's resources and copies what an older version
    /// stored (it scans the old tables, so run it with credentials that may); the embedded
    /// backend migrates its database file on every start, and this only opens it (as `init`).
    Migrate,
    /// Creates events (the operator's way on a stack, whose API does not).
    #[command(subcommand)]
    Events(events::EventsCommand),
    /// Inspects, replays and purges dead-lettered intents.
    #[command(subcommand)]
    Dlq(dlq::DlqCommand),
    /// Looks at jobs.
    #[command(subcommand)]
    Jobs(jobs::JobsCommand),
    /// Checks an event's invariants (no seat held or sold twice, every live job owns its seats,
    /// no seat taken without a live job, nothing PENDING too long, no stuck outbox), and with
    /// `--events FILE` a log of published reservation events (no seat sold to two jobs); exits 1
    /// and prints what is wrong if any is broken.
    Audit(audit::AuditArgs),
    /// Releases lapsed holds now, as the worker's sweeper does, for a stuck deployment.
    Sweep,
    /// Writes a consistent copy of the embedded database to a new file, while the services run
    /// (SQLite's online backup API). On AWS, DynamoDB's point-in-time recovery is the backup.
    Backup {
        /// The backup file to create (never overwritten).
        path: std::path::PathBuf,
    },
    /// Replaces the embedded database with a backup, then re-applies the reservation events
    /// `events.jsonl` published after the backup's moment (sales, holds, cancels, expiries), and
    /// says what it re-applied. Refused while the API, a worker or another seatclaimctl has the
    /// data folder open: stop them first. Restoring the same backup again gives the same state.
    Restore {
        /// The backup file (written by `seatclaimctl backup`).
        path: std::path::PathBuf,
        /// Print JSON: the restore, the jobs re-applied and those left to reconcile.
        #[arg(long)]
        json: bool,
    },
    /// Prints an HS256 bearer token for a buyer, signed with `SEATCLAIM_AUTH_HS256_SECRET`, for
    /// development (production tokens come from the identity provider).
    Token(token::TokenArgs),
}

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    telemetry::init(cli.telemetry.log_format);
    let settings = cli.backend.settings();
    Ok(match cli.command {
        Command::Init => said(
            backend::provision(&settings)
                .await
                .context("cannot create the backend's resources")?,
        ),
        Command::Migrate => said(
            backend::migrate(&settings)
                .await
                .context("the migration failed")?,
        ),
        Command::Token(args) => {
            token::run(&args)?;
            ExitCode::SUCCESS
        }
        // Neither opens the backend: a restore needs the folder to itself.
        Command::Backup { path } => {
            said(backend::backup(&settings, &path).context("the backup failed")?)
        }
        Command::Restore { path, json } => {
            let restored = backend::restore(&settings, &path).context("the restore failed")?;
            restore::report(json, &restored);
            ExitCode::SUCCESS
        }
        Command::Events(command) => {
            on_backend(&settings, async |b| events::run(b, command).await).await?
        }
        Command::Dlq(command) => {
            on_backend(&settings, async |b| dlq::run(b, command).await).await?
        }
        Command::Jobs(command) => {
            on_backend(&settings, async |b| jobs::run(b, command).await).await?
        }
        Command::Audit(args) => on_backend(&settings, async |b| audit::run(b, args).await).await?,
        Command::Sweep => on_backend(&settings, sweep).await?,
    })
}

/// Runs `command` on the configured backend, with the backend's background tasks running
/// beside it as in the services, and stopped once it is done.
async fn on_backend<F>(settings: &BackendSettings, command: F) -> anyhow::Result<ExitCode>
where
    F: AsyncFnOnce(&Backend) -> anyhow::Result<ExitCode>,
{
    let opened = backend::open(settings)
        .await
        .context("cannot open the backend")?;
    let tasks = BackendTasks::start(opened.tasks);
    let done = command(&opened.backend).await;
    tasks.stop().await;
    done
}

/// Releases lapsed holds now, as the worker's sweeper does.
async fn sweep(backend: &Backend) -> anyhow::Result<ExitCode> {
    let released = seatclaim_core::app::sweep_once(backend)
        .await
        .context("the sweep failed")?;
    Ok(said(format!("released {released} lapsed holds")))
}

/// Prints a command's one line of outcome; it succeeded.
fn said(outcome: impl std::fmt::Display) -> ExitCode {
    println!("{outcome}");
    ExitCode::SUCCESS
}

/// Parses durations like `30s`, `15m`, `2h` or `7d` (a day is 24 hours here).
fn parse_duration(text: &str) -> Result<jiff::SignedDuration, String> {
    let span: jiff::Span = text
        .parse()
        .map_err(|e| format!("{text:?} is not a duration like 15m or 7d: {e}"))?;
    span.to_duration(jiff::SpanRelativeTo::days_are_24_hours())
        .map_err(|e| e.to_string())
}

/// Prints `value` as JSON, or `text` for people.
fn emit(json: bool, value: &serde_json::Value, text: impl FnOnce() -> String) {
    if json {
        println!("{value}");
    } else {
        println!("{}", text());
    }
}
