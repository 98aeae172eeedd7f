use axum::Json;
use axum::extract::State;
use seatclaim_shared::Backend;
use seatclaim_shared::ports::BackendError;
use serde_json::{Value, json};

use crate::error::ApiError;

/// The process is up (a liveness probe: restart me if this fails).
pub async fn live() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// The backend answers (a readiness probe: send me traffic only if this succeeds). Any failure
/// is a 503, so load balancers take the instance out rather than treat it as broken for good.
pub async fn ready(State(backend): State<Backend>) -> Result<Json<Value>, ApiError> {
    backend
        .catalog
        .ping()
        .await
        .map_err(|error| ApiError::Backend(BackendError::transient(error.message)))?;
    Ok(Json(json!({ "status": "ready" })))
}
