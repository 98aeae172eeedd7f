use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use jiff::Timestamp;
use seatclaim_shared::domain::{BuyerId, EventId, Job, JobAction, JobId, JobStatus, SeatId};
use seatclaim_shared::ports::Settled;
use seatclaim_shared::{Backend, app};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;

/// A job as clients see it.
#[derive(Serialize)]
pub struct JobView {
    job_id: JobId,
    status: JobStatus,
    event_id: EventId,
    buyer_id: BuyerId,
    seat_ids: Vec<SeatId>,
    hold_expires_at: Option<Timestamp>,
    reason: Option<String>,
}

impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        Self {
            hold_expires_at: job
                .hold_expires_at
                .filter(|_| job.status == JobStatus::Held),
            job_id: job.job_id,
            status: job.status,
            event_id: job.event_id,
            buyer_id: job.buyer_id,
            seat_ids: job.seat_ids,
            reason: job.reason,
        }
    }
}

/// Parses the path's job id; a malformed id is simply a job that does not exist.
fn job_id(raw: &str) -> Result<JobId, ApiError> {
    let id = JobId::parse(raw).ok_or_else(|| not_found(raw))?;
    tracing::Span::current().record("job_id", tracing::field::display(id));
    Ok(id)
}

fn not_found(raw: &str) -> ApiError {
    ApiError::NotFound(format!("job {raw} does not exist"))
}

/// The longest a status request may wait for a decision.
const MAX_WAIT_SECONDS: u64 = 20;

/// `?wait=N`: hold the request up to N seconds (at most 20) until the job leaves PENDING.
#[derive(Deserialize)]
pub struct Wait {
    wait: Option<u64>,
}

/// `GET /v1/jobs/{job_id}[?wait=N]`: the job; with `wait`, answered as soon as it is decided
/// (at once if it already is), or as it stands after N seconds.
pub async fn show(
    State(backend): State<Backend>,
    Path(raw): Path<String>,
    query: Result<Query<Wait>, QueryRejection>,
) -> Result<Json<JobView>, ApiError> {
    let Query(Wait { wait }) = query?;
    let id = job_id(&raw)?;
    let job = match wait.filter(|seconds| *seconds > 0) {
        Some(seconds) => {
            let max = std::time::Duration::from_secs(seconds.min(MAX_WAIT_SECONDS));
            backend.jobs.wait_for_decision(id, max).await?
        }
        None => backend.jobs.job(id).await?,
    };
    Ok(Json(job.ok_or_else(|| not_found(&raw))?.into()))
}

/// `POST /v1/jobs/{job_id}/confirm`: HELD within its deadline becomes SOLD; repeating it is fine.
pub async fn confirm(state: State<Backend>, path: Path<String>) -> Result<Json<JobView>, ApiError> {
    settle(state, path, JobAction::Confirm).await
}

/// `POST /v1/jobs/{job_id}/cancel`: HELD becomes CANCELLED and its seats return to sale.
pub async fn cancel(state: State<Backend>, path: Path<String>) -> Result<Json<JobView>, ApiError> {
    settle(state, path, JobAction::Cancel).await
}

async fn settle(
    State(backend): State<Backend>,
    Path(raw): Path<String>,
    action: JobAction,
) -> Result<Json<JobView>, ApiError> {
    let id = job_id(&raw)?;
    match app::settle(&backend, id, action).await? {
        Settled::Done(job) => Ok(Json((*job).into())),
        Settled::NotFound => Err(not_found(&raw)),
        Settled::Conflict(conflict) => Err(conflict.into()),
    }
}
