//! `seatclaimctl`: the operator's tool. It works on the configured backend, like the services.

use anyhow::Context;
use clap::{Parser, Subcommand};
use seatclaim_shared::adapters::aws::{self, AwsNames};
use seatclaim_shared::config::{BackendKind, BackendSettings, TelemetrySettings};
use seatclaim_shared::{Backend, telemetry};

/// Operates a seatclaim deployment. Configured by the same `SEATCLAIM_*` variables as the services.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    backend: BackendSettings,
    #[command(flatten)]
    telemetry: TelemetrySettings,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Creates the queues (with the DLQ redrive policy), tables, indexes and event bus for the
    /// configured prefix, leaving existing ones in place. For emulators and first deploys; on the
    /// embedded backend it creates the data folder and database.
    Init,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    telemetry::init(cli.telemetry.log_format);
    match cli.command {
        Command::Init => init(&cli.backend).await,
    }
}

async fn init(settings: &BackendSettings) -> anyhow::Result<()> {
    match settings.backend {
        BackendKind::Aws => {
            let names = AwsNames::from_settings(&settings.aws);
            let config = aws::sdk_config().await;
            aws::provision(
                &config,
                &names,
                settings.visibility_timeout(),
                settings.max_receive_count(),
            )
            .await
            .context("cannot create the AWS resources")?;
            println!(
                "ready: queues {} and {}, tables {}, {}, {}, {}, {}, bus {}",
                names.queue,
                names.dlq,
                names.events_table,
                names.seats_table,
                names.jobs_table,
                names.idempotency_table,
                names.outbox_table,
                names.event_bus
            );
        }
        BackendKind::Embedded => {
            Backend::open(settings)
                .await
                .context("cannot open the embedded backend")?;
            println!("ready: embedded backend in {}", settings.data_dir.display());
        }
    }
    Ok(())
}
