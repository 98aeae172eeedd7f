//! The worker's own small HTTP endpoint: `/metrics` for Prometheus and `/healthz` for the
//! container's health check. (In the API process the API serves both.)

use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;
use tokio_util::sync::CancellationToken;

/// Serves `/metrics` and `/healthz` on `listen` until `stop`; returns the bound address at once.
pub async fn serve_metrics(
    listen: SocketAddr,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let handle = crate::telemetry::metrics();
    let app = Router::new()
        .route("/metrics", get(move || std::future::ready(handle.render())))
        .route("/healthz", get(|| std::future::ready("ok")));
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move {
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(stop.cancelled_owned())
            .await;
        if let Err(error) = served {
            tracing::warn!(%error, "the metrics endpoint stopped");
        }
    });
    Ok(address)
}
