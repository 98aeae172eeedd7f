//! The probes: liveness (the process is up) and readiness (the backend answers, as a check of
//! at most [`READINESS_MAX_AGE`] says: probes from every load-balancer node and the orchestrator
//! cost the backend one check per interval, never one per probe, so nobody can make the API call
//! a control-plane API at will).

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use seatclaim_core::ports::BackendError;
use serde::Serialize;
use tokio::sync::Mutex;
use tokio::time::Instant;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::state::AppState;

/// How long a readiness check's answer is reused.
const READINESS_MAX_AGE: Duration = Duration::from_secs(2);
/// How long a check may wait for the backend: the probes are outside the request timeout.
const READINESS_TIMEOUT: Duration = Duration::from_secs(2);

/// The newest readiness check; one check runs at a time, and the probes that arrive meanwhile
/// take its answer.
#[derive(Default)]
pub struct Readiness {
    last: Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Readiness {
    /// Whether the backend answers, as `ping` said at most [`READINESS_MAX_AGE`] ago.
    async fn check<F, P>(&self, ping: F) -> Result<(), String>
    where
        F: FnOnce() -> P,
        P: Future<Output = Result<(), BackendError>>,
    {
        let mut last = self.last.lock().await;
        if let Some((at, answer)) = last.as_ref()
            && at.elapsed() < READINESS_MAX_AGE
        {
            return answer.clone();
        }
        let answer = match tokio::time::timeout(READINESS_TIMEOUT, ping()).await {
            Ok(answer) => answer.map_err(|error| error.message),
            Err(_) => Err(format!(
                "the backend did not answer within {} s",
                READINESS_TIMEOUT.as_secs()
            )),
        };
        *last = Some((Instant::now(), answer.clone()));
        answer
    }
}

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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Makes the newest answer `READINESS_MAX_AGE` older, as if that much time had passed.
    async fn age(readiness: &Readiness) {
        if let Some((at, _)) = readiness.last.lock().await.as_mut() {
            *at = at.checked_sub(READINESS_MAX_AGE).unwrap_or(*at);
        }
    }

    /// Probes within the answer's age share one check; the next one after it checks again; a
    /// backend that hangs is not ready once the check's own timeout has passed.
    #[tokio::test]
    async fn probes_share_a_check_of_at_most_two_seconds_age() {
        let readiness = Readiness::default();
        let pings = AtomicUsize::new(0);
        let ping = || async {
            pings.fetch_add(1, Ordering::SeqCst);
            Ok(())
        };
        for _ in 0..5 {
            assert_eq!(readiness.check(ping).await, Ok(()));
        }
        assert_eq!(pings.load(Ordering::SeqCst), 1, "one check for five probes");
        age(&readiness).await;
        assert_eq!(readiness.check(ping).await, Ok(()));
        assert_eq!(
            pings.load(Ordering::SeqCst),
            2,
            "an answer that old is checked again"
        );
        age(&readiness).await;
        let hanging = readiness.check(std::future::pending).await;
        assert!(hanging.is_err_and(|why| why.contains("did not answer")));
    }
}
