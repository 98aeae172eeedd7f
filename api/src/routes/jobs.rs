use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use seatclaim_core::app;
use seatclaim_core::domain::{
    Currency, Job, JobAction, JobId, Money, Payment, Tender, ValidationError,
};
use seatclaim_core::ports::Settled;
use serde::Deserialize;
use utoipa::ToSchema;

pub use super::job_view::JobView;
use super::job_view::view;
use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::{ApiBody, ApiPath};
use crate::long_poll::NoSlot;
use crate::state::AppState;

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
/// (at once if it already is), or as it stands after N seconds. Another buyer's job is 404, at
/// once: ownership is checked before any wait. Past `SEATCLAIM_MAX_LONG_POLLS` waiting polls, a
/// poll is answered at once; past `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` of its buyer's, 429.
#[utoipa::path(
    get,
    path = "/v1/jobs/{job_id}",
    tag = "jobs",
    operation_id = "show_job",
    params(
        ("job_id" = String, Path, description = "The job (a UUID; anything else is a job that \
            does not exist)."),
        ("wait" = Option<u64>, Query, description = "Hold the request up to this many seconds \
            (at most 20) until the job leaves PENDING."),
    ),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The job.", body = JobView),
        (status = 400, description = "A malformed `wait`, or a path that is not UTF-8."),
        (status = 404, description = "No such job, a malformed id, or another buyer's job (an \
            admin token reads any); answered at once, whatever the `wait`."),
        (status = 429, description = "With authentication on, a `wait` on an undecided job \
            while the token's buyer already has `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` (4) long \
            polls waiting (admin and payments tokens excepted); retry after `Retry-After`, or \
            poll without `wait`."),
    ),
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(raw): ApiPath<String>,
    query: Result<Query<Wait>, QueryRejection>,
) -> Result<Json<JobView>, ApiError> {
    let Query(Wait { wait }) = query?;
    let id = job_id(&raw)?;
    // Whose job it is, before any wait: another buyer learns nothing and holds no slot.
    let job = app::jobs::job(&state.backend, id)
        .await?
        .filter(|job| caller.may_read(job))
        .ok_or_else(|| not_found(&raw))?;
    let job = match wait.filter(|seconds| *seconds > 0) {
        Some(seconds) if job.status.awaits_decision() => {
            let seconds = seconds.min(MAX_WAIT_SECONDS);
            wait_in_slot(&state, &caller, job, seconds).await?
        }
        _ => job,
    };
    Ok(Json(view(&state, job).await?))
}

/// `job`, undecided, once it is decided or after `seconds`, waited for in a long-poll slot of
/// the caller's share; as it stands when every slot is taken; 429 when the caller's share is.
async fn wait_in_slot(
    state: &AppState,
    caller: &Caller,
    job: Job,
    seconds: u64,
) -> Result<Job, ApiError> {
    match state.access.long_polls.take(caller.long_poll_share(None)) {
        Ok(slot) => {
            let waited = slot.wait_for_decision(&state.backend, job.job_id, seconds);
            Ok(waited.await?.unwrap_or(job))
        }
        Err(NoSlot::Full) => Ok(job),
        Err(NoSlot::BuyerFull { held }) => Err(ApiError::TooManyLongPolls { held }),
    }
}

/// A payment service's confirm of a priced hold: what it received, and its reference.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PaidConfirm {
    /// What was paid, in the currency's minor units: the job's `amount_due.amount`.
    amount: u64,
    /// The ISO 4217 code of what was paid (any case): the job's `amount_due.currency`.
    currency: String,
    /// The provider's reference to the payment, 1 to 200 characters; recorded on the SOLD job,
    /// and the same reference again is a repeat.
    payment_ref: String,
}

impl PaidConfirm {
    /// The payment a body reports; an empty body reports none.
    fn from_body(body: &[u8]) -> Result<Option<Payment>, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let paid: Self = serde_json::from_slice(body)
            .map_err(|e| ApiError::BadRequest(format!("the payment is not valid JSON: {e}")))?;
        let currency = Currency::parse_any_case(&paid.currency)?;
        if paid.payment_ref.is_empty() || paid.payment_ref.chars().count() > 200 {
            return Err(ValidationError::new("payment_ref", "must be 1 to 200 characters").into());
        }
        Ok(Some(Payment {
            paid: Money {
                amount: paid.amount,
                currency,
            },
            reference: paid.payment_ref,
        }))
    }
}

/// `POST /v1/jobs/{job_id}/confirm`: HELD within its deadline becomes SOLD; repeating it is fine.
/// A priced hold, where payments are required (authentication on or a payment provider
/// configured, unless `SEATCLAIM_PAYMENTS=off`), is sold by its payment: the buyer's confirm is
/// 402, decided in the settlement's own step; a payment service (the `seatclaim/payments`
/// scope) confirms it with a body saying what was paid.
#[utoipa::path(
    post,
    path = "/v1/jobs/{job_id}/confirm",
    tag = "jobs",
    operation_id = "confirm_job",
    params(("job_id" = String, Path, description = "The job.")),
    request_body(content = Option<PaidConfirm>, description = "Only from a payment service: the \
        payment of a priced hold. A buyer sends no body."),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The job, SOLD (again, if it already was).", body = JobView),
        (status = 400, description = "A path that is not UTF-8 once percent-decoded, or a body \
            that is not a payment."),
        (status = 402, description = "The hold is priced and payments are required: its \
            payment sells it, not the buyer's word."),
        (status = 403, description = "A body from a token without the payments scope."),
        (status = 404, description = "No such job, or another buyer's job (admins too)."),
        (status = 409, description = "The job is not HELD within its deadline, nor SOLD; or the \
            payment is not its amount due, or it was paid by another payment."),
        (status = 422, description = "A payment with an invalid currency or reference."),
    ),
)]
pub async fn confirm(
    state: State<AppState>,
    caller: Caller,
    path: ApiPath<String>,
    ApiBody(body): ApiBody,
) -> Result<Json<JobView>, ApiError> {
    let payment = PaidConfirm::from_body(&body)?;
    if payment.is_some() {
        caller.require_payments()?;
    }
    settle(state, caller, path, JobAction::Confirm, payment).await
}

/// `POST /v1/jobs/{job_id}/cancel`: HELD becomes CANCELLED and its seats return to sale.
#[utoipa::path(
    post,
    path = "/v1/jobs/{job_id}/cancel",
    tag = "jobs",
    operation_id = "cancel_job",
    params(("job_id" = String, Path, description = "The job.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The job, CANCELLED (again, if it already was); its seats \
            are AVAILABLE.", body = JobView),
        (status = 400, description = "A path that is not UTF-8 once percent-decoded."),
        (status = 404, description = "No such job, or another buyer's job (admins too)."),
        (status = 409, description = "The job is SOLD, or in any status but HELD or CANCELLED, \
            or its hold has expired."),
    ),
)]
pub async fn cancel(
    state: State<AppState>,
    caller: Caller,
    path: ApiPath<String>,
) -> Result<Json<JobView>, ApiError> {
    settle(state, caller, path, JobAction::Cancel, None).await
}

/// `POST /v1/jobs/{job_id}/extend`: a live hold's deadline moves later by the event's
/// `hold_extension_seconds`, from the deadline (not from now), as many times as the event's
/// `max_hold_extensions` allows. Each call extends again: it is not a repeat.
#[utoipa::path(
    post,
    path = "/v1/jobs/{job_id}/extend",
    tag = "jobs",
    operation_id = "extend_job",
    params(("job_id" = String, Path, description = "The job.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The job, HELD, with its new `hold_expires_at`.",
            body = JobView),
        (status = 400, description = "A path that is not UTF-8 once percent-decoded."),
        (status = 404, description = "No such job, or another buyer's job (admins too)."),
        (status = 409, description = "The job is not HELD, its hold has lapsed, the event \
            allows no extension, or the hold had every extension it allows."),
    ),
)]
pub async fn extend(
    state: State<AppState>,
    caller: Caller,
    path: ApiPath<String>,
) -> Result<Json<JobView>, ApiError> {
    settle(state, caller, path, JobAction::Extend, None).await
}

/// Settles the caller's own job (or, for a payment service, any job it brings a payment for);
/// another buyer's is 404, as an unknown one. Whether a priced hold needs its payment is decided
/// by the domain inside the settlement's atomic step (`Job::settle` with the [`Tender`]); the
/// 402 given here on an earlier read is only the fast answer.
async fn settle(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(raw): ApiPath<String>,
    action: JobAction,
    payment: Option<Payment>,
) -> Result<Json<JobView>, ApiError> {
    let id = job_id(&raw)?;
    let backend = &state.backend;
    let required = state.access.payments_required();
    let unpaid_confirm = action == JobAction::Confirm && payment.is_none();
    if caller != Caller::Open || (unpaid_confirm && required) {
        let job = backend
            .jobs
            .job(id)
            .await?
            .filter(|job| caller.may_settle(job, payment.is_some()))
            .ok_or_else(|| not_found(&raw))?;
        let awaits_payment = unpaid_confirm && required && job.awaits_payment(backend.clock.now());
        if let Some(due) = job.amount_due.filter(|_| awaits_payment) {
            return Err(ApiError::PaymentRequired(due));
        }
    }
    let tender = match payment {
        Some(payment) => Tender::Paid(payment),
        None if required => Tender::Nothing,
        None => Tender::Waived,
    };
    match app::settle(backend, id, action, &tender).await? {
        Settled::Done(job) => Ok(Json((*job).into())),
        Settled::NotFound => Err(not_found(&raw)),
        Settled::Conflict(conflict) => Err(conflict.into()),
    }
}
