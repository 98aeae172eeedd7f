//! `Prefer: wait=N` on the reservation POST (RFC 7240): the decided job in the POST's own answer
//! when the decision comes within the wait, else 202 as without it; on every backend, and with
//! the worker in a process of its own.

use std::time::Duration;

use axum::http::{Method, StatusCode};
use seatclaim_api::ServerLimits;
use seatclaim_e2e::{AppOptions, ChildProcess, Reply, TestApp, assert_problem};
use serde_json::{Value, json};

use super::{app_with_event, seats};

/// The reservation POST with `prefer` as its `Prefer` header (none if `None`).
async fn reserve(app: &TestApp, key: &str, body: &Value, prefer: Option<&str>) -> Reply {
    let mut call = app
        .request(Method::POST, "/v1/events/e1/reservations")
        .header("Idempotency-Key", key);
    if let Some(prefer) = prefer {
        call = call.header("Prefer", prefer);
    }
    call.json(body).send().await
}

fn preference_applied(reply: &Reply) -> Option<&str> {
    reply
        .headers
        .get("preference-applied")
        .map(|v| v.to_str().expect("a text header"))
}

/// Asserts the 200 of a decided job: its `Location`, `Preference-Applied: wait=<applied>`, and a
/// body equal to what `GET /v1/jobs/{id}` shows; returns the body.
async fn assert_decided(app: &TestApp, reply: &Reply, applied: u64) -> Value {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text());
    let job = reply.json();
    let job_id = job["job_id"].as_str().expect("a job id");
    assert_eq!(reply.header("location"), format!("/v1/jobs/{job_id}"));
    let expected = format!("wait={applied}");
    assert_eq!(preference_applied(reply), Some(expected.as_str()));
    assert_eq!(job, app.job(job_id).await, "one job, one rendering");
    job
}

/// Asserts the 202 of today (body, `Location`, `Retry-After`) with `applied` as its
/// `Preference-Applied`; returns the job id.
fn assert_accepted(reply: &Reply, applied: Option<&str>) -> String {
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
    let body = reply.json();
    let job_id = body["job_id"].as_str().expect("a job id").to_owned();
    let status_url = format!("/v1/jobs/{job_id}");
    assert_eq!(
        body,
        json!({"job_id": job_id, "status": "PENDING", "status_url": status_url})
    );
    assert_eq!(reply.header("location"), status_url);
    assert_eq!(reply.header("retry-after"), "1");
    assert_eq!(preference_applied(reply), applied);
    job_id
}

/// An app with event `e1` whose worker never runs (a decision cannot come), with `limits`.
async fn undecided_app(limits: ServerLimits) -> TestApp {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        limits,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 10, 20, 300).await;
    app
}

#[tokio::test]
async fn a_decision_within_the_wait_is_the_post_answer() {
    let app = app_with_event().await;
    let held = reserve(&app, "k1", &seats(&["A-1-1"]), Some("wait=5")).await;
    let job = assert_decided(&app, &held, 5).await;
    assert_eq!(job["status"], "HELD");
    assert_eq!(job["seat_ids"], json!(["A-1-1"]));
    // A wait past the cap (10 by default) is honoured as the cap; respond-async changes nothing.
    let other = json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]});
    let rejected = reserve(&app, "k2", &other, Some("respond-async, wait=600")).await;
    let job = assert_decided(&app, &rejected, 10).await;
    assert_eq!(job["status"], "REJECTED");
}

#[tokio::test]
async fn a_retry_answers_the_same_job_decided_at_once() {
    let app = app_with_event().await;
    let body = seats(&["A-2-1"]);
    let first = reserve(&app, "k1", &body, Some("wait=5")).await;
    let job = assert_decided(&app, &first, 5).await;
    let again = reserve(&app, "k1", &body, Some("wait=3")).await;
    assert_eq!(assert_decided(&app, &again, 3).await, job);
    // The same retry without Prefer is the 202 of today, for the same job.
    let plain = reserve(&app, "k1", &body, None).await;
    assert_eq!(
        assert_accepted(&plain, None),
        job["job_id"].as_str().unwrap()
    );
}

#[tokio::test]
async fn without_a_usable_wait_the_answer_is_202_at_once() {
    let app = undecided_app(ServerLimits::default()).await;
    let unusable = [
        None,
        Some("respond-async"),
        Some("wait=0"),
        Some("wait=soon"),
        Some("wait=-1"),
        Some("wait=2.5"),
        Some("return=minimal"),
    ];
    for (n, prefer) in unusable.into_iter().enumerate() {
        let reply = reserve(&app, &format!("k{n}"), &seats(&["A-1-1"]), prefer).await;
        assert_accepted(&reply, None);
    }
}

#[tokio::test]
async fn no_decision_within_the_wait_is_202_with_the_wait_applied() {
    let app = undecided_app(ServerLimits {
        max_prefer_wait_secs: 1,
        ..ServerLimits::default()
    })
    .await;
    let reply = reserve(&app, "k1", &seats(&["A-1-1"]), Some("wait=30")).await;
    let job_id = assert_accepted(&reply, Some("wait=1"));
    assert_eq!(app.job(&job_id).await["status"], "PENDING");
}

#[tokio::test]
async fn with_every_long_poll_slot_taken_the_answer_is_202_at_once() {
    let app = undecided_app(ServerLimits {
        max_long_polls: 0,
        ..ServerLimits::default()
    })
    .await;
    let reply = reserve(&app, "k1", &seats(&["A-1-1"]), Some("wait=10")).await;
    assert_accepted(&reply, None);
}

#[tokio::test]
async fn error_answers_carry_no_preference_applied() {
    let app = app_with_event().await;
    let unknown = app
        .request(Method::POST, "/v1/events/nope/reservations")
        .header("Idempotency-Key", "k1")
        .header("Prefer", "wait=5")
        .json(&seats(&["A-1-1"]))
        .send()
        .await;
    assert_problem(&unknown, StatusCode::NOT_FOUND);
    let no_key = app
        .request(Method::POST, "/v1/events/e1/reservations")
        .header("Prefer", "wait=5")
        .json(&seats(&["A-1-1"]))
        .send()
        .await;
    assert_problem(&no_key, StatusCode::BAD_REQUEST);
    let bad_body = reserve(&app, "k2", &json!({"buyer_id": "b1"}), Some("wait=5")).await;
    assert_problem(&bad_body, StatusCode::UNPROCESSABLE_ENTITY);
    for reply in [&unknown, &no_key, &bad_body] {
        assert_eq!(preference_applied(reply), None);
    }
}

#[tokio::test]
async fn a_worker_in_its_own_process_decides_within_the_wait() {
    let app = undecided_app(ServerLimits::default()).await;
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".into()),
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".into()),
        ("RUST_LOG", "info".into()),
    ]);
    let worker = ChildProcess::start("seatclaim-worker", &env);
    let reply = reserve(&app, "k1", &seats(&["A-3-1"]), Some("wait=10")).await;
    let job = assert_decided(&app, &reply, 10).await;
    assert_eq!(job["status"], "HELD");
    worker.terminate(Duration::from_secs(20));
}
