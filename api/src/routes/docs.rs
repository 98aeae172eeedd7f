//! The API's own description: the OpenAPI document, as this process's settings shape it (with
//! the bearer scheme and the operations that need it when authentication is on).

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::state::AppState;

/// `GET /openapi.json`: the OpenAPI 3.1 document of every route.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "meta",
    operation_id = "openapi",
    responses(
        (status = 200, description = "The OpenAPI 3.1 document of this API.",
            body = Object, content_type = "application/json"),
    ),
)]
pub async fn openapi(State(state): State<AppState>) -> Response {
    let json = state.document.clone();
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        json,
    )
        .into_response()
}
