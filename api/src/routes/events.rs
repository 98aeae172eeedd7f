use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jiff::Timestamp;
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{EventId, EventSpec, NewEvent, SeatId, SeatView, Section};
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

#[derive(Serialize)]
pub struct SeatMap {
    event_id: EventId,
    as_of: Timestamp,
    seats: Vec<SeatEntry>,
}

#[derive(Serialize)]
struct SeatEntry {
    seat_id: SeatId,
    section: Section,
    state: SeatView,
}

/// `GET /v1/events/{event_id}/seats`: the advisory seat map, as of the instant it was read.
pub async fn seat_map(
    State(backend): State<Backend>,
    Path(event_id): Path<String>,
) -> Result<Json<SeatMap>, ApiError> {
    let unknown = || ApiError::NotFound(format!("event {event_id} does not exist"));
    let id = EventId::parse(&event_id).map_err(|_| unknown())?;
    let as_of = backend.clock.now();
    let seats = backend.catalog.seat_map(&id).await?.ok_or_else(unknown)?;
    Ok(Json(SeatMap {
        event_id: id,
        as_of,
        seats: seats
            .into_iter()
            .map(|seat| SeatEntry {
                state: seat.state.view(as_of),
                seat_id: seat.seat_id,
                section: seat.section,
            })
            .collect(),
    }))
}
