//! `seatclaim-api`: the admission and status API; locally it also runs the worker in-process.

use anyhow::Context;
use clap::Parser;
use seatclaim_api::{ApiSettings, Application};
use seatclaim_shared::config::{BackendSettings, TelemetrySettings};
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
    let backend = Backend::open(&cli.backend).context("cannot open the backend")?;
    let worker = cli.api.embedded_worker.then(|| {
        Worker::new(
            backend.clone(),
            cli.worker.clone(),
            cli.backend.max_attempts,
        )
    });
    let app = Application::build(backend, cli.api.listen, worker, cli.api.shutdown_grace())
        .await
        .with_context(|| format!("cannot listen on {}", cli.api.listen))?;
    let address = app.local_addr().context("cannot read the bound address")?;
    tracing::info!(%address, data_dir = %cli.backend.data_dir.display(), embedded_worker = cli.api.embedded_worker, "listening");
    app.run_until_stopped(shutdown::signal())
        .await
        .context("the server failed")?;
    Ok(())
}
