//! The operator's summary of an event (admin): its seats by state per section and per channel,
//! its codes and the seats spent under them, its lines and pre-queue, and the holds about to
//! lapse. The seats come from the seat map's snapshot (read at most once per
//! `SEATCLAIM_SEAT_MAP_MAX_AGE_MS` per process, shared with `GET /v1/events/{id}/seats`), the
//! rest from the tallies the store keeps ([`EventTallies`]): no request reads every seat.

use axum::Json;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use jiff::{SignedDuration, Timestamp};
use seatclaim_core::domain::{ChannelName, EventId, ValidationError};
use seatclaim_core::ports::{Catalog, EventTallies};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::codes::admin_event;
use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::ApiPath;
use crate::seat_maps::{Snapshot, StateCounts};
use crate::state::AppState;

/// How far ahead holds about to lapse are counted, by default: five minutes.
const EXPIRING_WITHIN_SECONDS: i64 = 300;
/// The farthest a summary looks ahead: a day, the longest hold.
const MOST_EXPIRING_WITHIN_SECONDS: i64 = 86_400;

/// The summary's query.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Horizon {
    /// Count the holds that lapse within this many seconds (1 to 86,400; default 300).
    expiring_within: Option<i64>,
}

/// One section's seats.
#[derive(Serialize, ToSchema)]
pub struct SectionSummary {
    /// The section.
    section: String,
    /// The channel it is set aside for (absent: public); kept after the channel's release.
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<String>,
    /// Its seats by state.
    seats: StateCounts,
}

/// One channel's seats.
#[derive(Serialize, ToSchema)]
pub struct ChannelSummary {
    /// The channel.
    name: String,
    /// Whether its `release_at` has passed: its seats are public.
    released: bool,
    /// The seats of its sections by state.
    seats: StateCounts,
    /// Intents waiting for the draw of its own opening (0 once drawn, or for a channel that
    /// opens with the event).
    prequeue: u64,
}

/// The event's codes.
#[derive(Serialize, ToSchema)]
pub struct CodesSummary {
    /// Codes created, revoked ones included.
    issued: u64,
    /// Seats held under them now, or waited for in a line.
    seats_held: u64,
    /// Seats sold under them.
    seats_sold: u64,
}

/// Holds about to lapse.
#[derive(Serialize, ToSchema)]
pub struct ExpiringSummary {
    /// How far ahead they were counted.
    within_seconds: i64,
    /// Live holds whose deadline falls within that.
    holds: u64,
}

/// An operator's summary of an event.
#[derive(Serialize, ToSchema)]
#[schema(as = EventSummary)]
pub struct Summary {
    /// The event.
    #[schema(value_type = String)]
    event_id: EventId,
    /// When the seats were read (the seat map's `as_of`).
    #[schema(value_type = String, format = DateTime)]
    as_of: Timestamp,
    /// All its seats by state, as the seat map counts them.
    seats: StateCounts,
    /// Each section's seats, in section order.
    sections: Vec<SectionSummary>,
    /// Each channel's seats, in the organiser's order.
    channels: Vec<ChannelSummary>,
    /// Its access codes.
    codes: CodesSummary,
    /// Jobs waiting in its sections' lines.
    waitlist: u64,
    /// Intents waiting for the draw of the event's own opening (0 once drawn, or without one).
    prequeue: u64,
    /// Holds about to lapse.
    holds_expiring: ExpiringSummary,
}

/// `GET /v1/events/{event_id}/summary[?expiring_within=SECONDS]`: the operator's summary.
#[utoipa::path(
    get,
    path = "/v1/events/{event_id}/summary",
    tag = "events",
    operation_id = "event_summary",
    params(
        ("event_id" = String, Path, description = "The event."),
        ("expiring_within" = Option<i64>, Query, description = "Count the holds that lapse \
            within this many seconds (1 to 86400; default 300)."),
    ),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The summary.", body = Summary),
        (status = 400, description = "A malformed query, or a path that is not UTF-8."),
        (status = 403, description = "A token without the admin scope."),
        (status = 404, description = "No such event."),
        (status = 422, description = "`expiring_within` outside 1..=86400."),
    ),
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(raw): ApiPath<String>,
    query: Result<Query<Horizon>, QueryRejection>,
) -> Result<Json<Summary>, ApiError> {
    let event_id = admin_event(&state, &caller, &raw)?;
    let Query(Horizon { expiring_within }) = query?;
    let within = expiring_within.unwrap_or(EXPIRING_WITHIN_SECONDS);
    if !(1..=MOST_EXPIRING_WITHIN_SECONDS).contains(&within) {
        let range = format!("must be 1 to {MOST_EXPIRING_WITHIN_SECONDS} seconds");
        return Err(ValidationError::new("expiring_within", range).into());
    }
    let missing = || ApiError::NotFound(format!("event {event_id} does not exist"));
    let snapshot = state.seat_maps.get(&event_id).await?.ok_or_else(missing)?;
    let backend = &state.backend;
    let now = backend.clock.now();
    let horizon = now + SignedDuration::from_secs(within);
    let catalog = &backend.catalog;
    let tallies = (catalog.tallies(&event_id, now, horizon).await?).ok_or_else(missing)?;
    let mut prequeues = vec![waiting(catalog.as_ref(), &event_id, None).await?];
    for channel in &snapshot.channels().channels {
        prequeues.push(waiting(catalog.as_ref(), &event_id, Some(&channel.name)).await?);
    }
    Ok(Json(summary(
        event_id, &snapshot, &tallies, &prequeues, within,
    )))
}

/// How many intents wait for the draw of one of the event's openings (0 once drawn, or
/// without one).
async fn waiting(
    catalog: &dyn Catalog,
    event_id: &EventId,
    channel: Option<&ChannelName>,
) -> Result<u64, ApiError> {
    let opening = catalog.opening(event_id, channel).await?;
    Ok(opening
        .filter(|o| o.draw.is_none())
        .map_or(0, |o| o.prequeued))
}

fn summary(
    event_id: EventId,
    snapshot: &Snapshot,
    tallies: &EventTallies,
    prequeues: &[u64],
    within: i64,
) -> Summary {
    let channels = snapshot.channels();
    let sections = (snapshot.by_section.iter())
        .map(|(section, seats)| SectionSummary {
            section: section.to_string(),
            channel: channels.sections.get(section).map(ToString::to_string),
            seats: *seats,
        })
        .collect();
    let channels = (channels.channels.iter())
        .zip(prequeues.iter().skip(1))
        .map(|(channel, prequeue)| {
            let mut seats = StateCounts::default();
            for section in channels.sections_of(&channel.name) {
                seats.add_all(
                    snapshot
                        .by_section
                        .get(section)
                        .unwrap_or(&StateCounts::default()),
                );
            }
            ChannelSummary {
                name: channel.name.to_string(),
                released: channel.release_at.is_some_and(|at| at <= snapshot.as_of),
                seats,
                prequeue: *prequeue,
            }
        })
        .collect();
    Summary {
        event_id,
        as_of: snapshot.as_of,
        seats: snapshot.counts,
        sections,
        channels,
        codes: CodesSummary {
            issued: tallies.codes_issued,
            seats_held: tallies.code_seats_held,
            seats_sold: tallies.code_seats_sold,
        },
        waitlist: tallies.waitlisted,
        prequeue: prequeues.first().copied().unwrap_or(0),
        holds_expiring: ExpiringSummary {
            within_seconds: within,
            holds: tallies.holds_expiring,
        },
    }
}
