//! Creating events (organisers and operators).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use seatclaim_shared::domain::{EventId, EventSpec, NewEvent};
use seatclaim_shared::ports::EventCreation;
use serde::Serialize;
use utoipa::ToSchema;

use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::AppState;

/// A created event.
#[derive(Serialize, ToSchema)]
pub struct Created {
    /// The event's id, as given.
    #[schema(value_type = String)]
    event_id: EventId,
    /// How many seats it has, every one AVAILABLE.
    seats: usize,
}

/// `POST /v1/events`: creates an event and all its seats, AVAILABLE. Needs the admin scope, and
/// a deployment that lets the API create events (`SEATCLAIM_API_CREATES_EVENTS`).
#[utoipa::path(
    post,
    path = "/v1/events",
    tag = "events",
    operation_id = "create_event",
    request_body(content = EventSpec, content_type = "application/json", description = "The \
        event: `sections` (generated seats `section-row-number`) or `seats` (listed one by \
        one), not both; 1 to 200,000 seats.", example = json!({"event_id": "e1", "name": "Show",
        "hold_seconds": 300, "sections": [{"section": "A", "rows": 2, "seats_per_row": 10}]})),
    security(("bearerAuth" = [])),
    responses(
        (status = 201, description = "The event and all its seats exist, AVAILABLE.",
            body = Created, links(
                ("SeatMap" = (operation_id = "seat_map",
                    parameters(("event_id" = "$response.body#/event_id")))),
                ("Reserve" = (operation_id = "reserve",
                    parameters(("event_id" = "$response.body#/event_id")))),
            )),
        (status = 400, description = "The body is not JSON (a syntax error)."),
        (status = 403, description = "A token without the admin scope, or a deployment whose \
            operators create events (`SEATCLAIM_API_CREATES_EVENTS=false`)."),
        (status = 409, description = "An event with this id exists."),
        (status = 413, description = "The body is over 32 MiB."),
        (status = 415, description = "The body is not declared as JSON."),
        (status = 422, description = "JSON of the wrong shape (`malformed-request`: a missing \
            field, a wrong type, an unknown field), or a broken rule (`invalid-request`: 0 or \
            over 200,000 seats, duplicate seat ids, `hold_seconds` outside 1..=86400, \
            `max_seats_per_buyer` outside 1..=100, bad ids, a bad name, both or neither of \
            `sections` and `seats`)."),
    ),
)]
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
