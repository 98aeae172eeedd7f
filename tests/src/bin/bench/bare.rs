//! `seatclaim-bench bare`: an axum server that stores nothing and decides nothing, and answers
//! every route the benchmarks load as seatclaim answers it, with bodies of the same shape and
//! size. It is the floor under any design built on axum: what the HTTP exchange alone costs the
//! server (hyper, the router, JSON, loopback TCP), measured with the same clients.
//!
//! - `POST /v1/events/{event_id}/reservations`: 202 with the PENDING job's id, or, asked with
//!   `Prefer: wait`, 200 with a REJECTED job (the decision nearly every request of a sold-out
//!   benchmark event gets); the body is parsed as JSON, as any server must to answer it;
//! - `GET /v1/jobs/{job_id}`: 200 with that REJECTED job;
//! - `GET /v1/events/{event_id}/seats`: a seat map of `--seats` AVAILABLE seats, from memory,
//!   built again each second (so that a client waiting for a newer map, as the load generator
//!   does before it checks its invariants, sees a newer `as_of`);
//! - `POST /v1/events`: 201, so that the load generator can create its event.
//!
//! With `--durable FILE`, a reservation is answered only once its body is appended to `FILE` and
//! flushed to the disk (`durable_log.rs`): the floor under any server that, as seatclaim must,
//! answers a request only once it is durable.

use std::net::SocketAddr;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use seatclaim_core::domain::JobId;
use serde_json::{Value, json};

use super::durable_log::DurableLog;

/// Serves the bare routes on `listen`, with a seat map of `seats` seats, each reservation made
/// durable in `log` first if one is given.
pub(crate) async fn serve(
    listen: SocketAddr,
    seats: usize,
    log: Option<DurableLog>,
) -> anyhow::Result<()> {
    let map = Arc::new(RwLock::new(seat_map(seats)));
    tokio::spawn({
        let map = Arc::clone(&map);
        async move {
            let mut every = tokio::time::interval(Duration::from_secs(1));
            loop {
                every.tick().await;
                let next = seat_map(seats);
                *map.write().unwrap_or_else(PoisonError::into_inner) = next;
            }
        }
    });
    let app = axum::Router::new()
        .route("/v1/events", post(|| async { StatusCode::CREATED }))
        .route("/v1/events/{event_id}/reservations", post(reserve))
        .route("/v1/jobs/{job_id}", get(show))
        .route(
            "/v1/events/{event_id}/seats",
            get(move || {
                let body = map.read().unwrap_or_else(PoisonError::into_inner).clone();
                async move {
                    let headers = [
                        (header::CONTENT_TYPE, "application/json"),
                        (header::CACHE_CONTROL, "public, max-age=1"),
                        (header::ETAG, "W/\"0\""),
                    ];
                    (headers, body)
                }
            }),
        )
        .with_state(log);
    // The service's backlog, so that the floor's connections queue as seatclaim's do.
    let listener = seatclaim_runtime::listen::listen(listen)?;
    axum::serve(listener, app).await?;
    Ok(())
}

/// A new job: 202 with its id, or 200 with its decision when the client asked to wait; made
/// durable first if the server has a log (503 if the log fails).
async fn reserve(
    State(log): State<Option<DurableLog>>,
    Path(event_id): Path<String>,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let Ok(body) = serde_json::from_slice::<Value>(&raw) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    if let Some(log) = log
        && log.append(raw.to_vec()).await.is_err()
    {
        return StatusCode::SERVICE_UNAVAILABLE.into_response();
    }
    let job_id = JobId::new();
    let status_url = format!("/v1/jobs/{job_id}");
    let location = HeaderValue::from_str(&status_url).ok();
    let mut response = if headers.contains_key("prefer") {
        let buyer = body["buyer_id"].as_str().unwrap_or_default();
        let mut decided = rejected(&job_id.to_string(), &event_id, buyer).into_response();
        decided
            .headers_mut()
            .insert("preference-applied", HeaderValue::from_static("wait=5"));
        decided
    } else {
        let mut accepted = (
            StatusCode::ACCEPTED,
            Json(json!({"job_id": job_id, "status": "PENDING", "status_url": status_url})),
        )
            .into_response();
        accepted
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        accepted
    };
    if let Some(location) = location {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}

/// A job, always decided: REJECTED.
async fn show(Path(job_id): Path<String>) -> Json<Value> {
    rejected(&job_id, "bare", "bare")
}

/// A REJECTED job as seatclaim shows one.
fn rejected(job_id: &str, event_id: &str, buyer_id: &str) -> Json<Value> {
    Json(json!({
        "job_id": job_id, "status": "REJECTED", "event_id": event_id, "buyer_id": buyer_id,
        "seat_ids": [], "hold_expires_at": null, "reason": "seat no longer available",
        "reason_code": "seat_unavailable", "hold_extensions": 0,
    }))
}

/// A seat map of `seats` AVAILABLE seats as seatclaim renders one, `as_of` now.
fn seat_map(seats: usize) -> axum::body::Bytes {
    let seats: Vec<Value> = (0..seats)
        .map(|n| {
            let section = format!("S{}", n / 1_000);
            let (row, number) = ((n % 1_000) / 20 + 1, n % 20 + 1);
            json!({"seat_id": format!("{section}-{row}-{number}"), "section": section, "state": "AVAILABLE"})
        })
        .collect();
    let map = json!({"event_id": "map", "as_of": jiff::Timestamp::now(), "seats": seats});
    axum::body::Bytes::from(map.to_string())
}
