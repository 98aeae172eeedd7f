//! Creating events (organisers and operators).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use seatclaim_shared::domain::{EventId, EventSpec, NewEvent};
use seatclaim_shared::ports::EventCreation;
use serde::Serialize;

use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

#[derive(Serialize)]
pub struct Created {
    event_id: EventId,
    seats: usize,
}

/// `POST /v1/events`: creates an event and all its seats, AVAILABLE. Needs the admin scope, and
/// a deployment that lets the API create events (`SEATCLAIM_API_CREATES_EVENTS`).
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<EventSpec>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    caller.require_admin(&state.access.admin_scope)?;
    if !state.access.creates_events {
        return Err(ApiError::Forbidden {
            detail: "events are created by this deployment's operators: seatclaimctl events create"
                .into(),
            scope: None,
        });
    }
    let backend = &state.backend;
    let event = NewEvent::parse(body)?;
    match backend.catalog.create_event(&event).await? {
        EventCreation::Created(seats) => Ok((
            StatusCode::CREATED,
            Json(Created {
                event_id: event.event_id,
                seats,
            }),
        )),
        EventCreation::AlreadyExists => Err(ApiError::Conflict(format!(
            "event {} already exists",
            event.event_id
        ))),
    }
}
