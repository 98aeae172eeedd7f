//! Reservations first under a browse storm: seat-map reads past the process's read budget
//! (`SEATCLAIM_SEAT_MAP_READS_PER_SEC`) wait their turn for at most
//! `SEATCLAIM_SEAT_MAP_READ_WAIT_MS`, then are shed with 503, `Retry-After` and a problem, and
//! counted in `seatclaim_seat_map_reads_shed_total`; reservations, which never pass through that
//! gate, are answered as before.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::time::Duration;

use axum::http::{Method, StatusCode};
use futures_util::future::join_all;
use seatclaim_api::ReadBudget;
use seatclaim_e2e::{AppOptions, TestApp, assert_problem};
use serde_json::json;

/// Reads that spend the budget: one token a second, none saved up past it, and a wait far
/// shorter than a second, so a read behind another is shed whatever the machine's speed.
const BUDGET: ReadBudget = ReadBudget {
    per_sec: 1,
    wait: Duration::from_millis(50),
};

#[tokio::test]
async fn reads_past_the_budget_are_shed_and_reservations_go_on() {
    let app = TestApp::spawn_with(AppOptions {
        read_budget: BUDGET,
        // One snapshot for every read: they reach the gate together, however slow the backend's
        // read of the seats.
        seat_map_max_age_ms: 60_000,
        ..AppOptions::default()
    })
    .await;
    let created = app
        .create_event(&json!({
            "event_id": "e1", "name": "Show", "hold_seconds": 300,
            "sections": [{"section": "A", "rows": 1, "seats_per_row": 4}],
        }))
        .await;
    assert_eq!(created.status, StatusCode::CREATED);

    let reads =
        join_all((0..4).map(|_| app.request(Method::GET, "/v1/events/e1/seats").send())).await;
    let served = reads.iter().filter(|r| r.status == StatusCode::OK).count();
    assert!(
        served <= 2,
        "one token, and at most one more refilled: {served} served"
    );
    let shed = reads
        .iter()
        .find(|r| r.status == StatusCode::SERVICE_UNAVAILABLE)
        .expect("a read past the budget is shed");
    let problem = assert_problem(shed, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(problem["reason_code"], "overloaded", "{problem}");
    assert_eq!(shed.header("retry-after"), "1");
    let metrics = app.metrics().await;
    let counted = metrics
        .lines()
        .find_map(|line| line.strip_prefix("seatclaim_seat_map_reads_shed_total "))
        .map_or(0.0, |n| n.trim().parse::<f64>().unwrap());
    assert!(counted >= 1.0, "the shed read is counted: {counted}");

    let reserved = app
        .reserve(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(reserved.status, StatusCode::ACCEPTED, "{}", reserved.text());
    let job_id = reserved.json()["job_id"].as_str().unwrap().to_owned();
    let job = app.decided(&job_id, Duration::from_secs(30)).await;
    assert_eq!(job["status"], "HELD", "{job}");
}
