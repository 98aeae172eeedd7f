//! Building and running the application: the same code path for the binary and the tests.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::error_handling::HandleErrorLayer;
use axum::http::Request;
use axum::http::StatusCode;
use axum::{BoxError, Router};
use seatclaim_core::ports::BackendError;
use seatclaim_runtime::loops::{Worker, serve_metrics};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceBuilder;
use tower::limit::GlobalConcurrencyLimitLayer;
use tower_http::classify::ServerErrorsFailureClass;
use tower_http::trace::TraceLayer;
use tracing::{debug, error, info, info_span, warn};

use crate::error::ApiError;
use crate::request_metrics;
use crate::routes;
use crate::server;
use crate::settings::ServerLimits;
use crate::state::AppState;

/// A bound listener, the routes, the metrics endpoint, and optionally an in-process worker,
/// ready to run.
pub struct Application {
    listener: TcpListener,
    router: Router,
    worker: Option<Worker>,
    grace: Duration,
    header_read_timeout: Duration,
    metrics: SocketAddr,
    metrics_stop: CancellationToken,
}

impl Application {
    /// Binds `listen` (port 0 for any free port) and `metrics_listen` (its `/metrics` and
    /// `/healthz`, served from now on) and assembles the app over `state`, under `limits`.
    pub async fn build(
        state: AppState,
        listen: SocketAddr,
        metrics_listen: SocketAddr,
        worker: Option<Worker>,
        grace: Duration,
        limits: ServerLimits,
    ) -> std::io::Result<Self> {
        let listener = seatclaim_runtime::listen::listen(listen)?;
        // The metrics recorder is installed here, before anything counts.
        let metrics_stop = CancellationToken::new();
        let metrics = serve_metrics(metrics_listen, metrics_stop.clone()).await?;
        // Every route but the probes runs under the bounds: at most `max_in_flight` requests at
        // once (one more is refused at once, 503, rather than queued) and the request timeout
        // each (503 past it), both answered as problem+json.
        let bounds = ServiceBuilder::new()
            .layer(HandleErrorLayer::new(refusal))
            .load_shed()
            .layer(GlobalConcurrencyLimitLayer::new(
                limits.max_in_flight.max(1),
            ))
            .timeout(Duration::from_secs(limits.request_timeout_secs.max(1)));
        let headers = crate::security_headers::layer(&state.access.page_origins);
        // The layers every answer passes through, as one: each layer a router is given wraps
        // each of its routes in a boxed service of its own, which every request clones.
        let answers = ServiceBuilder::new()
            .layer(
                // One span per request; handlers record the job id into it so a job can be
                // followed from its POST through the worker's claim in the logs.
                TraceLayer::new_for_http()
                    .make_span_with(|request: &Request<_>| {
                        info_span!(
                            "request",
                            method = %request.method(),
                            path = %crate::redact::path(request.uri().path()),
                            job_id = tracing::field::Empty,
                        )
                    })
                    .on_failure(log_failure),
            )
            // Outside the bounds, so the refusals past them are counted too.
            .layer(axum::middleware::from_fn(request_metrics::record))
            .layer(headers);
        let router = routes::router_under(state, bounds).layer(answers);
        Ok(Self {
            listener,
            router,
            worker,
            grace,
            header_read_timeout: Duration::from_secs(limits.header_read_timeout_secs.max(1)),
            metrics,
            metrics_stop,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The metrics endpoint's bound address.
    #[must_use]
    pub fn metrics_addr(&self) -> SocketAddr {
        self.metrics
    }

    /// Serves until `stop` resolves. Then it stops accepting connections, lets in-flight requests
    /// finish (up to the grace period), stops the in-process worker after its current batch, and returns.
    pub async fn run_until_stopped(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let worker_stop = CancellationToken::new();
        let worker = self
            .worker
            .map(|worker| tokio::spawn(worker.run(worker_stop.clone())));
        let draining = CancellationToken::new();
        let connections = TaskTracker::new();
        let server = tokio::spawn(server::serve(
            self.listener,
            self.router,
            self.header_read_timeout,
            draining.clone(),
            connections.clone(),
        ));
        info!("serving");
        stop.await;
        draining.cancel();
        if let Err(error) = server.await {
            warn!(%error, "the accept loop ended abnormally");
        }
        connections.close();
        if tokio::time::timeout(self.grace, connections.wait())
            .await
            .is_err()
        {
            warn!("in-flight requests outlived the grace period; closing them");
        }
        worker_stop.cancel();
        self.metrics_stop.cancel();
        if let Some(worker) = worker
            && let Err(error) = worker.await
        {
            warn!(%error, "the in-process worker ended abnormally");
        }
        info!("stopped");
        Ok(())
    }
}

/// The answer to a request the bounds refused.
async fn refusal(error: BoxError) -> ApiError {
    if error.is::<tower::load_shed::error::Overloaded>() {
        ApiError::Overloaded
    } else if error.is::<tower::timeout::error::Elapsed>() {
        ApiError::TimedOut
    } else {
        ApiError::Backend(BackendError::permanent(error.to_string()))
    }
}

/// Logs a request that failed on the server's side: at error, except a 503, which is the API
/// shedding load or a backend asking for a retry, each also counted in `http_server_errors_total`;
/// logged one by one at error, a storm that is shed would spend its CPU writing the log.
fn log_failure(failure: ServerErrorsFailureClass, latency: Duration, _span: &tracing::Span) {
    let latency_ms = latency.as_millis();
    match failure {
        ServerErrorsFailureClass::StatusCode(StatusCode::SERVICE_UNAVAILABLE) => {
            debug!(latency_ms, "response shed or unavailable (503)");
        }
        failure => error!(%failure, latency_ms, "response failed"),
    }
}
