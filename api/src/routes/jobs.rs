use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use jiff::Timestamp;
use seatclaim_shared::domain::{BuyerId, EventId, Job, JobAction, JobId, JobStatus, SeatId};
use seatclaim_shared::ports::Settled;
use seatclaim_shared::{Backend, app};
use serde::{Deserialize, Serialize};

use crate::caller::Caller;
use crate::error::ApiError;
use crate::state::AppState;

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

/// What buyers read as a FAILED job's reason: the error itself (a backend's message) is for the
/// logs and `seatclaimctl jobs show`.
const FAILED_REASON: &str = "processing failed; the request will not be retried";

impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        let reason = match job.status {
            JobStatus::Failed => Some(FAILED_REASON.to_owned()),
            _ => job.reason,
        };
        Self {
            hold_expires_at: job
                .hold_expires_at
                .filter(|_| job.status == JobStatus::Held),
            job_id: job.job_id,
            status: job.status,
            event_id: job.event_id,
            buyer_id: job.buyer_id,
            seat_ids: job.seat_ids,
            reason,
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
/// (at once if it already is), or as it stands after N seconds. Another buyer's job is 404.
/// Past `SEATCLAIM_MAX_LONG_POLLS` waiting polls, a poll is answered at once.
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    Path(raw): Path<String>,
    query: Result<Query<Wait>, QueryRejection>,
) -> Result<Json<JobView>, ApiError> {
    let Query(Wait { wait }) = query?;
    let id = job_id(&raw)?;
    let backend = &state.backend;
    let permit = wait
        .filter(|seconds| *seconds > 0)
        .and_then(|seconds| Some((seconds, state.access.long_polls.try_acquire().ok()?)));
    let job = match permit {
        Some((seconds, _permit)) => {
            let _waiting = Waiting::start();
            let max = std::time::Duration::from_secs(seconds.min(MAX_WAIT_SECONDS));
            backend.jobs.wait_for_decision(id, max).await?
        }
        None => backend.jobs.job(id).await?,
    };
    let job = job
        .filter(|job| caller.may_read(job))
        .ok_or_else(|| not_found(&raw))?;
    Ok(Json(job.into()))
}

/// Counts a long poll in `seatclaim_long_polls_waiting` while it lives.
struct Waiting;

impl Waiting {
    fn start() -> Self {
        metrics::gauge!("seatclaim_long_polls_waiting").increment(1.0);
        Self
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        metrics::gauge!("seatclaim_long_polls_waiting").decrement(1.0);
    }
}

/// `POST /v1/jobs/{job_id}/confirm`: HELD within its deadline becomes SOLD; repeating it is fine.
pub async fn confirm(
    state: State<Backend>,
    caller: Caller,
    path: Path<String>,
) -> Result<Json<JobView>, ApiError> {
    settle(state, caller, path, JobAction::Confirm).await
}

/// `POST /v1/jobs/{job_id}/cancel`: HELD becomes CANCELLED and its seats return to sale.
pub async fn cancel(
    state: State<Backend>,
    caller: Caller,
    path: Path<String>,
) -> Result<Json<JobView>, ApiError> {
    settle(state, caller, path, JobAction::Cancel).await
}

/// Settles the caller's own job; another buyer's is 404, as an unknown one.
async fn settle(
    State(backend): State<Backend>,
    caller: Caller,
    Path(raw): Path<String>,
    action: JobAction,
) -> Result<Json<JobView>, ApiError> {
    let id = job_id(&raw)?;
    if caller != Caller::Open {
        backend
            .jobs
            .job(id)
            .await?
            .filter(|job| caller.may_settle(job))
            .ok_or_else(|| not_found(&raw))?;
    }
    match app::settle(&backend, id, action).await? {
        Settled::Done(job) => Ok(Json((*job).into())),
        Settled::NotFound => Err(not_found(&raw)),
        Settled::Conflict(conflict) => Err(conflict.into()),
    }
}
