//! Request metrics per route and status, in the style of OpenTelemetry's HTTP server
//! conventions: how many requests each route answered, how many of them failed on the server's
//! side, and how long they took. The route is the matched path template (`/v1/jobs/{job_id}`),
//! never the raw path, so a client cannot grow the number of series.

use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;

/// The label of a request no route matched (a 404 of the fallback).
const UNMATCHED: &str = "unmatched";

/// Records `http_server_requests_total`, `http_server_errors_total` (5xx answers, the API's
/// own refusals past its bounds among them) and `http_server_request_duration_seconds`, each
/// labelled `method`, `route` and `status`.
pub(crate) async fn record(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let response = next.run(request).await;
    let status = response.status();
    let labels = [
        ("method", method),
        ("route", route),
        ("status", status.as_u16().to_string()),
    ];
    metrics::counter!("http_server_requests_total", &labels).increment(1);
    if status.is_server_error() {
        metrics::counter!("http_server_errors_total", &labels).increment(1);
    }
    metrics::histogram!("http_server_request_duration_seconds", &labels)
        .record(started.elapsed().as_secs_f64());
    response
}
