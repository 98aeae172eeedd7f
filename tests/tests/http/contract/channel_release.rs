//! A channel's release over HTTP: before `release_at`, 500 public buyers of the channel's
//! section wait in its line and touch none of its seats; at the release (the test moves the
//! app's clock past it) the seats nobody holds go to the line's first waiters, in the line's
//! order, and a buyer arriving after the release joins the line's end.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;

use axum::http::StatusCode;
use futures_util::StreamExt;
use jiff::SignedDuration;
use seatclaim_core::ports::Clock;
use seatclaim_e2e::{AppOptions, TestApp, eventually};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Public buyers of the channel's section, before its release.
const PUBLIC: usize = 500;
/// The channel's seats.
const SEATS: usize = 20;
/// The seats its code's holder keeps through the release.
const KEPT: usize = 5;
/// Reservations in flight at once.
const IN_FLIGHT: usize = 32;

/// Creates event `rel`: section F (20 seats) for channel `fanclub` until an hour from the app's
/// now, a public section A, and a waitlist; holds last a day, so none lapses at the release.
async fn channel_until_release(app: &TestApp) {
    let release_at = app.clock.now() + SignedDuration::from_hours(1);
    let created = app
        .create_event(
            &json!({"event_id": "rel", "name": "Release", "waitlist": true,
            "hold_seconds": 86_400, "max_seats_per_buyer": 0,
            "channels": [{"name": "fanclub", "release_at": release_at.to_string()}],
            "sections": [
                {"section": "F", "rows": 1, "seats_per_row": SEATS, "channel": "fanclub"},
                {"section": "A", "rows": 1, "seats_per_row": 10}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
}

/// Reserves `quantity` seats of section F for `buyer` and waits for the decision.
async fn decided_in_f(app: &TestApp, buyer: &str, quantity: usize, code: Option<&str>) -> Value {
    let mut body = json!({"buyer_id": buyer, "section": "F", "quantity": quantity});
    if let Some(code) = code {
        body["access_code"] = json!(code);
    }
    let job_id = app.reserve_ok("rel", &format!("key-{buyer}"), &body).await;
    app.decided(&job_id, DECIDED_WITHIN).await
}

/// The states of section F's seats, counted.
async fn states_of_f(app: &TestApp) -> BTreeMap<String, usize> {
    let map = app.seat_map("rel").await;
    let mut states = BTreeMap::new();
    for seat in map["seats"].as_array().expect("a list of seats") {
        if seat["section"] == "F" {
            *states
                .entry(seat["state"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    states
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channels_seats_wait_for_the_release_then_go_to_the_line_in_order() {
    let app = TestApp::spawn_with(AppOptions {
        buyer_rate: (10_000, 10_000),
        ..AppOptions::default()
    })
    .await;
    channel_until_release(&app).await;
    app.create_codes(
        "rel",
        &json!({"channel": "fanclub", "codes": ["FAN-KEEP"], "max_seats": KEPT}),
    )
    .await;
    let fan = decided_in_f(&app, "fan", KEPT, Some("FAN-KEEP")).await;
    assert_eq!(fan["status"], "HELD", "{fan}");

    let waiting: Vec<Value> = futures_util::stream::iter(0..PUBLIC)
        .map(|n| {
            let app = &app;
            async move { decided_in_f(app, &format!("public{n}"), 1, None).await }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    for job in &waiting {
        assert_eq!(job["status"], "WAITLISTED", "{job}");
    }
    let before = states_of_f(&app).await;
    assert_eq!(
        (before.get("HELD"), before.get("AVAILABLE")),
        (Some(&KEPT), Some(&(SEATS - KEPT))),
        "500 public buyers before the release took none of the channel's seats"
    );
    // Each waiter's place in line, read before the release.
    let mut places = BTreeMap::new();
    for job in &waiting {
        let job_id = job["job_id"].as_str().unwrap();
        let place = app.job(job_id).await["waitlist_position"].as_u64().unwrap();
        places.insert(place, job_id.to_owned());
    }
    assert_eq!(places.len(), PUBLIC, "one place per waiter");

    app.clock
        .advance(SignedDuration::from_hours(1) + SignedDuration::from_secs(1));
    eventually(DECIDED_WITHIN, "the released seats to be held", || async {
        (states_of_f(&app).await.get("HELD") == Some(&SEATS)).then_some(())
    })
    .await;
    let released = SEATS - KEPT;
    for (place, job_id) in &places {
        let status = app.job(job_id).await["status"].clone();
        let expected = if *place <= released as u64 {
            "HELD"
        } else {
            "WAITLISTED"
        };
        assert_eq!(status, expected, "the waiter at place {place}");
    }
    let late = decided_in_f(&app, "late", 1, None).await;
    assert_eq!(late["status"], "WAITLISTED", "{late}");
    assert_eq!(
        late["waitlist_position"].as_u64(),
        Some((PUBLIC - released + 1) as u64),
        "{late}"
    );
    assert_eq!(fan["status"], "HELD");
}
