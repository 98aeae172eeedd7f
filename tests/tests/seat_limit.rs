//! The per-buyer seat limit over HTTP, with HS256 tokens: `max_seats_per_buyer` is checked when
//! the event is created (422 unless it is a count of 1 to 100, or 0 for none), an event created
//! without one gets `SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER` (10 unless set, 0 for none), a
//! buyer's claims past it are REJECTED with a reason naming the limit, another buyer is not
//! affected, and cancelled and expired holds make room again.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::time::Duration;

use axum::http::{Method, StatusCode};
use jiff::SignedDuration;
use seatclaim_e2e::tokens::{claims, hs256_token};
use seatclaim_e2e::{AppOptions, Reply, TestApp, assert_problem, eventually, hs256};
use serde_json::{Value, json};

const SECRET: &str = "seat-limit-secret-of-a-decent-length";
const DECIDED_WITHIN: Duration = Duration::from_secs(30);

async fn app() -> TestApp {
    TestApp::spawn_with(AppOptions {
        auth: Some(hs256(SECRET)),
        ..AppOptions::default()
    })
    .await
}

fn token(sub: &str, scope: &str) -> String {
    hs256_token(SECRET, &claims(sub, &json!({"scope": scope})))
}

async fn send(app: &TestApp, method: Method, path: &str, sub: &str, body: Option<Value>) -> Reply {
    let scope = if sub == "ops" { "seatclaim/admin" } else { "" };
    let mut call = app
        .request(method, path)
        .header("Authorization", &format!("Bearer {}", token(sub, scope)))
        .header("Idempotency-Key", &uuid::Uuid::new_v4().to_string());
    if let Some(body) = body {
        call = call.json(&body);
    }
    call.send().await
}

async fn create_event(app: &TestApp, event_id: &str, limit: Value, hold_seconds: u32) -> Reply {
    let body = json!({
        "event_id": event_id,
        "name": "Limited show",
        "hold_seconds": hold_seconds,
        "max_seats_per_buyer": limit,
        "sections": [{"section": "A", "rows": 1, "seats_per_row": 20}],
    });
    send(app, Method::POST, "/v1/events", "ops", Some(body)).await
}

/// Reserves `quantity` seats of section A as `buyer` and returns the job once decided.
async fn reserve(app: &TestApp, event_id: &str, buyer: &str, quantity: u32) -> Value {
    let path = format!("/v1/events/{event_id}/reservations");
    let body = json!({"section": "A", "quantity": quantity});
    let reply = send(app, Method::POST, &path, buyer, Some(body)).await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
    let job_id = reply.json()["job_id"].as_str().unwrap().to_owned();
    status_becomes(app, &job_id, buyer, |status| status != "PENDING").await
}

/// Polls the buyer's job until its status passes `wanted`.
async fn status_becomes(
    app: &TestApp,
    job_id: &str,
    buyer: &str,
    wanted: impl Fn(&str) -> bool,
) -> Value {
    eventually(DECIDED_WITHIN, &format!("job {job_id}"), || async {
        let reply = send(app, Method::GET, &format!("/v1/jobs/{job_id}"), buyer, None).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
        let job = reply.json();
        wanted(job["status"].as_str().unwrap_or_default()).then_some(job)
    })
    .await
}

fn assert_limited(job: &Value) {
    assert_eq!(job["status"], "REJECTED", "{job}");
    let reason = job["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("limit"), "{reason}");
}

#[tokio::test]
async fn a_seat_limit_outside_zero_to_a_hundred_is_refused_with_a_problem() {
    let app = app().await;
    let bad = [json!(101), json!(-1), json!("two")];
    for (n, bad) in bad.into_iter().enumerate() {
        let reply = create_event(&app, &format!("bad{n}"), bad.clone(), 60).await;
        let problem = assert_problem(&reply, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(
            problem["detail"]
                .as_str()
                .unwrap_or_default()
                .contains("max_seats_per_buyer"),
            "{bad}: {problem}"
        );
    }
    let good = [json!(0), json!(1), json!(100), Value::Null];
    for (n, good) in good.into_iter().enumerate() {
        let reply = create_event(&app, &format!("ok{n}"), good, 60).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text());
    }
    let mut limits = Vec::new();
    for n in 0..4 {
        limits.push(limit_of(&app, &format!("ok{n}")).await);
    }
    // 0 is no limit; `null`, as an absent field, takes the default.
    assert_eq!(limits, [Value::Null, json!(1), json!(100), json!(10)]);
}

/// The limit `GET /v1/events` shows for `event_id`.
async fn limit_of(app: &TestApp, event_id: &str) -> Value {
    let (status, events) = app.get("/v1/events").await;
    assert_eq!(status, StatusCode::OK, "{events}");
    let listed = events.as_array().or_else(|| events["events"].as_array());
    let event = listed
        .into_iter()
        .flatten()
        .find(|event| event["event_id"] == event_id)
        .unwrap_or_else(|| panic!("{event_id} is not listed: {events}"));
    event["max_seats_per_buyer"].clone()
}

/// An event created without a limit: one buyer holds at most the default's 10 seats, the
/// 11th is REJECTED for the limit, and another buyer is not affected.
#[tokio::test]
async fn an_event_created_without_a_limit_gets_the_default_of_ten() {
    let app = app().await;
    let body = json!({
        "event_id": "open",
        "name": "Unlimited by omission",
        "sections": [{"section": "A", "rows": 1, "seats_per_row": 30}],
    });
    let created = send(&app, Method::POST, "/v1/events", "ops", Some(body)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(limit_of(&app, "open").await, 10);
    assert_eq!(reserve(&app, "open", "hoarder", 6).await["status"], "HELD");
    assert_eq!(reserve(&app, "open", "hoarder", 4).await["status"], "HELD");
    let eleventh = reserve(&app, "open", "hoarder", 1).await;
    assert_limited(&eleventh);
    assert_eq!(
        eleventh["reason"], "buyer limit reached: 10 seats per buyer",
        "{eleventh}"
    );
    assert_eq!(reserve(&app, "open", "other", 10).await["status"], "HELD");
}

/// With `SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER=0`, an event created without a limit has none,
/// and `"max_seats_per_buyer": 0` says so explicitly under any default.
#[tokio::test]
async fn a_default_of_zero_and_an_explicit_zero_set_no_limit() {
    let unlimited = TestApp::spawn_with(AppOptions {
        auth: Some(hs256(SECRET)),
        default_max_seats_per_buyer: 0,
        ..AppOptions::default()
    })
    .await;
    let body = json!({
        "event_id": "free",
        "name": "No default",
        "sections": [{"section": "A", "rows": 1, "seats_per_row": 30}],
    });
    let created = send(&unlimited, Method::POST, "/v1/events", "ops", Some(body)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(limit_of(&unlimited, "free").await, Value::Null);
    for _ in 0..2 {
        assert_eq!(
            reserve(&unlimited, "free", "hoarder", 10).await["status"],
            "HELD"
        );
    }
    let limited = app().await;
    let created = create_event(&limited, "zero", json!(0), 60).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    assert_eq!(limit_of(&limited, "zero").await, Value::Null);
    for _ in 0..2 {
        assert_eq!(
            reserve(&limited, "zero", "hoarder", 10).await["status"],
            "HELD"
        );
    }
}

#[tokio::test]
async fn a_buyer_gets_no_more_seats_than_the_limit_until_some_are_given_back() {
    let app = app().await;
    let created = create_event(&app, "e1", json!(2), 300).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let first = reserve(&app, "e1", "alice", 1).await;
    assert_eq!(first["status"], "HELD", "{first}");
    assert_eq!(reserve(&app, "e1", "alice", 1).await["status"], "HELD");
    assert_limited(&reserve(&app, "e1", "alice", 1).await);
    assert_limited(&reserve(&app, "e1", "bob", 3).await);
    assert_eq!(reserve(&app, "e1", "bob", 2).await["status"], "HELD");

    let cancel = format!("/v1/jobs/{}/cancel", first["job_id"].as_str().unwrap());
    let cancelled = send(&app, Method::POST, &cancel, "alice", None).await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.text());
    let again = reserve(&app, "e1", "alice", 1).await;
    assert_eq!(again["status"], "HELD", "a cancel gives the seat back");
    let confirm = format!("/v1/jobs/{}/confirm", again["job_id"].as_str().unwrap());
    let sold = send(&app, Method::POST, &confirm, "alice", None).await;
    assert_eq!(sold.status, StatusCode::OK, "{}", sold.text());
    assert_limited(&reserve(&app, "e1", "alice", 1).await);
}

#[tokio::test]
async fn an_expired_hold_no_longer_counts() {
    let app = app().await;
    let created = create_event(&app, "short", json!(1), 60).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let held = reserve(&app, "short", "carol", 1).await;
    assert_eq!(held["status"], "HELD", "{held}");
    app.clock.advance(SignedDuration::from_secs(61));
    let job_id = held["job_id"].as_str().unwrap();
    status_becomes(&app, job_id, "carol", |status| status == "EXPIRED").await;
    let again = reserve(&app, "short", "carol", 1).await;
    assert_eq!(again["status"], "HELD", "{again}");
}
