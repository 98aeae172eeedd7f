use axum::Json;
use axum::extract::State;
use seatclaim_shared::Backend;
use serde_json::{Value, json};

use crate::error::ApiError;

/// The process is up (a liveness probe: restart me if this fails).
pub async fn live() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// The backend answers (a readiness probe: send me traffic only if this succeeds).
pub async fn ready(State(backend): State<Backend>) -> Result<Json<Value>, ApiError> {
    backend.catalog.ping().await?;
    Ok(Json(json!({ "status": "ready" })))
}
