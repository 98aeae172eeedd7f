//! Building and running the application: the same code path for the binary and the tests.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::Request;
use seatclaim_shared::Backend;
use seatclaim_worker::Worker;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::trace::TraceLayer;
use tracing::{info, info_span, warn};

use crate::routes;

/// A bound listener, the routes, and optionally an in-process worker, ready to run.
pub struct Application {
    listener: TcpListener,
    router: Router,
    worker: Option<Worker>,
    grace: Duration,
}

impl Application {
    /// Binds `listen` (port 0 for any free port) and assembles the app over `backend`.
    pub async fn build(
        backend: Backend,
        listen: SocketAddr,
        worker: Option<Worker>,
        grace: Duration,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(listen).await?;
        // Install the metrics recorder before anything counts, so /metrics misses nothing.
        seatclaim_shared::telemetry::metrics();
        let router = routes::router(backend).layer(
            // One span per request; handlers record the job id into it so a job can be followed
            // from its POST through the worker's claim in the logs.
            TraceLayer::new_for_http().make_span_with(|request: &Request<_>| {
                info_span!(
                    "request",
                    method = %request.method(),
                    path = %request.uri().path(),
                    job_id = tracing::field::Empty,
                )
            }),
        );
        Ok(Self {
            listener,
            router,
            worker,
            grace,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
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
        let server = axum::serve(self.listener, self.router).with_graceful_shutdown({
            let draining = draining.clone();
            async move {
                stop.await;
                draining.cancel();
            }
        });
        info!("serving");
        let served = tokio::select! {
            served = server => served,
            () = async { draining.cancelled().await; tokio::time::sleep(self.grace).await } => {
                warn!("in-flight requests outlived the grace period; closing them");
                Ok(())
            }
        };
        worker_stop.cancel();
        if let Some(worker) = worker {
            if let Err(error) = worker.await {
                warn!(%error, "the in-process worker ended abnormally");
            }
        }
        info!("stopped");
        served
    }
}
