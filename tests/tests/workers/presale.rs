//! A thousand buyers racing on one access code of 50 seats, decided by worker processes: the
//! claim counts the code's seats in the same atomic step as the seats, so exactly 50 are held,
//! every other request is refused or REJECTED naming the code, and the code itself appears in
//! no event, job or seat map.

use std::time::Duration;

use axum::http::StatusCode;
use futures_util::StreamExt;
use seatclaim_e2e::{AppOptions, TestApp};
use serde_json::{Value, json};

use super::sale_with_workers_as;

/// Buyers racing on the code.
const BUYERS: usize = 1_000;
/// The code's seats.
const CODE_SEATS: u64 = 50;
/// The code every buyer names.
const CODE: &str = "FAN-RACE-0050";
/// Reservations in flight at once.
const IN_FLIGHT: usize = 64;

/// How one buyer's reservation ended: held, or refused naming the code (at admission or by the
/// claim).
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    Held,
    UsedUp,
}

async fn buyer(app: &TestApp, n: usize) -> Ended {
    let body = json!({"buyer_id": format!("fan{n}"), "section": "F", "quantity": 1,
        "access_code": CODE});
    let reply = app.reserve("presale", &format!("k{n}"), &body).await;
    let (reason, job) = match reply.status {
        StatusCode::ACCEPTED => {
            let job_id = reply.json()["job_id"].as_str().unwrap().to_owned();
            let job = app.decided(&job_id, Duration::from_secs(240)).await;
            if job["status"] == "HELD" {
                return Ended::Held;
            }
            (job["reason_code"].clone(), job)
        }
        _ => (reply.json()["reason_code"].clone(), reply.json()),
    };
    assert_eq!(reason, "access_code_used_up", "buyer {n}: {job}");
    Ended::UsedUp
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_buyers_racing_on_one_code_hold_exactly_its_seats() {
    let options = AppOptions {
        buyer_rate: (1000, 1000),
        ..AppOptions::default()
    };
    let event = json!({"event_id": "presale", "name": "Presale", "hold_seconds": 600,
        "channels": [{"name": "fanclub"}],
        "sections": [
            {"section": "F", "rows": 4, "seats_per_row": 25, "channel": "fanclub"},
            {"section": "A", "rows": 2, "seats_per_row": 10}]});
    let (app, _workers) = sale_with_workers_as(options, event).await;
    app.create_codes(
        "presale",
        &json!({"channel": "fanclub", "codes": [CODE], "max_seats": CODE_SEATS}),
    )
    .await;
    let ended: Vec<Ended> = futures_util::stream::iter(0..BUYERS)
        .map(|n| buyer(&app, n))
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let held = ended.iter().filter(|e| **e == Ended::Held).count();
    eprintln!("{BUYERS} buyers on one code of {CODE_SEATS}: {held} held");
    assert_eq!(held as u64, CODE_SEATS);
    let (status, standing) = app.get(&format!("/v1/events/presale/codes/{CODE}")).await;
    assert_eq!(status, StatusCode::OK, "{standing}");
    assert_eq!(
        (standing["held"].clone(), standing["left"].clone()),
        (json!(CODE_SEATS), json!(0))
    );
    let map = app.seat_map("presale").await;
    let held_in_map = map["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "HELD");
    assert_eq!(
        held_in_map.count() as u64,
        CODE_SEATS,
        "the seat map agrees"
    );
    assert!(
        map["seats"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["channel"] == "fanclub"),
        "the map shows the channel's seats"
    );
    app.relay_caught_up(Duration::from_secs(180)).await;
    let published: Vec<Value> = app.published_events().await;
    assert!(!published.is_empty());
    let texts = [serde_json::to_string(&published).unwrap(), map.to_string()];
    for text in texts {
        assert!(!text.contains(CODE), "the code appears in {text:.200}");
    }
}
