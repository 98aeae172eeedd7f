//! The v1 HTTP contract, one module per resource. Every route is registered through
//! utoipa-axum's `routes!`, which takes its method and path from the handler's `#[utoipa::path]`
//! and adds that operation to the OpenAPI document: the router serves exactly the operations the
//! document describes (`tests/tests/openapi.rs` checks that no route is added any other way).

mod browse;
mod docs;
mod events;
mod health;
mod jobs;
mod reservations;
mod ui;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use tower_http::compression::CompressionLayer;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouterExt};
use utoipa_axum::routes;

use crate::error::ApiError;
use crate::state::AppState;

/// A reservation body is a few seat ids; anything bigger is a mistake or an attack.
const RESERVATION_BODY_LIMIT: usize = 64 * 1024;
/// An event may list 200,000 seats one by one.
const EVENT_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// Every route with its OpenAPI operation, the state still to be applied: the one list both the
/// router and the document are made from.
pub(crate) fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(crate::openapi::base())
        .routes(routes!(events::create).layer(DefaultBodyLimit::max(EVENT_BODY_LIMIT)))
        .routes(routes!(browse::list).layer(CompressionLayer::new()))
        .routes(routes!(browse::seat_map).layer(CompressionLayer::new()))
        .routes(routes!(reservations::reserve).layer(DefaultBodyLimit::max(RESERVATION_BODY_LIMIT)))
        .routes(routes!(jobs::show))
        .routes(routes!(jobs::confirm))
        .routes(routes!(jobs::cancel))
        .routes(routes!(ui::page).layer(CompressionLayer::new()))
        .routes(routes!(ui::event_page).layer(CompressionLayer::new()))
        .routes(routes!(ui::script).layer(CompressionLayer::new()))
        .routes(routes!(ui::style).layer(CompressionLayer::new()))
        .routes(routes!(ui::page_file).layer(CompressionLayer::new()))
        .routes(routes!(ui::config))
        .routes(routes!(health::live))
        .routes(routes!(health::ready))
        .routes(routes!(docs::openapi).layer(CompressionLayer::new()))
}

/// Every route, with the backend and the access policy as shared state.
pub fn router(state: AppState) -> Router {
    let (router, _document) = api().split_for_parts();
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
