//! A channel's own opening with the API and the worker as separate processes: code holders race
//! into the channel's pre-queue and public buyers into the event's; the worker process that
//! draws the channel's order is SIGKILLed as soon as it has, and the next one decides it: every
//! fan's job decided once, the code never past its `max_seats`, no seat held twice, the draw
//! published naming the channel, and the public still waiting for the event's own start.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::StatusCode;
use futures_util::StreamExt;
use jiff::{SignedDuration, Timestamp};
use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, eventually};
use serde_json::{Value, json};

use super::crash::worker_env;

/// Code holders racing for the code's seats.
const FANS: usize = 60;
/// The code's seats.
const CODE_SEATS: usize = 12;
/// Public buyers waiting for the event's start.
const PUBLIC: usize = 10;

/// Posts every reservation at once; the job ids of the fans' and of the public's.
async fn post_all(app: &TestApp) -> (Vec<String>, Vec<String>) {
    let bodies = (0..FANS)
        .map(|n| {
            json!({"buyer_id": format!("fan{n}"), "section": "F", "quantity": 1,
                "access_code": "FAN-RACE"})
        })
        .chain(
            (0..PUBLIC)
                .map(|n| json!({"buyer_id": format!("pub{n}"), "section": "A", "quantity": 1})),
        );
    let ids: Vec<String> = futures_util::stream::iter(bodies.enumerate())
        .map(|(n, body)| async move { app.reserve_ok("chk", &format!("key{n}"), &body).await })
        .buffered(16)
        .collect()
        .await;
    let (fans, public) = ids.split_at(FANS);
    (fans.to_vec(), public.to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_worker_at_a_channels_opening_loses_and_doubles_nothing() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        buyer_rate: (10_000, 10_000),
        ..AppOptions::default()
    })
    .await;
    // Far enough ahead for every reservation to be posted before it on this machine.
    let channel_starts = Timestamp::now() + SignedDuration::from_secs(5);
    let created = app
        .create_event(&json!({"event_id": "chk", "name": "Channel opening",
            "hold_seconds": 600, "sale_starts_at": (channel_starts + SignedDuration::from_hours(1)).to_string(),
            "channels": [{"name": "fanclub", "sale_starts_at": channel_starts.to_string()}],
            "sections": [
                {"section": "F", "rows": 2, "seats_per_row": 10, "channel": "fanclub"},
                {"section": "A", "rows": 1, "seats_per_row": 10}]}))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    app.create_codes(
        "chk",
        &json!({"channel": "fanclub", "codes": ["FAN-RACE"], "max_seats": CODE_SEATS}),
    )
    .await;
    let (fans, public) = post_all(&app).await;
    assert!(
        Timestamp::now() < channel_starts,
        "every reservation came before the start"
    );

    let first = ChildProcess::start("seatclaim-worker", &worker_env(&app));
    first.wait_for_log("drawn", Duration::from_secs(60));
    first.kill();
    let worker = ChildProcess::start("seatclaim-worker", &worker_env(&app));
    let decided: Vec<Value> = eventually(
        Duration::from_secs(120),
        "every fan's job decided",
        || async {
            let mut jobs = Vec::new();
            for id in &fans {
                jobs.push(app.job(id).await);
            }
            jobs.iter()
                .all(|j| j["status"] != "PENDING")
                .then_some(jobs)
        },
    )
    .await;
    let opened = app
        .published_of("SaleOpened", Duration::from_secs(60))
        .await;
    let exit = worker.terminate(Duration::from_secs(20));
    assert!(
        exit.success(),
        "the worker exits cleanly on SIGTERM: {exit:?}"
    );

    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    for job in &decided {
        let outcome = job["reason_code"]
            .as_str()
            .unwrap_or(job["status"].as_str().unwrap());
        *outcomes.entry(outcome.to_owned()).or_default() += 1;
    }
    let expected = BTreeMap::from([
        ("HELD".to_owned(), CODE_SEATS),
        ("access_code_used_up".to_owned(), FANS - CODE_SEATS),
    ]);
    assert_eq!(
        outcomes, expected,
        "exactly the code's seats, the rest refused naming it"
    );
    let map = app.seat_map("chk").await;
    let mut holders = BTreeMap::new();
    for seat in map["seats"].as_array().unwrap() {
        if seat["state"] == "HELD" {
            *holders
                .entry(seat["section"].as_str().unwrap().to_owned())
                .or_insert(0) += 1;
        }
    }
    assert_eq!(
        holders,
        BTreeMap::from([("F".to_owned(), CODE_SEATS)]),
        "{map}"
    );
    let (_, standing) = app.get("/v1/events/chk/codes/FAN-RACE").await;
    assert_eq!(
        (&standing["held"], &standing["left"]),
        (&json!(CODE_SEATS), &json!(0)),
        "{standing}"
    );
    let detail = &opened["detail"];
    assert_eq!(
        (&detail["channel"], &detail["shuffled"]),
        (&json!("fanclub"), &json!(FANS)),
        "{detail}"
    );
    for id in &public {
        assert_eq!(
            app.job(id).await["status"],
            "PENDING",
            "the public waits for its own start"
        );
    }
    app.assert_audit_passes("chk");
}
