//! The public read path: the event list and the seat maps, answered from this process's
//! snapshots (`seat_maps/`), with entity tags so that a polling page or a CDN gets 304s, and
//! `Cache-Control: public, max-age=1` so that a CDN absorbs a storm.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use seatclaim_core::domain::{EventId, Section};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::seat_maps::{Rendered, SeatMaps, Shed, StateCounts};

/// How long a client or CDN may reuse an answer without asking again.
const CACHE_CONTROL: &str = "public, max-age=1";

/// `?section=A`: one section of the map.
#[derive(Deserialize)]
pub struct SeatMapQuery {
    section: Option<String>,
}

/// The conditional request header the seat map honours (read from the headers, documented here).
#[derive(IntoParams)]
#[into_params(parameter_in = Header)]
#[allow(
    dead_code,
    reason = "documents a header the handler reads from the HeaderMap"
)]
struct Conditional {
    /// Entity tags the client holds (or `*`): a 304 answers when one still names the map.
    #[param(rename = "If-None-Match", required = false)]
    if_none_match: String,
}

/// `GET /v1/events/{event_id}/seats[?section=S]`: the advisory seat map as of its snapshot.
#[utoipa::path(
    get,
    path = "/v1/events/{event_id}/seats",
    tag = "events",
    operation_id = "seat_map",
    params(
        ("event_id" = String, Path, description = "The event.", example = "e1"),
        ("section" = Option<String>, Query, description = "Only this section's seats.",
            example = "A"),
        Conditional,
    ),
    responses(
        (status = 200, description = "The advisory seat map (public; any CDN may keep it a \
            second).", body = crate::seat_maps::SeatMapBody, headers(
            ("ETag" = String, description = "A weak tag named by the seats' states."),
            ("Cache-Control" = String, description = "`public, max-age=1`."),
            ("Content-Encoding" = String, description = "`gzip` when the request's \
                `Accept-Encoding` accepts it (compressed once per snapshot); absent otherwise."),
        )),
        (status = 304, description = "`If-None-Match` names the map: unchanged.", headers(
            ("ETag" = String, description = "The map's tag."),
            ("Cache-Control" = String, description = "`public, max-age=1`."),
        )),
        (status = 400, description = "A malformed query (e.g. `section` given twice), or a \
            path that is not UTF-8 once percent-decoded."),
        (status = 404, description = "No such event, or no such section in it."),
        (status = 503, description = "Seat-map reads spent this process's read budget \
            (`SEATCLAIM_SEAT_MAP_READS_PER_SEC`) for as long as this one could wait \
            (`SEATCLAIM_SEAT_MAP_READ_WAIT_MS`): retry after `Retry-After`; reservations keep \
            the machine."),
    ),
)]
pub async fn seat_map(
    State(maps): State<Arc<SeatMaps>>,
    ApiPath(event_id): ApiPath<String>,
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
    let answer = Answer::to(&headers, &rendered);
    maps.admit_read(answer.bytes(&rendered))
        .await
        .map_err(|Shed| ApiError::ReadsShed)?;
    Ok(answer.into_response(&rendered))
}

/// How a seat-map request is answered: 304 when the client's tag still names the map, else the
/// body, gzip-compressed (once, with the snapshot) when the client accepts it.
#[derive(Clone, Copy)]
enum Answer {
    NotModified,
    Gzip,
    Identity,
}

impl Answer {
    fn to(headers: &HeaderMap, rendered: &Rendered) -> Self {
        let matches = headers
            .get_all(header::IF_NONE_MATCH)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .any(|tag| tag.trim() == rendered.etag || tag.trim() == "*");
        if matches {
            Self::NotModified
        } else if accepts_gzip(headers) {
            Self::Gzip
        } else {
            Self::Identity
        }
    }

    /// The body bytes this answer sends (none for a 304), which its read budget counts.
    fn bytes(self, rendered: &Rendered) -> usize {
        match self {
            Self::NotModified => 0,
            Self::Gzip => rendered.gzip.len(),
            Self::Identity => rendered.body.len(),
        }
    }

    fn into_response(self, rendered: &Rendered) -> Response {
        let cache = (
            header::CACHE_CONTROL,
            HeaderValue::from_static(CACHE_CONTROL),
        );
        let vary = (header::VARY, HeaderValue::from_static("accept-encoding"));
        let json = (
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let gzip = (header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        let mut response = match self {
            Self::NotModified => (StatusCode::NOT_MODIFIED, [cache, vary]).into_response(),
            Self::Gzip => {
                let headers = [cache, vary, json, gzip];
                (StatusCode::OK, headers, rendered.gzip.clone()).into_response()
            }
            Self::Identity => {
                let headers = [cache, vary, json];
                (StatusCode::OK, headers, rendered.body.clone()).into_response()
            }
        };
        if let Ok(etag) = HeaderValue::from_str(&rendered.etag) {
            response.headers_mut().insert(header::ETAG, etag);
        }
        response
    }
}

/// Whether `Accept-Encoding` accepts gzip (by name or `*`, with a quality above zero).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default();
            let refused = parts.any(|param| {
                param
                    .strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// The event list.
#[derive(Serialize, ToSchema)]
pub struct EventList {
    /// Every event.
    events: Vec<EventEntry>,
}

/// One event of the list.
#[derive(Serialize, ToSchema)]
struct EventEntry {
    /// The event's id.
    #[schema(value_type = String)]
    event_id: EventId,
    /// Its human name.
    name: String,
    /// How long a hold lasts.
    hold_seconds: i64,
    /// The most seats one buyer may hold, buy or wait for, `null` for no limit.
    max_seats_per_buyer: Option<u32>,
    /// How many seconds each extension adds to a live hold; 0 allows none.
    hold_extension_seconds: i64,
    /// How many times one hold may be extended.
    max_hold_extensions: u32,
    /// Whether section requests that find too few seats wait in line (false once closed).
    waitlist: bool,
    /// When the sale starts (UTC); absent for a sale open from the start. Reservations sent
    /// before it wait in the pre-queue and are decided from then on, in a drawn order.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    sale_starts_at: Option<jiff::Timestamp>,
    /// The prices' ISO 4217 currency; absent when every seat is free.
    #[serde(skip_serializing_if = "Option::is_none")]
    currency: Option<String>,
    /// Each priced section's seat price in the currency's minor units; a section not named is
    /// free (absent when every seat is).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    prices: BTreeMap<String, u64>,
    /// Its seats counted by state, as of its seat map's snapshot.
    seats: StateCounts,
    /// Its sales channels: each one's sections are sold to its intents alone until its release.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    channels: Vec<ChannelEntry>,
}

/// One sales channel of an event.
#[derive(Serialize, ToSchema)]
struct ChannelEntry {
    /// Its name.
    name: String,
    /// When its sale starts, if not with the event's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    sale_starts_at: Option<jiff::Timestamp>,
    /// When its seats not held or sold become public, if ever.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, format = DateTime)]
    release_at: Option<jiff::Timestamp>,
    /// The sections set aside for it.
    sections: Vec<String>,
    /// How many seats those sections hold.
    seats: usize,
    /// Those seats counted by state, as of the event's seat map's snapshot.
    seats_by_state: StateCounts,
}

/// `GET /v1/events`: every event with its seats counted by state, from the same snapshots.
#[utoipa::path(
    get,
    path = "/v1/events",
    tag = "events",
    operation_id = "list_events",
    responses(
        (status = 200, description = "Every event, with its seats counted by state (public).",
            body = EventList, headers(
            ("Cache-Control" = String, description = "`public, max-age=1`."),
        )),
    ),
)]
pub async fn list(State(maps): State<Arc<SeatMaps>>) -> Result<Response, ApiError> {
    let events = maps
        .events()
        .await?
        .into_iter()
        .map(|(info, snapshot)| EventEntry {
            event_id: info.event_id,
            name: info.name,
            hold_seconds: info.hold.as_secs(),
            max_seats_per_buyer: info.max_seats_per_buyer.map(|limit| limit.seats()),
            hold_extension_seconds: info.extension.step.as_secs(),
            max_hold_extensions: info.extension.max,
            waitlist: info.waitlist.is_open(),
            sale_starts_at: info.sale_starts_at,
            currency: info.prices.currency.map(|code| code.to_string()),
            prices: info
                .prices
                .sections
                .iter()
                .map(|(section, price)| (section.to_string(), *price))
                .collect(),
            seats: snapshot.counts,
            channels: (info.channels.channels.iter())
                .map(|channel| ChannelEntry {
                    name: channel.name.to_string(),
                    sale_starts_at: channel.sale_starts_at,
                    release_at: channel.release_at,
                    sections: (info.channels.sections_of(&channel.name))
                        .map(ToString::to_string)
                        .collect(),
                    seats: channel.seats,
                    seats_by_state: snapshot.channel_counts(&channel.name),
                })
                .collect(),
        })
        .collect();
    let cache = [(
        header::CACHE_CONTROL,
        HeaderValue::from_static(CACHE_CONTROL),
    )];
    Ok((cache, Json(EventList { events })).into_response())
}
