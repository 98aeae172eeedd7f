use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_shared::app;
use seatclaim_shared::domain::{EventId, JobId, JobStatus, SeatRequest, ValidationError};
use seatclaim_shared::ports::Admission;
use serde::{Deserialize, Serialize};

use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, idempotency_key};
use crate::state::AppState;

/// Either `seat_ids` or `section` with `quantity`; `buyer_id` is the token's subject when
/// authentication is on (optional, and must match), required when it is off.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reserve {
    buyer_id: Option<String>,
    seat_ids: Option<Vec<String>>,
    section: Option<String>,
    quantity: Option<i64>,
}

impl Reserve {
    fn request(&self) -> Result<SeatRequest, ValidationError> {
        match (&self.seat_ids, &self.section, self.quantity) {
            (Some(seats), None, None) => SeatRequest::exact(seats),
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

#[derive(Serialize)]
struct Accepted {
    job_id: JobId,
    status: JobStatus,
    status_url: String,
}

/// `POST /v1/events/{event_id}/reservations`: makes the intent durable and answers 202 at once.
/// Nothing about the seats is promised yet; the client polls the job. Each buyer's POSTs are
/// rate-limited (429 past its bucket).
pub async fn reserve(
    State(state): State<AppState>,
    caller: Caller,
    Path(event_id): Path<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Reserve>,
) -> Result<Response, ApiError> {
    let buyer_id = caller.buyer(body.buyer_id.as_deref())?;
    state
        .access
        .buyers
        .check(&buyer_id)
        .map_err(|retry_after| ApiError::TooManyRequests { retry_after })?;
    let key = idempotency_key(&headers)?;
    let unknown_event = || ApiError::NotFound(format!("event {event_id} does not exist"));
    let event_id = EventId::parse(&event_id).map_err(|_| unknown_event())?;
    let request = body.request()?;
    let admission = app::admit(&state.backend, &key, event_id, buyer_id, request).await?;
    let job_id = match admission {
        Admission::Accepted(job_id) | Admission::Duplicate(job_id) => job_id,
        Admission::KeyReused => return Err(ApiError::KeyReused),
        Admission::UnknownEvent => return Err(unknown_event()),
        Admission::UnknownSeats(seats) => {
            let names: Vec<&str> = seats.iter().map(|s| s.as_str()).collect();
            return Err(ValidationError::new(
                "seat_ids",
                format!("names seats the event does not have: {}", names.join(", ")),
            )
            .into());
        }
        Admission::UnknownSection(section) => {
            return Err(ValidationError::new(
                "section",
                format!("{section} does not exist in this event"),
            )
            .into());
        }
    };
    tracing::Span::current().record("job_id", tracing::field::display(job_id));
    Ok(accepted(job_id))
}

fn accepted(job_id: JobId) -> Response {
    let status_url = format!("/v1/jobs/{job_id}");
    let location = HeaderValue::from_str(&status_url).ok();
    let body = Accepted {
        job_id,
        status: JobStatus::Pending,
        status_url,
    };
    let mut response = (StatusCode::ACCEPTED, Json(body)).into_response();
    if let Some(location) = location {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}
