//! The API's process: its settings, the backend it opens, the in-process worker it may run, and
//! its life until a signal stops it. `seatclaim-api` (`main.rs`) runs it with the backend as
//! opened; the test crate runs the same process with fault injection wrapped around the backend
//! ([`BackendHook`]), so the shipped binary carries no fault injection and no copy of this code.

use anyhow::Context;
use clap::Parser;

use crate::{Access, ApiSettings, AppState, Application};
use seatclaim_runtime::cli::{BackendArgs, BackendHook, Service, TelemetryArgs};
use seatclaim_runtime::config::BackendKind;
use seatclaim_runtime::loops::{BackendTasks, Worker, WorkerSettings};
use seatclaim_runtime::{backend, executor, shutdown, telemetry};

/// Serves the reservation API. Configured by `SEATCLAIM_*` environment variables.
#[derive(Debug, Parser)]
#[command(name = "seatclaim-api", version)]
struct Cli<H: BackendHook> {
    #[command(flatten)]
    api: ApiSettings,
    #[command(flatten)]
    backend: BackendArgs,
    #[command(flatten)]
    worker: WorkerSettings,
    #[command(flatten)]
    telemetry: TelemetryArgs,
    #[command(flatten)]
    hook: H,
}

/// Runs the API process from its arguments and environment until SIGTERM or Ctrl-C, on the
/// backend its settings open as `H` wraps it: the whole of an API binary's `main`.
pub fn run<H: BackendHook>() -> anyhow::Result<()> {
    executor::run(serve(Cli::<H>::parse())).context("cannot start the runtime")?
}

async fn serve<H: BackendHook>(cli: Cli<H>) -> anyhow::Result<()> {
    telemetry::init(cli.telemetry.log_format);
    let settings = cli.backend.settings_of(Service::Api);
    let mut access = Access::from_settings(&cli.api, settings.backend == BackendKind::Aws)
        .await
        .map_err(anyhow::Error::msg)?;
    let data_dir =
        (settings.backend == BackendKind::Embedded).then_some(settings.data_dir.as_path());
    access.code_key = crate::code_key::load(cli.api.access_code_key.as_deref(), data_dir)
        .map_err(anyhow::Error::msg)?;
    let opened = backend::open(&settings)
        .await
        .context("cannot open the backend")?;
    let tasks = BackendTasks::start(opened.tasks);
    let backend = cli.hook.wrap(opened.backend);
    // On AWS the worker always runs as its own service (its Fargate shape), never in the API.
    let in_process = cli.api.embedded_worker && settings.backend == BackendKind::Embedded;
    let worker = in_process.then(|| Worker::new(backend.clone(), cli.worker.clone(), &settings));
    let document = crate::openapi::json(access.auth.is_some());
    let state = AppState::new(
        backend,
        access,
        cli.api.seat_map_limits(),
        in_process,
        document,
    );
    let app = Application::build(
        state,
        cli.api.listen,
        cli.api.metrics_listen,
        worker,
        cli.api.shutdown_grace(),
        cli.api.limits,
    )
    .await
    .with_context(|| format!("cannot listen on {}", cli.api.listen))?;
    let address = app.local_addr().context("cannot read the bound address")?;
    let metrics = app.metrics_addr();
    tracing::info!(%address, %metrics, data_dir = %settings.data_dir.display(), backend = settings.backend.as_str(), in_process_worker = in_process, "listening");
    let served = app.run_until_stopped(shutdown::signal()).await;
    // After the requests and the in-process worker have stopped: the line counts of the last
    // admissions and decisions are added before the process exits.
    tasks.stop().await;
    served.context("the server failed")
}
