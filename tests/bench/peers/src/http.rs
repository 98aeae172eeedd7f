//! The HTTP routes, over any [`Store`]: parsing, status codes and JSON bodies.

use std::sync::Arc;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::header::{self, HeaderName};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use jiff::Timestamp;
use serde_json::json;
use uuid::Uuid;

use crate::{Action, NewEvent, Reservation, ReserveBody, Reserved, Settled, Store};

/// An error answer: its status and a message, as `{"error": ...}`.
#[derive(Debug)]
pub enum ApiError {
    /// 400.
    BadRequest(String),
    /// 404.
    NotFound(String),
    /// 409.
    Conflict(String),
    /// 422.
    Unprocessable(String),
    /// 500; the cause is logged, not shown.
    Internal(anyhow::Error),
}

impl From<anyhow::Error> for ApiError {
    fn from(error: anyhow::Error) -> Self {
        Self::Internal(error)
    }
}

impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::JsonDataError(e) => Self::Unprocessable(e.body_text()),
            other => Self::BadRequest(other.body_text()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, message) = match self {
            Self::BadRequest(m) => (StatusCode::BAD_REQUEST, m),
            Self::NotFound(m) => (StatusCode::NOT_FOUND, m),
            Self::Conflict(m) => (StatusCode::CONFLICT, m),
            Self::Unprocessable(m) => (StatusCode::UNPROCESSABLE_ENTITY, m),
            Self::Internal(e) => {
                eprintln!("internal error: {e:#}");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal error".into())
            }
        };
        (status, Json(json!({ "error": message }))).into_response()
    }
}

type Answer = Result<Response, ApiError>;

/// The routes of the contract subset, deciding with `store`.
pub fn router<S: Store>(store: Arc<S>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/v1/events", post(create_event::<S>))
        .route("/v1/events/{event_id}/seats", get(seat_map::<S>))
        .route("/v1/events/{event_id}/reservations", post(reserve::<S>))
        .route("/v1/jobs/{job_id}", get(job::<S>))
        .route("/v1/jobs/{job_id}/confirm", post(confirm::<S>))
        .route("/v1/jobs/{job_id}/cancel", post(cancel::<S>))
        .with_state(store)
}

/// Connections the kernel holds until the server accepts them: seatclaim's backlog
/// (`seatclaim_runtime::listen::LISTEN_BACKLOG`), so that the peers' connections queue as its do.
const LISTEN_BACKLOG: u32 = 4_096;

/// Serves `router(store)` on `listen` until the process is stopped.
pub async fn serve<S: Store>(listen: &str, store: S) -> anyhow::Result<()> {
    let addr: std::net::SocketAddr = listen.parse()?;
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let listener = socket.listen(LISTEN_BACKLOG)?;
    eprintln!("listening on {}", listener.local_addr()?);
    axum::serve(listener, router(Arc::new(store))).await?;
    Ok(())
}

async fn create_event<S: Store>(
    State(store): State<Arc<S>>,
    body: Result<Json<NewEvent>, JsonRejection>,
) -> Answer {
    let Json(event) = body?;
    let seats = event.validate().map_err(ApiError::Unprocessable)?;
    if !store.create_event(&event).await? {
        return Err(ApiError::Conflict(format!(
            "event {} exists",
            event.event_id
        )));
    }
    let body = json!({ "event_id": event.event_id, "seats": seats });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

async fn seat_map<S: Store>(State(store): State<Arc<S>>, Path(event_id): Path<String>) -> Answer {
    // Taken before the read: the read reflects every decision answered before this instant.
    let as_of = Timestamp::now();
    let Some(seats) = store.seat_map(&event_id).await? else {
        return Err(ApiError::NotFound(format!(
            "event {event_id} does not exist"
        )));
    };
    let body = json!({ "event_id": event_id, "as_of": format!("{as_of:.3}"), "seats": seats });
    Ok(Json(body).into_response())
}

async fn reserve<S: Store>(
    State(store): State<Arc<S>>,
    Path(event_id): Path<String>,
    headers: HeaderMap,
    body: Result<Json<ReserveBody>, JsonRejection>,
) -> Answer {
    let key = headers
        .get("idempotency-key")
        .ok_or_else(|| ApiError::BadRequest("the Idempotency-Key header is required".into()))?
        .to_str()
        .ok()
        .filter(|k| (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| ApiError::BadRequest("Idempotency-Key is 1-255 printable ASCII".into()))?
        .to_owned();
    let Json(body) = body?;
    let reservation = Reservation::new(event_id, key, body).map_err(ApiError::Unprocessable)?;
    let job = match store.reserve(&reservation).await? {
        Reserved::Job(job) => job.as_of(Timestamp::now()),
        Reserved::UnknownEvent => {
            let event = &reservation.event_id;
            return Err(ApiError::NotFound(format!("event {event} does not exist")));
        }
        Reserved::KeyReused => {
            let message = "the Idempotency-Key was used for another request";
            return Err(ApiError::Unprocessable(message.into()));
        }
        Reserved::Unknown(what) => return Err(ApiError::Unprocessable(what)),
    };
    let status_url = format!("/v1/jobs/{}", job.job_id);
    let location = [(header::LOCATION, status_url.clone())];
    if let Some(seconds) = prefer_wait(&headers) {
        // Asked to wait: the decided job itself, as seatclaim answers a decision within the wait.
        let applied = [(HeaderName::from_static("preference-applied"), format!("wait={seconds}"))];
        return Ok((StatusCode::OK, location, applied, Json(job)).into_response());
    }
    let body = json!({ "job_id": job.job_id, "status": job.status, "status_url": status_url });
    Ok((StatusCode::ACCEPTED, location, Json(body)).into_response())
}

/// The positive `wait=N` of a `Prefer` header (RFC 7240), if the request has one. Every
/// reservation here is decided before its answer, so any such wait gets the decided job.
fn prefer_wait(headers: &HeaderMap) -> Option<u64> {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .find_map(|preference| preference.trim().strip_prefix("wait=")?.trim().parse().ok())
        .filter(|seconds| *seconds > 0)
}

fn job_id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| ApiError::NotFound(format!("job {text} does not exist")))
}

async fn job<S: Store>(State(store): State<Arc<S>>, Path(id): Path<String>) -> Answer {
    // `?wait=` is accepted and ignored: every job is decided before its POST is answered.
    match store.job(job_id(&id)?).await? {
        Some(job) => Ok(Json(job.as_of(Timestamp::now())).into_response()),
        None => Err(ApiError::NotFound(format!("job {id} does not exist"))),
    }
}

async fn settle<S: Store>(store: &S, id: &str, action: Action) -> Answer {
    let now = Timestamp::now();
    match store.settle(job_id(id)?, action).await? {
        Settled::Done(job) => Ok(Json(job.as_of(now)).into_response()),
        Settled::Conflict(job) => {
            let status = job.as_of(now).status;
            Err(ApiError::Conflict(format!("job {id} is {status}")))
        }
        Settled::NotFound => Err(ApiError::NotFound(format!("job {id} does not exist"))),
    }
}

async fn confirm<S: Store>(State(store): State<Arc<S>>, Path(id): Path<String>) -> Answer {
    settle(&*store, &id, Action::Confirm).await
}

async fn cancel<S: Store>(State(store): State<Arc<S>>, Path(id): Path<String>) -> Answer {
    settle(&*store, &id, Action::Cancel).await
}
