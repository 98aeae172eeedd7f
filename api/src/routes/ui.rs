//! The buyer web page: three static files built into the binary, so the one-command local run
//! serves it too. `/` lists the events and `/events/{event_id}` shows one seat map; both are
//! the same page, which reads the path. `/ui/config.json` tells it how to sign in.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

use crate::state::{AppState, UiOidc};

const INDEX_HTML: &str = include_str!("../../ui/index.html");
const APP_JS: &str = include_str!("../../ui/app.js");
const APP_CSS: &str = include_str!("../../ui/app.css");

fn file(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            // The files change only with the binary; a short reuse keeps a deploy visible soon.
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=60"),
            ),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page, listing the events.
#[utoipa::path(
    get,
    path = "/",
    tag = "web page",
    operation_id = "page",
    responses(
        (status = 200, description = "The buyer page (it lists the events).",
            body = String, content_type = "text/html"),
    ),
)]
pub async fn page() -> Response {
    file("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /events/{event_id}`: the same page, which reads the path and shows that event.
#[utoipa::path(
    get,
    path = "/events/{event_id}",
    tag = "web page",
    operation_id = "event_page",
    params(("event_id" = String, Path, description = "The event the page shows (the page \
        itself reads it, so any value answers the page).")),
    responses(
        (status = 200, description = "The buyer page, showing the event's seat map.",
            body = String, content_type = "text/html"),
    ),
)]
pub async fn event_page() -> Response {
    page().await
}

/// `GET /ui/app.js`: the page's script.
#[utoipa::path(
    get,
    path = "/ui/app.js",
    tag = "web page",
    operation_id = "page_script",
    responses(
        (status = 200, description = "The page's script.",
            body = String, content_type = "text/javascript"),
    ),
)]
pub async fn script() -> Response {
    file("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /ui/app.css`: the page's style sheet.
#[utoipa::path(
    get,
    path = "/ui/app.css",
    tag = "web page",
    operation_id = "page_style",
    responses(
        (status = 200, description = "The page's style sheet.",
            body = String, content_type = "text/css"),
    ),
)]
pub async fn style() -> Response {
    file("text/css; charset=utf-8", APP_CSS)
}

/// What `/ui/config.json` answers.
#[derive(Serialize, ToSchema)]
pub struct UiConfig {
    /// Whether the API wants bearer tokens.
    auth: bool,
    /// Only with `auth`: the OpenID Connect sign-in, `null` when none is configured (the page
    /// then takes a pasted token).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<UiOidc>, required = false)]
    oidc: Option<Option<UiOidc>>,
}

/// `GET /ui/config.json`: whether the API wants tokens, and the OpenID Connect client the page
/// signs in with (`null` when none is configured: the page then takes a pasted token).
#[utoipa::path(
    get,
    path = "/ui/config.json",
    tag = "web page",
    operation_id = "page_config",
    responses((status = 200, description = "How the page signs in.", body = UiConfig)),
)]
pub async fn config(State(state): State<AppState>) -> Json<UiConfig> {
    let access = &state.access;
    Json(match access.auth {
        None => UiConfig {
            auth: false,
            oidc: None,
        },
        Some(_) => UiConfig {
            auth: true,
            oidc: Some(access.ui_oidc.clone()),
        },
    })
}
