//! Access codes of an event's sales channels (admin): created in bulk (listed, or generated and
//! returned once), read with what they hold and sold, revoked. The API keys each code's hash
//! with `SEATCLAIM_ACCESS_CODE_KEY`; the code itself is never stored, logged or answered again.

use std::collections::BTreeSet;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use jiff::Timestamp;
use seatclaim_core::domain::{
    AccessCode, ChannelName, CodeHash, CodeKey, CodeRecord, CodeTerms, EventId,
    MAX_CODES_PER_REQUEST, MAX_SEATS_PER_CODE, Reason, ReasonCode, ValidationError,
};
use seatclaim_core::ports::CodesCreation;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::caller::Caller;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiPath};
use crate::state::AppState;

/// The codes to create: `codes` listed, or `generate` new ones; the terms they share.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewCodes {
    /// The channel the codes admit to: one of the event's `channels`.
    #[schema(example = "fanclub")]
    channel: String,
    /// The codes, 1 to 10,000 of them, each 4 to 64 of `A-Z a-z 0-9 -`.
    #[schema(example = json!(["FAN-7Q2X"]))]
    codes: Option<Vec<String>>,
    /// How many codes to generate (`XXXX-XXXX`), 1 to 10,000; they are in this answer only.
    #[schema(minimum = 1, maximum = 10000)]
    generate: Option<u32>,
    /// The seats one code may hold and buy in all, 1 to 10,000.
    #[schema(minimum = 1, maximum = 10000, example = 4)]
    max_seats: u32,
    /// From when the codes may be used (RFC 3339); absent: at once.
    valid_from: Option<String>,
    /// Until when the codes may be used (RFC 3339); absent: for ever.
    valid_until: Option<String>,
    /// Whether a code is bound to the first buyer who holds seats with it (default false).
    bind: Option<bool>,
}

/// Codes created.
#[derive(Serialize, ToSchema)]
#[schema(as = CodesCreated)]
pub struct Created {
    /// The event.
    #[schema(value_type = String)]
    event_id: EventId,
    /// Their channel.
    channel: String,
    /// How many were created.
    created: usize,
    /// The generated codes, in this answer only (absent for listed codes).
    #[serde(skip_serializing_if = "Option::is_none")]
    codes: Option<Vec<String>>,
}

/// A code's standing.
#[derive(Serialize, ToSchema)]
#[schema(as = CodeStanding)]
pub struct Standing {
    /// The channel it admits to.
    channel: String,
    /// The seats it may hold and buy in all.
    max_seats: u32,
    /// Seats held under it now (and waited for in a line).
    held: u32,
    /// Seats sold under it.
    sold: u32,
    /// Seats it may still take.
    left: u32,
    /// From when it may be used.
    #[schema(value_type = Option<String>, format = DateTime)]
    valid_from: Option<Timestamp>,
    /// Until when it may be used.
    #[schema(value_type = Option<String>, format = DateTime)]
    valid_until: Option<Timestamp>,
    /// Whether it binds to its first buyer.
    bind: bool,
    /// Whether a buyer is bound to it.
    bound: bool,
    /// Whether it was revoked.
    revoked: bool,
}

/// The deployment's key, or the 503 that says how to set one.
fn key(state: &AppState) -> Result<&CodeKey, ApiError> {
    state.access.code_key.as_ref().ok_or_else(|| {
        ApiError::NotConfigured(
            "access codes need SEATCLAIM_ACCESS_CODE_KEY (32 bytes or more) on this deployment"
                .into(),
        )
    })
}

/// The event named by the path, the caller checked for the admin scope.
pub(super) fn admin_event(
    state: &AppState,
    caller: &Caller,
    raw: &str,
) -> Result<EventId, ApiError> {
    caller.require_admin(&state.access.admin_scope)?;
    EventId::parse(raw).map_err(|_| ApiError::NotFound(format!("event {raw} does not exist")))
}

fn instant(field: &'static str, text: Option<&String>) -> Result<Option<Timestamp>, ApiError> {
    let parse = |at: &String| {
        at.parse::<Timestamp>().map_err(|_| {
            ValidationError::new(field, "must be an RFC 3339 timestamp with an offset")
        })
    };
    Ok(text.map(parse).transpose()?)
}

impl NewCodes {
    /// The codes as typed (listed, or generated now) and the terms they share.
    fn parse(&self) -> Result<(Vec<AccessCode>, CodeTerms), ApiError> {
        let codes = match (&self.codes, self.generate) {
            (Some(codes), None) => listed(codes)?,
            (None, Some(count)) if (1..=MAX_CODES_PER_REQUEST).contains(&(count as usize)) => {
                let generated: Result<Vec<_>, _> =
                    (0..count).map(|_| AccessCode::generate()).collect();
                generated.map_err(|e| ApiError::NotConfigured(format!("no randomness: {e}")))?
            }
            (None, Some(_)) => {
                let range = format!("must be 1 to {MAX_CODES_PER_REQUEST}");
                return Err(ValidationError::new("generate", range).into());
            }
            _ => {
                let both = "or generate must be given, but not both";
                return Err(ValidationError::new("codes", both).into());
            }
        };
        if !(1..=MAX_SEATS_PER_CODE).contains(&self.max_seats) {
            let range = format!("must be 1 to {MAX_SEATS_PER_CODE}");
            return Err(ValidationError::new("max_seats", range).into());
        }
        let terms = CodeTerms {
            channel: ChannelName::parse(&self.channel)?,
            max_seats: self.max_seats,
            valid_from: instant("valid_from", self.valid_from.as_ref())?,
            valid_until: instant("valid_until", self.valid_until.as_ref())?,
            bind: self.bind.unwrap_or(false),
        };
        Ok((codes, terms))
    }
}

/// Listed codes: each well-formed, none twice.
fn listed(codes: &[String]) -> Result<Vec<AccessCode>, ApiError> {
    if codes.is_empty() || codes.len() > MAX_CODES_PER_REQUEST {
        let range = format!("must list 1 to {MAX_CODES_PER_REQUEST} codes");
        return Err(ValidationError::new("codes", range).into());
    }
    let distinct: BTreeSet<&String> = codes.iter().collect();
    if distinct.len() < codes.len() {
        return Err(ValidationError::new("codes", "lists a code more than once").into());
    }
    Ok(codes
        .iter()
        .map(|c| AccessCode::parse(c))
        .collect::<Result<_, _>>()?)
}

/// `POST /v1/events/{event_id}/codes`: creates access codes of one of the event's channels.
#[utoipa::path(
    post,
    path = "/v1/events/{event_id}/codes",
    tag = "presales",
    operation_id = "create_codes",
    params(("event_id" = String, Path, description = "The event.")),
    request_body(content = NewCodes, content_type = "application/json",
        example = json!({"channel": "fanclub", "generate": 500, "max_seats": 4})),
    security(("bearerAuth" = [])),
    responses(
        (status = 201, description = "Created; generated codes are in this answer only.", body = Created),
        (status = 400, description = "The body is not JSON (a syntax error), or a path that is \
            not UTF-8 once percent-decoded."),
        (status = 403, description = "A token without the admin scope."),
        (status = 408, description = "The body did not arrive within \
            `SEATCLAIM_BODY_READ_TIMEOUT_SECS` seconds."),
        (status = 413, description = "The body is over 1 MiB."),
        (status = 415, description = "The body is not declared as JSON."),
        (status = 404, description = "No such event."),
        (status = 409, description = "A code of the request exists already (`code_exists`); none was created."),
        (status = 422, description = "A broken rule: both or neither of `codes` and `generate`, a \
            malformed or repeated code, `max_seats` outside 1..=10000, a bad instant, or a \
            channel the event lacks (`channel_unknown`)."),
        (status = 503, description = "No `SEATCLAIM_ACCESS_CODE_KEY` on this deployment."),
    ),
)]
pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(raw): ApiPath<String>,
    ApiJson(body): ApiJson<NewCodes>,
) -> Result<(StatusCode, Json<Created>), ApiError> {
    let event_id = admin_event(&state, &caller, &raw)?;
    let key = key(&state)?;
    let (codes, terms) = body.parse()?;
    let records: Vec<CodeRecord> = (codes.iter())
        .map(|code| CodeRecord {
            hash: key.hash(&event_id, code),
            terms: terms.clone(),
            bound_to: None,
            revoked: false,
        })
        .collect();
    let created = match state
        .backend
        .catalog
        .create_codes(&event_id, &records)
        .await?
    {
        CodesCreation::Created(created) => created,
        CodesCreation::NoSuchEvent => {
            return Err(ApiError::NotFound(format!(
                "event {event_id} does not exist"
            )));
        }
        CodesCreation::NoSuchChannel => {
            let text = format!("event {event_id} has no channel {}", terms.channel);
            return Err(ApiError::Refused(Reason::new(
                ReasonCode::ChannelUnknown,
                text,
            )));
        }
        CodesCreation::Exists => return Err(ApiError::CodeExists(event_id)),
    };
    let generated = body
        .generate
        .map(|_| codes.iter().map(|c| c.reveal().to_owned()).collect());
    let answer = Created {
        event_id,
        channel: terms.channel.to_string(),
        created,
        codes: generated,
    };
    Ok((StatusCode::CREATED, Json(answer)))
}

/// The hash of the path's code, or the 404 a malformed code gets.
fn hashed(state: &AppState, event_id: &EventId, raw: &str) -> Result<CodeHash, ApiError> {
    let code = AccessCode::parse(raw).map_err(|_| ApiError::NotFound("no such code".into()))?;
    Ok(key(state)?.hash(event_id, &code))
}

/// `GET /v1/events/{event_id}/codes/{code}`: a code's terms and the seats held and sold under it.
#[utoipa::path(
    get,
    path = "/v1/events/{event_id}/codes/{code}",
    tag = "presales",
    operation_id = "show_code",
    params(
        ("event_id" = String, Path, description = "The event."),
        ("code" = String, Path, description = "The access code."),
    ),
    security(("bearerAuth" = [])),
    responses(
        (status = 200, description = "The code's standing.", body = Standing),
        (status = 400, description = "A path that is not UTF-8 once percent-decoded."),
        (status = 403, description = "A token without the admin scope."),
        (status = 404, description = "No such event or code."),
        (status = 503, description = "No `SEATCLAIM_ACCESS_CODE_KEY` on this deployment."),
    ),
)]
pub async fn show(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((raw, code)): ApiPath<(String, String)>,
) -> Result<Json<Standing>, ApiError> {
    let event_id = admin_event(&state, &caller, &raw)?;
    let hash = hashed(&state, &event_id, &code)?;
    let now = state.backend.clock.now();
    let standing = state.backend.catalog.code(&event_id, &hash, now).await?;
    let standing = standing.ok_or_else(|| ApiError::NotFound("no such code".into()))?;
    let (record, terms) = (&standing.record, &standing.record.terms);
    let used = standing.held.saturating_add(standing.sold);
    Ok(Json(Standing {
        channel: terms.channel.to_string(),
        max_seats: terms.max_seats,
        held: standing.held,
        sold: standing.sold,
        left: terms.max_seats.saturating_sub(used),
        valid_from: terms.valid_from,
        valid_until: terms.valid_until,
        bind: terms.bind,
        bound: record.bound_to.is_some(),
        revoked: record.revoked,
    }))
}

/// `DELETE /v1/events/{event_id}/codes/{code}`: revokes a code; holds made with it stay until
/// they are decided.
#[utoipa::path(
    delete,
    path = "/v1/events/{event_id}/codes/{code}",
    tag = "presales",
    operation_id = "revoke_code",
    params(
        ("event_id" = String, Path, description = "The event."),
        ("code" = String, Path, description = "The access code."),
    ),
    security(("bearerAuth" = [])),
    responses(
        (status = 204, description = "Revoked (again: still revoked)."),
        (status = 400, description = "A path that is not UTF-8 once percent-decoded."),
        (status = 403, description = "A token without the admin scope."),
        (status = 404, description = "No such event or code."),
        (status = 503, description = "No `SEATCLAIM_ACCESS_CODE_KEY` on this deployment."),
    ),
)]
pub async fn revoke(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((raw, code)): ApiPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    let event_id = admin_event(&state, &caller, &raw)?;
    let hash = hashed(&state, &event_id, &code)?;
    match state.backend.catalog.revoke_code(&event_id, &hash).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(ApiError::NotFound("no such code".into())),
    }
}
