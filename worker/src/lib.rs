//! The claim worker's process, as a library: its settings, the backend it opens and its life
//! until a signal stops it. `seatclaim-worker` (`main.rs`) runs it with the backend as opened;
//! the test crate runs the same process with fault injection wrapped around the backend
//! ([`BackendHook`]), so the shipped binary carries no fault injection and no copy of this code.

use anyhow::Context;
use clap::Parser;
use seatclaim_runtime::cli::{BackendArgs, BackendHook, Service, TelemetryArgs};
use seatclaim_runtime::loops::{BackendTasks, Worker, WorkerSettings, serve_metrics};
use seatclaim_runtime::{backend, executor, shutdown, telemetry};
use tokio_util::sync::CancellationToken;

/// Decides reservation intents from the queue. Configured by `SEATCLAIM_*` environment variables.
#[derive(Debug, Parser)]
#[command(name = "seatclaim-worker", version)]
struct Cli<H: BackendHook> {
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
    #[command(flatten)]
    hook: H,
}

/// Runs the worker process from its arguments and environment until SIGTERM or Ctrl-C, on the
/// backend its settings open as `H` wraps it: the whole of a worker binary's `main`.
pub fn run<H: BackendHook>() -> anyhow::Result<()> {
    executor::run(serve(Cli::<H>::parse())).context("cannot start the runtime")?
}

async fn serve<H: BackendHook>(cli: Cli<H>) -> anyhow::Result<()> {
    telemetry::init(cli.telemetry.log_format);
    let settings = cli.backend.settings_of(Service::Worker);
    let opened = backend::open(&settings)
        .await
        .context("cannot open the backend")?;
    let tasks = BackendTasks::start(opened.tasks);
    let backend = cli.hook.wrap(opened.backend);
    let stop = CancellationToken::new();
    let metrics = serve_metrics(cli.metrics_listen, stop.clone())
        .await
        .with_context(|| format!("cannot listen on {}", cli.metrics_listen))?;
    let worker = tokio::spawn(Worker::new(backend, cli.worker, &settings).run(stop.clone()));
    tracing::info!(backend = settings.backend.as_str(), %metrics, "worker started");
    shutdown::signal().await;
    stop.cancel();
    let stopped = worker.await;
    // After the claim loops: the settlements the API sent while they drained are still served,
    // and the line counts of their last decisions are added.
    tasks.stop().await;
    stopped.context("the worker task failed")
}
