//! The probes: liveness (the process is up) and readiness (the backend answers).

use axum::Json;
use axum::extract::State;
use seatclaim_shared::Backend;
use seatclaim_shared::ports::BackendError;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;

/// A probe's answer.
#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok` from the liveness probe, `ready` from the readiness probe.
    #[schema(example = "ok")]
    status: &'static str,
}

/// The process is up (a liveness probe: restart me if this fails).
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "probes",
    operation_id = "live",
    responses((status = 200, description = "The process is up: `{\"status\": \"ok\"}`.",
        body = Health)),
)]
pub async fn live() -> Json<Health> {
    Json(Health { status: "ok" })
}

/// The backend answers (a readiness probe: send me traffic only if this succeeds). Any failure
/// is a 503, so load balancers take the instance out rather than treat it as broken for good.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "probes",
    operation_id = "ready",
    responses(
        (status = 200, description = "The backend answers (embedded: and its file is at this \
            build's schema version): `{\"status\": \"ready\"}`.", body = Health),
        (status = 503, description = "The backend is unreachable or at a schema version this \
            build does not run (`unavailable`), or the API is at capacity (`overloaded`, \
            `timeout`); retry after `Retry-After` seconds."),
    ),
)]
pub async fn ready(State(backend): State<Backend>) -> Result<Json<Health>, ApiError> {
    backend
        .catalog
        .ping()
        .await
        .map_err(|error| ApiError::Backend(BackendError::transient(error.message)))?;
    Ok(Json(Health { status: "ready" }))
}
