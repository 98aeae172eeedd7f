//! A sale's opening over HTTP: `sale_starts_at` is listed; a reservation before it is answered
//! 202 at once (even asked to wait) and its job shows `queue.opens_at`; one intent per buyer waits
//! in the pre-queue (409 `already-queued` naming it); at the start the pre-queue is decided and
//! the draw is published as `SaleOpened` with its seed and digest.

use axum::http::{Method, StatusCode};
use jiff::{SignedDuration, Timestamp};
use seatclaim_e2e::{TestApp, assert_problem, eventually};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Reserves a seat of section S in event `op` for `buyer` under `key`, asking to wait.
async fn reserve(app: &TestApp, buyer: &str, key: &str) -> (StatusCode, Value) {
    let reply = app
        .request(Method::POST, "/v1/events/op/reservations")
        .header("idempotency-key", key)
        .header("prefer", "wait=10")
        .json(&json!({"buyer_id": buyer, "section": "S", "quantity": 1}))
        .send()
        .await;
    (reply.status, reply.json())
}

#[tokio::test]
async fn a_pre_queue_waits_for_the_start_and_is_drawn_at_it() {
    let app = TestApp::spawn().await;
    let starts = Timestamp::from_second(Timestamp::now().as_second()).unwrap()
        + SignedDuration::from_secs(4);
    let created = app
        .create_event(&json!({"event_id": "op", "name": "Opening",
            "sale_starts_at": starts.to_string(),
            "sections": [{"section": "S", "rows": 1, "seats_per_row": 1}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let (_, list) = app.get("/v1/events").await;
    assert_eq!(list["events"][0]["sale_starts_at"], starts.to_string());

    let (status, first) = reserve(&app, "b1", "k1").await;
    assert_eq!(status, StatusCode::ACCEPTED, "answered at once: {first}");
    let first_id = first["job_id"].as_str().unwrap().to_owned();
    let waiting = app.job(&first_id).await;
    assert_eq!(waiting["status"], "PENDING");
    assert_eq!(waiting["queue"], json!({"opens_at": starts.to_string()}));

    let (status, problem) = reserve(&app, "b1", "k1-again").await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["type"], "urn:seatclaim:problem:already-queued");
    assert_eq!(problem["job_id"], first_id.as_str());
    let (status, retried) = reserve(&app, "b1", "k1").await;
    assert_eq!(
        (status, &retried["job_id"]),
        (StatusCode::ACCEPTED, &first["job_id"])
    );
    let (_, second) = reserve(&app, "b2", "k2").await;
    let second_id = second["job_id"].as_str().unwrap().to_owned();

    let decided = eventually(DECIDED_WITHIN, "both pre-queued jobs decided", || async {
        let jobs = [app.job(&first_id).await, app.job(&second_id).await];
        jobs.iter()
            .all(|job| job["status"] != "PENDING")
            .then_some(jobs)
    })
    .await;
    let mut statuses: Vec<&str> = decided
        .iter()
        .map(|j| j["status"].as_str().unwrap())
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses, ["HELD", "REJECTED"], "one seat for two");
    assert!(
        Timestamp::now() >= starts,
        "nothing is decided before the start"
    );

    let opened = app.published_of("SaleOpened", DECIDED_WITHIN).await;
    let detail = &opened["detail"];
    assert_eq!(
        (&detail["event_id"], &detail["shuffled"]),
        (&json!("op"), &json!(2))
    );
    assert_eq!(detail["seed"].as_str().unwrap().len(), 64);
    assert_eq!(detail["digest"].as_str().unwrap().len(), 64);
}

#[tokio::test]
async fn a_start_that_is_not_rfc_3339_is_refused() {
    let app = TestApp::spawn().await;
    let created = app
        .create_event(&json!({"event_id": "bad", "name": "Bad start",
            "sale_starts_at": "tomorrow at noon",
            "sections": [{"section": "S", "rows": 1, "seats_per_row": 1}]}))
        .await;
    refused_for_its_start(&created);
}

/// Asserts a 422 that names `sale_starts_at`.
fn refused_for_its_start(created: &seatclaim_e2e::Reply) {
    let problem = assert_problem(created, StatusCode::UNPROCESSABLE_ENTITY);
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("sale_starts_at"), "{problem}");
}
