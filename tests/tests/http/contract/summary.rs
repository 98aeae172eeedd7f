//! The operator's summary over HTTP: after a race of public buyers and code holders, with some
//! holds sold, its counts equal the seat map's, section by section and channel by channel; its
//! codes, line and expiring holds are counted; and its refusals are the contract's.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;

use axum::http::{Method, StatusCode};
use futures_util::StreamExt;
use seatclaim_e2e::{AppOptions, TestApp, assert_problem};
use serde_json::{Value, json};

use super::DECIDED_WITHIN;

/// Public buyers racing for section A's 30 seats.
const PUBLIC: usize = 45;
/// Code holders racing for the code's 8 seats of section F.
const FANS: usize = 20;
/// The code's seats.
const CODE_SEATS: u64 = 8;

async fn race(app: &TestApp) -> Vec<Value> {
    let reservations = (0..PUBLIC)
        .map(|n| json!({"buyer_id": format!("public{n}"), "section": "A", "quantity": 1}))
        .chain((0..FANS).map(|n| {
            json!({"buyer_id": format!("fan{n}"), "section": "F", "quantity": 1,
                "access_code": "FAN-SUMMARY"})
        }));
    futures_util::stream::iter(reservations.enumerate())
        .map(|(n, body)| async move {
            let reply = app.reserve("sum", &format!("key{n}"), &body).await;
            match reply.status {
                StatusCode::ACCEPTED => {
                    let job_id = reply.json()["job_id"].as_str().unwrap().to_owned();
                    app.decided(&job_id, DECIDED_WITHIN).await
                }
                _ => reply.json(),
            }
        })
        .buffer_unordered(16)
        .collect()
        .await
}

/// The seat map's counts by section and state.
fn map_counts(map: &Value) -> BTreeMap<(String, String), u64> {
    let mut counts = BTreeMap::new();
    for seat in map["seats"].as_array().unwrap() {
        let key = (
            seat["section"].as_str().unwrap().to_owned(),
            seat["state"].as_str().unwrap().to_owned(),
        );
        *counts.entry(key).or_default() += 1;
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_summary_counts_what_the_seat_map_shows_after_a_race() {
    let app = TestApp::spawn_with(AppOptions {
        buyer_rate: (1_000, 1_000),
        ..AppOptions::default()
    })
    .await;
    let created = app
        .create_event(
            &json!({"event_id": "sum", "name": "Summary", "waitlist": true,
            "hold_seconds": 600,
            "max_seats_per_buyer": 0,
            "channels": [{"name": "fanclub"}],
            "sections": [
                {"section": "F", "rows": 1, "seats_per_row": 12, "channel": "fanclub"},
                {"section": "A", "rows": 3, "seats_per_row": 10}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let codes = app
        .request(Method::POST, "/v1/events/sum/codes")
        .json(
            &json!({"channel": "fanclub", "codes": ["FAN-SUMMARY", "FAN-UNUSED"],
            "max_seats": CODE_SEATS}),
        )
        .send()
        .await;
    assert_eq!(codes.status, StatusCode::CREATED, "{}", codes.text());
    let decided = race(&app).await;
    let held: Vec<&Value> = decided.iter().filter(|j| j["status"] == "HELD").collect();
    assert_eq!(
        held.len(),
        30 + CODE_SEATS as usize,
        "every seat A has, and the code's"
    );
    // Two public holds and one of the code's are sold.
    let sold_one = |section: &'static str| {
        held.iter()
            .filter(move |job| job["seat_ids"][0].as_str().unwrap().starts_with(section))
    };
    for job in sold_one("A").take(2).chain(sold_one("F").take(1)) {
        let path = format!("/v1/jobs/{}/confirm", job["job_id"].as_str().unwrap());
        assert_eq!(app.post(&path).await.0, StatusCode::OK);
    }

    let (status, summary) = app.get("/v1/events/sum/summary").await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    let map = app.seat_map("sum").await;
    let from_map = map_counts(&map);
    let count = |section: &str, state: &str| {
        from_map
            .get(&(section.to_owned(), state.to_owned()))
            .copied()
            .unwrap_or(0)
    };
    for entry in summary["sections"].as_array().unwrap() {
        let section = entry["section"].as_str().unwrap();
        for state in ["AVAILABLE", "HELD", "SOLD"] {
            assert_eq!(
                entry["seats"][state],
                count(section, state),
                "{section} {state}: {summary}"
            );
        }
    }
    assert_eq!(summary["sections"][1]["channel"], "fanclub", "{summary}");
    assert_eq!(
        summary["channels"][0],
        json!({"name": "fanclub", "released": false, "prequeue": 0,
            "seats": {"AVAILABLE": 12 - CODE_SEATS, "HELD": CODE_SEATS - 1, "SOLD": 1}})
    );
    let (_, list) = app.get("/v1/events").await;
    assert_eq!(
        list["events"][0]["channels"][0]["seats_by_state"], summary["channels"][0]["seats"],
        "the event list counts the channel's seats as the summary does: {list}"
    );
    assert_eq!(
        summary["seats"],
        json!({"AVAILABLE": 12 - CODE_SEATS, "HELD": 30 - 2 + CODE_SEATS - 1, "SOLD": 3})
    );
    assert_eq!(
        summary["codes"],
        json!({"issued": 2, "seats_held": CODE_SEATS - 1, "seats_sold": 1})
    );
    assert_eq!(
        summary["waitlist"],
        PUBLIC - 30,
        "the public buyers A had no seat for"
    );
    assert_eq!(summary["prequeue"], 0);
    assert_eq!(
        summary["holds_expiring"]["holds"], 0,
        "holds last 600 s, counted within 300 s"
    );
    let (_, within_a_day) = app
        .get("/v1/events/sum/summary?expiring_within=86400")
        .await;
    assert_eq!(
        within_a_day["holds_expiring"],
        json!({"within_seconds": 86400, "holds": 30 - 2 + CODE_SEATS - 1})
    );
}

#[tokio::test]
async fn the_summary_refuses_what_the_contract_says() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 4, 300).await;
    let (status, _) = app.get("/v1/events/nope/summary").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let bad = [
        ("0", 422),
        ("86401", 422),
        ("-5", 422),
        ("soon", 400),
        ("1&other=2", 400),
    ];
    for (value, status) in bad {
        let reply = app
            .request(
                Method::GET,
                &format!("/v1/events/e1/summary?expiring_within={value}"),
            )
            .send()
            .await;
        assert_problem(&reply, StatusCode::from_u16(status).unwrap());
    }
}
