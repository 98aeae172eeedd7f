//! `seatclaim-api`: the admission and status API; locally it also runs the worker in-process.

use anyhow::Context;
use clap::Parser;
use seatclaim_api::{ApiSettings, Application};
use seatclaim_shared::config::{BackendKind, BackendSettings, TelemetrySettings};
use seatclaim_shared::{Backend, shutdown, telemetry};
use seatclaim_worker::{Worker, WorkerSettings};

/// Serves the reservation API. Configured by `SEATCLAIM_*` environment variables.
#[derive(Debug, Parser)]
#[command(version)]
struct Cli {
    #[command(flatten)]
    api: ApiSettings,
    #[command(flatten)]
    backend: BackendSettings,
    #[command(flatten)]
    worker: WorkerSettings,
    #[command(flatten)]
    telemetry: TelemetrySettings,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    telemetry::init(cli.telemetry.log_format);
    let backend = Backend::open(&cli.backend)
        .await
        .context("cannot open the backend")?;
    // On AWS the worker always runs as its own service (its Fargate shape), never in the API.
    let in_process = cli.api.embedded_worker && cli.backend.backend == BackendKind::Embedded;
    let worker = in_process.then(|| Worker::new(backend.clone(), cli.worker.clone(), &cli.backend));
    let app = Application::build(backend, cli.api.listen, worker, cli.api.shutdown_grace())
        .await
        .with_context(|| format!("cannot listen on {}", cli.api.listen))?;
    let address = app.local_addr().context("cannot read the bound address")?;
    tracing::info!(%address, data_dir = %cli.backend.data_dir.display(), backend = ?cli.backend.backend, in_process_worker = in_process, "listening");
    app.run_until_stopped(shutdown::signal())
        .await
        .context("the server failed")?;
    Ok(())
}
