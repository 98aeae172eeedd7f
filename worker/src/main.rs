//! `seatclaim-worker`: the claim worker as its own process, as it runs on ECS Fargate.

use anyhow::Context;
use clap::Parser;
use seatclaim_runtime::cli::{BackendArgs, TelemetryArgs};
use seatclaim_runtime::loops::{Worker, WorkerSettings, serve_metrics};
use seatclaim_runtime::{backend, shutdown, telemetry};
use tokio_util::sync::CancellationToken;

/// mimalloc, as the API uses (see its `main`).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Decides reservation intents from the queue. Configured by `SEATCLAIM_*` environment variables.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    worker: WorkerSettings,
    #[command(flatten)]
    telemetry: TelemetryArgs,
    /// Address of the worker's `/metrics` and `/healthz` endpoint.
    #[arg(
        long,
        env = "SEATCLAIM_METRICS_LISTEN",
        default_value = "127.0.0.1:9090"
    )]
    metrics_listen: std::net::SocketAddr,
}

fn main() -> anyhow::Result<()> {
    seatclaim_runtime::executor::build()
        .context("cannot start the runtime")?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    telemetry::init(cli.telemetry.log_format);
    #[cfg_attr(not(feature = "aws"), allow(unused_mut))]
    let mut settings = cli.backend.settings();
    // On AWS the workers settle the holds the API is asked to settle.
    #[cfg(feature = "aws")]
    {
        settings.aws.settlements = seatclaim_runtime::config::Settlements::ServedHere;
    }
    let backend = backend::open(&settings)
        .await
        .context("cannot open the backend")?;
    let stop = CancellationToken::new();
    let metrics = serve_metrics(cli.metrics_listen, stop.clone())
        .await
        .with_context(|| format!("cannot listen on {}", cli.metrics_listen))?;
    let worker = tokio::spawn(Worker::new(backend, cli.worker, &settings).run(stop.clone()));
    tracing::info!(backend = settings.backend.as_str(), %metrics, "worker started");
    shutdown::signal().await;
    stop.cancel();
    worker.await.context("the worker task failed")?;
    Ok(())
}
