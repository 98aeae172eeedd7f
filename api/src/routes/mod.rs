//! The v1 HTTP contract, one module per resource.

mod browse;
mod events;
mod health;
mod jobs;
mod reservations;
mod ui;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use tower_http::compression::CompressionLayer;

use crate::error::ApiError;
use crate::state::AppState;

/// A reservation body is a few seat ids; anything bigger is a mistake or an attack.
const RESERVATION_BODY_LIMIT: usize = 64 * 1024;
/// An event may list 200,000 seats one by one.
const EVENT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// Every route, with the backend and the access policy as shared state.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route(
            "/v1/events",
            post(events::create)
                .layer(DefaultBodyLimit::max(EVENT_BODY_LIMIT))
                .merge(get(browse::list).layer(CompressionLayer::new())),
        )
        .route(
            "/v1/events/{event_id}/seats",
            get(browse::seat_map).layer(CompressionLayer::new()),
        )
        .route(
            "/v1/events/{event_id}/reservations",
            post(reservations::reserve).layer(DefaultBodyLimit::max(RESERVATION_BODY_LIMIT)),
        )
        .route("/v1/jobs/{job_id}", get(jobs::show))
        .route("/v1/jobs/{job_id}/confirm", post(jobs::confirm))
        .route("/v1/jobs/{job_id}/cancel", post(jobs::cancel))
        .route("/", get(ui::page).layer(CompressionLayer::new()))
        .route(
            "/events/{event_id}",
            get(ui::page).layer(CompressionLayer::new()),
        )
        .route("/ui/app.js", get(ui::script).layer(CompressionLayer::new()))
        .route("/ui/app.css", get(ui::style).layer(CompressionLayer::new()))
        .route("/ui/config.json", get(ui::config))
        .route("/healthz", get(health::live))
        .route("/readyz", get(health::ready))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no such resource".into())
}

async fn method_not_allowed() -> ApiError {
    ApiError::Rejected {
        status: axum::http::StatusCode::METHOD_NOT_ALLOWED,
        detail: "this method is not allowed on this resource".into(),
    }
}
