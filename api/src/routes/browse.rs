//! The public read path: the event list and the seat maps, answered from this process's
//! snapshots (`seat_maps.rs`), with entity tags so that a polling page or a CDN gets 304s, and
//! `Cache-Control: public, max-age=1` so that a CDN absorbs a storm.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_shared::domain::{EventId, Section};
use serde::{Deserialize, Serialize};

use crate::error::ApiError;
use crate::seat_maps::{Rendered, SeatMaps, StateCounts};

/// How long a client or CDN may reuse an answer without asking again.
const CACHE_CONTROL: &str = "public, max-age=1";

/// `?section=A`: one section of the map.
#[derive(Deserialize)]
pub struct SeatMapQuery {
    section: Option<String>,
}

/// `GET /v1/events/{event_id}/seats[?section=S]`: the advisory seat map as of its snapshot.
pub async fn seat_map(
    State(maps): State<Arc<SeatMaps>>,
    Path(event_id): Path<String>,
    query: Result<Query<SeatMapQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let Query(SeatMapQuery { section }) = query?;
    let unknown = || ApiError::NotFound(format!("event {event_id} does not exist"));
    let id = EventId::parse(&event_id).map_err(|_| unknown())?;
    let snapshot = maps.get(&id).await?.ok_or_else(unknown)?;
    let rendered = match section {
        None => snapshot.whole().clone(),
        Some(name) => {
            let no_section = || ApiError::NotFound(format!("event {id} has no section {name}"));
            let section = Section::parse(&name).map_err(|_| no_section())?;
            snapshot.section(&section)?.ok_or_else(no_section)?
        }
    };
    Ok(cacheable(&headers, rendered))
}

/// The answer to a conditional GET: 304 when the client's tag still names the map.
fn cacheable(headers: &HeaderMap, rendered: Rendered) -> Response {
    let etag = HeaderValue::from_str(&rendered.etag).ok();
    let cache = [(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    )];
    let matches = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|tag| tag.trim() == rendered.etag || tag.trim() == "*");
    let mut response = if matches {
        (StatusCode::NOT_MODIFIED, cache).into_response()
    } else {
        let json = [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )];
        (StatusCode::OK, cache, json, rendered.body).into_response()
    };
    if let Some(etag) = etag {
        response.headers_mut().insert(header::ETAG, etag);
    }
    response
}

/// The event list.
#[derive(Serialize)]
pub struct EventList {
    events: Vec<EventEntry>,
}

#[derive(Serialize)]
struct EventEntry {
    event_id: EventId,
    name: String,
    hold_seconds: i64,
    max_seats_per_buyer: Option<u32>,
    seats: StateCounts,
}

/// `GET /v1/events`: every event with its seats counted by state, from the same snapshots.
pub async fn list(State(maps): State<Arc<SeatMaps>>) -> Result<Response, ApiError> {
    let events = maps
        .events()
        .await?
        .into_iter()
        .map(|(info, seats)| EventEntry {
            event_id: info.event_id,
            name: info.name,
            hold_seconds: info.hold.as_secs(),
            max_seats_per_buyer: info.max_seats_per_buyer.map(|limit| limit.seats()),
            seats,
        })
        .collect();
    let cache = [(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    )];
    Ok((cache, Json(EventList { events })).into_response())
}
