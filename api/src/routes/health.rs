//! The probes: liveness (the process is up) and readiness (the backend answers, as a check of
//! at most two seconds says, `readiness.rs`: probes from every load-balancer node and the
//! orchestrator cost the backend one check per interval, never one per probe, so nobody can make
//! the API call a control-plane API at will).

use axum::Json;
use axum::extract::State;
use seatclaim_core::ports::BackendError;
use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::state::AppState;

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

/// The backend answers (a readiness probe: send me traffic only if this succeeds), as a check at
/// most 2 s old says. Any failure is a 503, so load balancers take the instance out rather than
/// treat it as broken for good.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "probes",
    operation_id = "ready",
    responses(
        (status = 200, description = "The backend answers (embedded: and its file is at this \
            build's schema version), as a check at most 2 s old says: \
            `{\"status\": \"ready\"}`.", body = Health),
        (status = 503, description = "The backend is unreachable, does not answer within 2 s, or \
            is at a schema version this build does not run (`unavailable`); retry after \
            `Retry-After` seconds. The probes are outside the load shedding and the request \
            timeout: a busy API still answers them."),
    ),
)]
pub async fn ready(State(state): State<AppState>) -> Result<Json<Health>, ApiError> {
    state
        .readiness
        .check(|| state.backend.catalog.ping())
        .await
        .map_err(|message| ApiError::Backend(BackendError::transient(message)))?;
    Ok(Json(Health { status: "ready" }))
}
