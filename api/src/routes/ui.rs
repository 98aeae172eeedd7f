//! The buyer web page: three static files built into the binary, so the one-command local run
//! serves it too. `/` lists the events and `/events/{event_id}` shows one seat map; both are
//! the same page, which reads the path. `/ui/config.json` tells it how to sign in.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::state::AppState;

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

/// `GET /` and `GET /events/{event_id}`: the page.
pub async fn page() -> Response {
    file("text/html; charset=utf-8", INDEX_HTML)
}

/// `GET /ui/app.js`.
pub async fn script() -> Response {
    file("text/javascript; charset=utf-8", APP_JS)
}

/// `GET /ui/app.css`.
pub async fn style() -> Response {
    file("text/css; charset=utf-8", APP_CSS)
}

/// `GET /ui/config.json`: whether the API wants tokens, and the OpenID Connect client the page
/// signs in with (`null` when none is configured: the page then takes a pasted token).
pub async fn config(State(state): State<AppState>) -> Json<Value> {
    let access = &state.access;
    Json(match access.auth {
        None => json!({"auth": false}),
        Some(_) => json!({"auth": true, "oidc": access.ui_oidc}),
    })
}
