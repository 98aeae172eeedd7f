//! The v1 HTTP contract, one module per resource. Every route is registered through
//! utoipa-axum's `routes!`, which takes its method and path from the handler's `#[utoipa::path]`
//! and adds that operation to the OpenAPI document: the router serves exactly the operations the
//! document describes (`tests/tests/http/openapi.rs` checks that no route is added any other way).

mod access;
mod browse;
mod codes;
mod docs;
mod events;
mod health;
mod job_view;
mod jobs;
mod payments;
mod reservations;
mod summary;
mod ui;

use std::convert::Infallible;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request};
use axum::response::IntoResponse;
use axum::routing::Route;
use tower::layer::util::Identity;
use tower::{Layer, Service};
use tower_http::compression::CompressionLayer;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::problem::Problem;
use crate::state::AppState;

/// A reservation body is a few seat ids; anything bigger is a mistake or an attack.
const RESERVATION_BODY_LIMIT: usize = 64 * 1024;
/// An event listed seat by seat in 1 MiB has some 25,000 seats; a larger house is described by
/// its sections, a few bytes each. (Read only once the caller is known to be an admin.)
const EVENT_BODY_LIMIT: usize = 1024 * 1024;
/// The most an access-code request may carry: 10,000 codes of up to 64 characters.
const CODES_BODY_LIMIT: usize = 1024 * 1024;
/// A Stripe event is a few KiB (its objects are not expanded); a payment service's confirm less.
const PAYMENT_BODY_LIMIT: usize = 256 * 1024;

/// The document's fixed parts, before the routes add their operations.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "seatclaim",
        description = "A flash-sale seat reservation service: reservations are accepted at \
            once (202) and decided asynchronously; clients follow each job to its outcome. \
            Every error is an RFC 9457 problem (`application/problem+json`, schema `Problem`).",
    ),
    components(schemas(Problem))
)]
struct Base;

/// The document's info and shared components, which the router's operations are added to.
fn base() -> utoipa::openapi::OpenApi {
    Base::openapi()
}

/// Every route with its OpenAPI operation, the state still to be applied: the one list both the
/// router and the document are made from.
pub(crate) fn api() -> OpenApiRouter<AppState> {
    with_probes(bounded())
}

/// The routes of buyers, organisers and the page: served under the bounds (`startup.rs`).
fn bounded() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(base())
        .routes(routes!(events::create).layer(DefaultBodyLimit::max(EVENT_BODY_LIMIT)))
        .routes(routes!(browse::list).layer(CompressionLayer::new()))
        .routes(routes!(browse::seat_map))
        .routes(routes!(reservations::reserve).layer(DefaultBodyLimit::max(RESERVATION_BODY_LIMIT)))
        .routes(routes!(jobs::show))
        .routes(routes!(jobs::confirm).layer(DefaultBodyLimit::max(PAYMENT_BODY_LIMIT)))
        .routes(routes!(payments::stripe).layer(DefaultBodyLimit::max(PAYMENT_BODY_LIMIT)))
        .routes(routes!(jobs::cancel))
        .routes(routes!(jobs::extend))
        .routes(routes!(events::close_waitlist))
        .routes(routes!(codes::create).layer(DefaultBodyLimit::max(CODES_BODY_LIMIT)))
        .routes(routes!(codes::show, codes::revoke))
        .routes(routes!(summary::show))
        .routes(routes!(ui::page).layer(CompressionLayer::new()))
        .routes(routes!(ui::event_page).layer(CompressionLayer::new()))
        .routes(routes!(ui::script).layer(CompressionLayer::new()))
        .routes(routes!(ui::style).layer(CompressionLayer::new()))
        .routes(routes!(ui::page_file).layer(CompressionLayer::new()))
        .routes(routes!(ui::config))
        .routes(routes!(docs::openapi).layer(CompressionLayer::new()))
}

/// `routes` and the probes, added after whatever layers `routes` has: outside the bounds, so
/// that a saturated API still answers its load balancer and its orchestrator, which would
/// otherwise replace a healthy task in the middle of a sale.
fn with_probes(routes: OpenApiRouter<AppState>) -> OpenApiRouter<AppState> {
    routes
        .routes(routes!(health::live))
        .routes(routes!(health::ready))
}

/// Every route, with the backend and the access policy as shared state, every answer with the
/// security headers, and no bounds.
pub fn router(state: AppState) -> Router {
    let headers = crate::security_headers::layer(&state.access.page_origins);
    router_under(state, Identity::new()).layer(headers)
}

/// Every route, the ones of buyers and operators under `bounds` and the probes outside them;
/// the caller adds the security headers, in one layer with its others.
pub(crate) fn router_under<L>(state: AppState, bounds: L) -> Router
where
    L: Layer<Route> + Clone + Send + Sync + 'static,
    L::Service: Service<Request> + Clone + Send + Sync + 'static,
    <L::Service as Service<Request>>::Response: IntoResponse + 'static,
    <L::Service as Service<Request>>::Error: Into<Infallible> + 'static,
    <L::Service as Service<Request>>::Future: Send + 'static,
{
    let (router, _document) = with_probes(bounded().layer(bounds)).split_for_parts();
    router
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
