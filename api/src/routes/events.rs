use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use jiff::Timestamp;
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{
    EventId, EventSpec, NewEvent, SeatId, SeatSpec, SeatView, Section, SectionSpec,
};
use seatclaim_shared::ports::EventCreation;
use serde::{Deserialize, Serialize};

use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateEvent {
    event_id: String,
    name: String,
    hold_seconds: Option<u32>,
    max_seats_per_buyer: Option<u32>,
    sections: Option<Vec<SectionBody>>,
    seats: Option<Vec<SeatBody>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SectionBody {
    section: String,
    rows: u32,
    seats_per_row: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SeatBody {
    seat_id: String,
    section: String,
}

#[derive(Serialize)]
pub struct Created {
    event_id: EventId,
    seats: usize,
}

/// `POST /v1/events`: creates an event and all its seats, AVAILABLE. Needs the admin scope.
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<CreateEvent>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    caller.require_admin(&state.access.admin_scope)?;
    let backend = &state.backend;
    let event = NewEvent::parse(EventSpec {
        event_id: body.event_id,
        name: body.name,
        hold_seconds: body.hold_seconds,
        max_seats_per_buyer: body.max_seats_per_buyer,
        sections: body.sections.map(|sections| {
            sections
                .into_iter()
                .map(|s| SectionSpec {
                    section: s.section,
                    rows: s.rows,
                    seats_per_row: s.seats_per_row,
                })
                .collect()
        }),
        seats: body.seats.map(|seats| {
            seats
                .into_iter()
                .map(|s| SeatSpec {
                    seat_id: s.seat_id,
                    section: s.section,
                })
                .collect()
        }),
    })?;
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
