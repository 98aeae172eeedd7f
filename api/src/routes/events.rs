//! Creating events, and closing their waitlists (organisers and operators).

use axum::Json;
use axum::extract::FromRequestParts;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::request::Parts;
use seatclaim_core::domain::{EventId, EventSpec, NewEvent, ValidationError};
use seatclaim_core::ports::EventCreation;
use serde::Serialize;
use utoipa::ToSchema;

use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
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
        one), not both; 1 to `SEATCLAIM_MAX_EVENT_SEATS` seats (at most 200,000, the default); \
        at most 1 MiB. Without `max_seats_per_buyer` the event gets \
        `SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER` (10 unless set; 0 for none); 0 sets no limit. \
        The caller's token is checked before the body is read.", example = json!({"event_id": "e1", "name": "Show",
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
        (status = 408, description = "The body did not arrive within \
            `SEATCLAIM_BODY_READ_TIMEOUT_SECS` seconds."),
        (status = 413, description = "The body is over 1 MiB."),
        (status = 415, description = "The body is not declared as JSON."),
        (status = 422, description = "JSON of the wrong shape (`malformed-request`: a missing \
            field, a wrong type, an unknown field), or a broken rule (`invalid-request`: 0 seats \
            or more than `SEATCLAIM_MAX_EVENT_SEATS`, duplicate seat ids, `hold_seconds` outside 1..=86400, \
            `max_seats_per_buyer` outside 0..=100, bad ids, a bad name, both or neither of \
            `sections` and `seats`, extension terms out of range, a `sale_starts_at` that is not \
            RFC 3339, a waitlist or a `sale_starts_at` on the AWS backend)."),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    _creator: EventCreator,
    ApiJson(body): ApiJson<EventSpec>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let backend = &state.backend;
    let event = NewEvent::parse(body.with_default_limit(state.access.default_seat_limit))?;
    let most = state.access.max_event_seats;
    if event.seats.len() > most {
        return Err(ValidationError::new(
            "seats",
            format!("this API creates events of at most {most} seats (SEATCLAIM_MAX_EVENT_SEATS)"),
        )
        .into());
    }
    match backend.catalog.create_event(&event).await? {
        EventCreation::Created(seats) => Ok((
            StatusCode::CREATED,
            Json(Created {
                event_id: event.event_id,
                seats,
            }),
        )),
        EventCreation::AlreadyExists => Err(ApiError::EventExists(event.event_id)),
    }
}

/// A caller who may create events here: an admin, on a deployment whose API creates events.
/// Established from the request's head, before the body: anyone else is refused without a byte
/// of the body read.
pub struct EventCreator;

impl FromRequestParts<AppState> for EventCreator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        caller.require_admin(&state.access.admin_scope)?;
        if !state.access.creates_events {
            return Err(ApiError::Forbidden {
                detail:
                    "events are created by this deployment's operators: seatclaimctl events create"
                        .into(),
                scope: None,
            });
        }
        Ok(Self)
    }
}

/// What closing a waitlist did.
#[derive(Serialize, ToSchema)]
pub struct WaitlistClosed {
    /// The event.
    #[schema(value_type = String)]
    event_id: EventId,
    /// How many jobs were waiting in its lines, each now REJECTED ("waitlist closed").
    rejected: usize,
}

/// `POST /v1/events/{event_id}/waitlist/close`: every WAITLISTED job of the event is REJECTED
/// with the reason "waitlist closed", and from then on the event behaves as one without a
/// waitlist. Needs the admin scope, on a deployment whose API creates events (403 where
/// operators do, with `seatclaimctl events close-waitlist`). Closing again rejects nobody more.
#[utoipa::path(
    post,
    path = "/v1/events/{event_id}/waitlist/close",
    tag = "events",
    operation_id = "close_waitlist",
    params(("event_id" = String, Path, description = "The event.")),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The waitlist is closed; how many were waiting.",
            body = WaitlistClosed),
        (status = 400, description = "A path that is not UTF-8 once percent-decoded."),
        (status = 403, description = "A token without the admin scope, or a deployment whose \
            operators close waitlists (SEATCLAIM_API_CREATES_EVENTS=false)."),
        (status = 404, description = "No such event."),
    ),
)]
pub async fn close_waitlist(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(raw): ApiPath<String>,
) -> Result<Json<WaitlistClosed>, ApiError> {
    caller.require_admin(&state.access.admin_scope)?;
    if !state.access.creates_events {
        // Closing changes the event, which such a deployment's API may not write.
        return Err(ApiError::Forbidden {
            detail: "waitlists are closed by this deployment's operators: \
                     seatclaimctl events close-waitlist"
                .into(),
            scope: None,
        });
    }
    let unknown = || ApiError::NotFound(format!("event {raw} does not exist"));
    let event_id = EventId::parse(&raw).map_err(|_| unknown())?;
    match state.backend.inventory.close_waitlist(&event_id).await? {
        Some(rejected) => Ok(Json(WaitlistClosed { event_id, rejected })),
        None => Err(unknown()),
    }
}
