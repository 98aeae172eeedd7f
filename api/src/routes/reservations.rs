use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_core::app;
use seatclaim_core::domain::{
    BuyerId, EventId, Job, JobId, JobStatus, SeatRequest, ValidationError,
};
use seatclaim_core::ports::Admission;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::job_view::{self, JobView};
use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath, ReservationHeaders};
use crate::prefer::PREFERENCE_APPLIED;
use crate::state::AppState;

/// Either `seat_ids` or `section` with `quantity`; `buyer_id` is the token's subject when
/// authentication is on (optional, and must match), required when it is off.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Reserve {
    /// The buyer: required with authentication off; with it on, optional and the token's `sub`.
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,128}$", example = "b1")]
    buyer_id: Option<String>,
    /// 1 to 10 distinct seats of the event.
    #[schema(min_items = 1, max_items = 10, example = json!(["A-1-1"]))]
    seat_ids: Option<Vec<String>>,
    /// Any `quantity` seats of this section.
    #[schema(pattern = "^[A-Za-z0-9._:-]{1,64}$", example = "A")]
    section: Option<String>,
    /// How many seats of `section`, 1 to 10.
    #[schema(minimum = 1, maximum = 10)]
    quantity: Option<i64>,
    /// With `section`: the seats must be adjacent in one row (the best such block, stranding
    /// no single seat when it can); default false, any seats of the section, the best first.
    together: Option<bool>,
    /// A presale's access code: the reservation is admitted under the code's channel, and the
    /// claim counts its seats against the code's `max_seats`.
    #[schema(pattern = "^[A-Za-z0-9-]{4,64}$", example = "FAN-7Q2X")]
    access_code: Option<String>,
}

impl Reserve {
    fn request(&self) -> Result<SeatRequest, ValidationError> {
        match (&self.seat_ids, &self.section, self.quantity) {
            (Some(_), None, None) if self.together.is_some() => Err(ValidationError::new(
                "together",
                "goes with section and quantity, not seat_ids",
            )),
            (Some(seats), None, None) => SeatRequest::exact(seats),
            (None, Some(section), Some(quantity)) if self.together == Some(true) => {
                SeatRequest::together_in(section, quantity)
            }
            (None, Some(section), Some(quantity)) => SeatRequest::in_section(section, quantity),
            (None, Some(_), None) => {
                Err(ValidationError::new("quantity", "is required with section"))
            }
            _ => Err(ValidationError::new(
                "seat_ids",
                "or section with quantity must be given, but not both",
            )),
        }
    }
}

/// An accepted reservation: a job to follow.
#[derive(Serialize, ToSchema)]
struct Accepted {
    /// The job's id.
    #[schema(value_type = String, format = "uuid")]
    job_id: JobId,
    /// Always `PENDING`: nothing about the seats is decided yet.
    #[schema(value_type = String, example = "PENDING", pattern = "^PENDING$")]
    status: JobStatus,
    /// Where to follow the job: `/v1/jobs/{job_id}`.
    status_url: String,
}

/// `POST /v1/events/{event_id}/reservations`: makes the intent durable and answers 202 at once,
/// or, asked with `Prefer: wait=N`, the decided job (200) when the decision comes within the
/// wait. Nothing about the seats is promised by a 202; the client polls the job. Each buyer's
/// POSTs are rate-limited (429 past its bucket).
#[utoipa::path(
    post,
    path = "/v1/events/{event_id}/reservations",
    tag = "reservations",
    operation_id = "reserve",
    params(
        ("event_id" = String, Path, description = "The event.", example = "e1"),
        ("Idempotency-Key" = String, Header, description = "1 to 255 printable ASCII \
            characters naming this attempt: the same buyer, key and body again returns the \
            same job and enqueues nothing.", example = "order-1",
            pattern = "^[ -~]{1,255}$"),
        ("Prefer" = Option<String>, Header, description = "RFC 7240. `wait=N` (N seconds, \
            at most `SEATCLAIM_MAX_PREFER_WAIT_SECS`, 10 by default): answer 200 with the \
            decided job if it is decided within the wait, else 202 after it (202 at once when \
            no long-poll slot is free, or the buyer already has \
            `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` waiting). Without a positive integer `wait` \
            (`respond-async` alone, `wait=0`) the answer is 202 at once; other preferences are \
            ignored.", example = "wait=5"),
    ),
    request_body(content = Reserve, content_type = "application/json", description = "Either \
        `seat_ids`, or `section` with `quantity`.",
        example = json!({"buyer_id": "b1", "section": "A", "quantity": 2})),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "Asked with `Prefer: wait=N`: durable and decided within \
            the wait (HELD, REJECTED, FAILED, or any later status of a retried request); the \
            body is the job as `GET /v1/jobs/{job_id}` shows it.", body = JobView,
            headers(
                ("Location" = String, description = "The job: `/v1/jobs/{job_id}`."),
                ("Preference-Applied" = String, description = "The wait honoured: \
                    `wait=<seconds>`."),
            ),
            links(
                ("ShowDecidedJob" = (operation_id = "show_job",
                    parameters(("job_id" = "$response.body#/job_id")))),
            ),
        ),
        (status = 202, description = "Accepted and durable; follow the job.", body = Accepted,
            headers(
                ("Location" = String, description = "The job: `/v1/jobs/{job_id}`."),
                ("Retry-After" = String, description = "Seconds before the first poll (1)."),
                ("Preference-Applied" = String, description = "Present when a `Prefer: wait` \
                    was honoured and the job was still PENDING after it: `wait=<seconds>`."),
            ),
            links(
                ("ShowJob" = (operation_id = "show_job",
                    parameters(("job_id" = "$response.body#/job_id")))),
                ("ConfirmJob" = (operation_id = "confirm_job",
                    parameters(("job_id" = "$response.body#/job_id")))),
                ("CancelJob" = (operation_id = "cancel_job",
                    parameters(("job_id" = "$response.body#/job_id")))),
            ),
        ),
        (status = 400, description = "A missing or malformed `Idempotency-Key`, a body that \
            is not JSON, or a path that is not UTF-8 once percent-decoded."),
        (status = 403, description = "With authentication on: a `buyer_id` that is not the \
            token's subject."),
        (status = 404, description = "No such event."),
        (status = 408, description = "The body did not arrive within \
            `SEATCLAIM_BODY_READ_TIMEOUT_SECS` seconds."),
        (status = 409, description = "The event's sale has not opened and this buyer already \
            waits in its pre-queue with another job (`already-queued`; `job_id` names it)."),
        (status = 413, description = "The body is over 64 KiB."),
        (status = 415, description = "The body is not declared as JSON."),
        (status = 422, description = "JSON of the wrong shape (`malformed-request`: a wrong \
            type, an unknown field), a broken rule (`invalid-request`: no `buyer_id` with \
            authentication off, an empty, oversized or repeated seat list, a quantity out of \
            range, seats or a section the event lacks), or the key used before for another \
            request (`idempotency-key-reused`)."),
        (status = 429, description = "The buyer is past its rate."),
    ),
)]
pub async fn reserve(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(event_id): ApiPath<String>,
    headers: ReservationHeaders,
    ApiJson(body): ApiJson<Reserve>,
) -> Result<Response, ApiError> {
    let buyer_id = caller.buyer(body.buyer_id.as_deref())?;
    state
        .access
        .buyers
        .check(&buyer_id)
        .map_err(|retry_after| ApiError::TooManyRequests { retry_after })?;
    let key = headers.idempotency_key()?;
    let unknown_event = || ApiError::NotFound(format!("event {event_id} does not exist"));
    let parsed_event = EventId::parse(&event_id).map_err(|_| unknown_event())?;
    let request = body.request()?;
    let access = super::access::of_reservation(
        &state,
        &caller,
        &parsed_event,
        (&buyer_id, request.quantity()),
        body.access_code.as_deref(),
    )
    .await?;
    let decide = state.decides_on_admission;
    let admission = app::admit(
        &state.backend,
        &key,
        parsed_event,
        (buyer_id.clone(), access),
        request,
        decide,
    );
    let (job_id, decided) =
        admitted(admission.await?).map_err(|refusal| refusal.unwrap_or_else(unknown_event))?;
    tracing::Span::current().record("job_id", tracing::field::display(job_id));
    let wait = headers.prefer_wait.map(|asked| PreferWait {
        asked,
        share: caller.long_poll_share(Some(&buyer_id)).cloned(),
    });
    Ok(answer(&state, wait, job_id, decided).await)
}

/// A `Prefer: wait=N` (`asked`), and whose share of the long-poll slots it would wait in.
struct PreferWait {
    asked: u64,
    share: Option<BuyerId>,
}

/// What an admission leaves to answer: a job decided in it, one the worker decides next, or one
/// that waits for the sale's opening (nothing worth a `Prefer: wait` before it).
enum Admitted {
    Decided(Box<Job>),
    Queued,
    Prequeued,
}

/// The job an admission names, and what is left to answer of it; or why there is none: the
/// refusal's error, or `None` for an event that does not exist (the caller words that one).
fn admitted(admission: Admission) -> Result<(JobId, Admitted), Option<ApiError>> {
    match admission {
        Admission::Accepted(job_id) | Admission::Duplicate(job_id) => {
            Ok((job_id, Admitted::Queued))
        }
        Admission::Prequeued(job_id) => Ok((job_id, Admitted::Prequeued)),
        Admission::AlreadyQueued(job_id) => Err(Some(ApiError::AlreadyQueued(job_id))),
        Admission::Decided(job) => Ok((job.job_id, Admitted::Decided(job))),
        Admission::KeyReused => Err(Some(ApiError::KeyReused)),
        Admission::UnknownEvent => Err(None),
        Admission::UnknownSeats(seats) => {
            let names: Vec<&str> = seats.iter().map(|s| s.as_str()).collect();
            let detail = format!("names seats the event does not have: {}", names.join(", "));
            Err(Some(ApiError::UnknownSeats(ValidationError::new(
                "seat_ids", detail,
            ))))
        }
        Admission::UnknownSection(section) => {
            let detail = format!("{section} does not exist in this event");
            Err(Some(ApiError::UnknownSection(ValidationError::new(
                "section", detail,
            ))))
        }
        Admission::Unservable(reason) => Err(Some(ApiError::Unservable(ValidationError::new(
            "quantity", reason,
        )))),
    }
}

/// The answer to an admitted reservation: 202 at once, or, when the request prefers to wait
/// (`Prefer: wait=N`, RFC 7240), the decided job (200): at once if the admission decided it,
/// else if a long-poll slot is free, in the buyer's share too, and the decision comes within
/// the wait (202 after it otherwise; 202 at once without a slot: the intent is admitted, so it
/// is no 429). A pre-queued job is answered 202 at once: nothing is decided before the opening.
/// The intent is durable either way, so a failed read while waiting still answers 202.
async fn answer(
    state: &AppState,
    wait: Option<PreferWait>,
    job_id: JobId,
    admitted: Admitted,
) -> Response {
    let long_polls = &state.access.long_polls;
    let Some((seconds, share)) = wait.and_then(|wait| {
        let seconds = long_polls.prefer_wait(wait.asked)?;
        Some((seconds, wait.share))
    }) else {
        return accepted(job_id, None);
    };
    match admitted {
        Admitted::Decided(job) => {
            return decided_answer(state, job.as_of(state.backend.clock.now()), seconds).await;
        }
        Admitted::Prequeued => return accepted(job_id, None),
        Admitted::Queued => {}
    }
    let Ok(slot) = long_polls.take(share.as_ref()) else {
        return accepted(job_id, None);
    };
    match slot
        .wait_for_decision(&state.backend, job_id, seconds)
        .await
    {
        Ok(Some(job)) if job.status != JobStatus::Pending => {
            decided_answer(state, job, seconds).await
        }
        Ok(_) => accepted(job_id, Some(seconds)),
        Err(error) => {
            tracing::warn!(%error, "could not wait for the decision; answering 202");
            accepted(job_id, Some(seconds))
        }
    }
}

/// 202 with the job to follow; `waited` is the `Prefer: wait` honoured, if one was.
fn accepted(job_id: JobId, waited: Option<u64>) -> Response {
    let status_url = format!("/v1/jobs/{job_id}");
    let body = Accepted {
        job_id,
        status: JobStatus::Pending,
        status_url,
    };
    let mut response = (StatusCode::ACCEPTED, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    locate(response, job_id, waited)
}

/// 200 with the decided job (or its place in line), as `GET /v1/jobs/{id}` shows it, after a
/// `Prefer: wait` of `waited` seconds.
async fn decided_answer(state: &AppState, job: Job, waited: u64) -> Response {
    let job_id = job.job_id;
    let body = match job_view::view(state, job.clone()).await {
        Ok(view) => view,
        Err(error) => {
            tracing::warn!(%error, "could not read the job's place in line; answering without it");
            JobView::from(job)
        }
    };
    locate(Json(body).into_response(), job_id, Some(waited))
}

/// Adds the job's `Location` and, if a wait was honoured, `Preference-Applied: wait=N`.
fn locate(mut response: Response, job_id: JobId, waited: Option<u64>) -> Response {
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(&format!("/v1/jobs/{job_id}")) {
        headers.insert(header::LOCATION, location);
    }
    if let Some(applied) = waited.and_then(|s| HeaderValue::from_str(&format!("wait={s}")).ok()) {
        headers.insert(PREFERENCE_APPLIED, applied);
    }
    response
}
