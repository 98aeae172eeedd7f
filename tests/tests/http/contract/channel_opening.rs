//! A channel's own opening over HTTP: a code holder's reservation before the channel's
//! `sale_starts_at` is answered 202 at once (even asked to wait) and waits in the channel's own
//! pre-queue, as a public one waits for the event's later start; the summary counts each
//! pre-queue; at the channel's start (the test moves the app's clock to it) the channel's
//! pre-queue is decided and its draw published as `SaleOpened` naming the channel, while the
//! public still waits.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use axum::http::{Method, StatusCode};
use jiff::{SignedDuration, Timestamp};
use seatclaim_core::ports::Clock;
use seatclaim_e2e::TestApp;
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Code holders waiting for the channel's start.
const FANS: usize = 6;

/// Reserves one seat of `section` for `buyer`, asking to wait, under `code` if given.
async fn reserve(app: &TestApp, buyer: &str, section: &str, code: Option<&str>) -> Value {
    let mut body = json!({"buyer_id": buyer, "section": section, "quantity": 1});
    if let Some(code) = code {
        body["access_code"] = json!(code);
    }
    let reply = app
        .request(Method::POST, "/v1/events/chop/reservations")
        .header("idempotency-key", &format!("key-{buyer}-{section}"))
        .header("prefer", "wait=10")
        .json(&body)
        .send()
        .await;
    assert_eq!(reply.status, StatusCode::ACCEPTED, "{}", reply.text());
    reply.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channels_pre_queue_opens_at_its_own_start_before_the_public() {
    let app = TestApp::spawn().await;
    let now = Timestamp::from_second(app.clock.now().as_second()).unwrap();
    let (channel_starts, event_starts) = (
        now + SignedDuration::from_hours(1),
        now + SignedDuration::from_hours(2),
    );
    let created = app
        .create_event(&json!({"event_id": "chop", "name": "Channel opening",
            "sale_starts_at": event_starts.to_string(),
            "channels": [{"name": "fanclub", "sale_starts_at": channel_starts.to_string()}],
            "sections": [
                {"section": "F", "rows": 1, "seats_per_row": FANS, "channel": "fanclub"},
                {"section": "A", "rows": 1, "seats_per_row": 4}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    app.create_codes(
        "chop",
        &json!({"channel": "fanclub", "codes": ["FAN-OPENS"], "max_seats": FANS}),
    )
    .await;

    let mut fans = Vec::new();
    for n in 0..FANS {
        let waiting = reserve(&app, &format!("fan{n}"), "F", Some("FAN-OPENS")).await;
        fans.push(waiting["job_id"].as_str().unwrap().to_owned());
    }
    let public = reserve(&app, "fan0", "A", None).await;
    let public = public["job_id"].as_str().unwrap().to_owned();
    let job = app.job(&fans[0]).await;
    assert_eq!(job["status"], "PENDING", "{job}");
    assert_eq!(
        job["queue"],
        json!({"opens_at": channel_starts.to_string()})
    );
    let job = app.job(&public).await;
    assert_eq!(job["queue"], json!({"opens_at": event_starts.to_string()}));
    let (status, summary) = app.get("/v1/events/chop/summary").await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    assert_eq!(summary["prequeue"], 1, "{summary}");
    assert_eq!(summary["channels"][0]["prequeue"], FANS, "{summary}");

    app.clock
        .advance(channel_starts.duration_since(app.clock.now()));
    for job_id in &fans {
        let job = app.decided(job_id, DECIDED_WITHIN).await;
        assert_eq!(job["status"], "HELD", "{job}");
    }
    let opened = app.published_of("SaleOpened", DECIDED_WITHIN).await;
    let detail = &opened["detail"];
    assert_eq!(
        (&detail["channel"], &detail["shuffled"]),
        (&json!("fanclub"), &json!(FANS)),
        "{detail}"
    );
    assert_eq!(
        app.job(&public).await["status"],
        "PENDING",
        "the public waits"
    );
    let (_, summary) = app.get("/v1/events/chop/summary").await;
    assert_eq!(
        (&summary["prequeue"], &summary["channels"][0]["prequeue"]),
        (&json!(1), &json!(0)),
        "{summary}"
    );
}
