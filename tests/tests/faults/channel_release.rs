//! A channel's release with the API and the worker as separate processes, attacked at its
//! instant: public buyers wait in the line of the channel's section, and more keep arriving
//! while the release passes on the real clock. The released seats go to the line's first
//! waiters in its order: no public hold of the section is decided before `release_at`, and no
//! buyer arriving around the release passes a waiter.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator). On DynamoDB it found
//! a claim that read the line's head place, then found its job just served, and took a released
//! seat as if nobody waited: a line is now judged by its places alone (`Commit::has_waiters`).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::collections::BTreeMap;
use std::time::Duration;

use axum::http::StatusCode;
use futures_util::StreamExt;
use jiff::{SignedDuration, Timestamp};
use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, eventually, test_backend};
use seatclaim_runtime::config::BackendKind;
use serde_json::{Value, json};

use super::crash::worker_env;

/// The channel's seats.
const SEATS: usize = 10;
/// Public buyers waiting in the line before the release.
const WAITERS: usize = 30;
/// Buyers posting side by side across the release.
const STORMERS: usize = 4;
/// How long a hold lasts.
const HOLD_SECONDS: i64 = 600;

/// How far ahead the release is: time for the line to form first (the emulator is slower).
fn lead_ms() -> i64 {
    match test_backend() {
        BackendKind::Embedded => 8_000,
        BackendKind::Aws => 30_000,
    }
}

async fn wait_for_f(app: &TestApp, buyer: &str) -> Value {
    let body = json!({"buyer_id": buyer, "section": "F", "quantity": 1});
    let job_id = app.reserve_ok("rls", &format!("key-{buyer}"), &body).await;
    app.decided(&job_id, Duration::from_secs(60)).await
}

/// One buyer after another from a second before the release until a second after it: the job
/// ids posted. (The attack is timed to the release's instant; nothing waits on a result.)
async fn storm(app: &TestApp, lane: usize, release_at: Timestamp) -> Vec<String> {
    let lead = Timestamp::now().duration_until(release_at) - SignedDuration::from_secs(1);
    if let Ok(lead) = Duration::try_from(lead) {
        tokio::time::sleep(lead).await;
    }
    let mut posted = Vec::new();
    while Timestamp::now() < release_at + SignedDuration::from_secs(1) {
        let buyer = format!("storm{lane}-{}", posted.len());
        let body = json!({"buyer_id": buyer, "section": "F", "quantity": 1});
        posted.push(app.reserve_ok("rls", &format!("key-{buyer}"), &body).await);
    }
    posted
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_attacked_at_its_instant_serves_the_line_in_order() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        buyer_rate: (10_000, 10_000),
        ..AppOptions::default()
    })
    .await;
    let worker = ChildProcess::start("seatclaim-worker", &worker_env(&app));
    // Far enough ahead for the line to form before it on this machine; in whole milliseconds,
    // as the stores keep an instant.
    let release_at =
        Timestamp::from_millisecond(Timestamp::now().as_millisecond() + lead_ms()).unwrap();
    let created = app
        .create_event(
            &json!({"event_id": "rls", "name": "Release", "waitlist": true,
            "hold_seconds": HOLD_SECONDS, "max_seats_per_buyer": 0,
            "channels": [{"name": "fanclub", "release_at": release_at.to_string()}],
            "sections": [
                {"section": "F", "rows": 1, "seats_per_row": SEATS, "channel": "fanclub"},
                {"section": "A", "rows": 1, "seats_per_row": 5}]}),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text());
    let waiting: Vec<Value> = futures_util::stream::iter(0..WAITERS)
        .map(|n| {
            let app = &app;
            async move { wait_for_f(app, &format!("waiter{n}")).await }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    let mut line = BTreeMap::new();
    for job in waiting {
        assert_eq!(job["status"], "WAITLISTED", "{job}");
        let place = app.job(job["job_id"].as_str().unwrap()).await["waitlist_position"].clone();
        line.insert(
            place.as_u64().unwrap(),
            job["job_id"].as_str().unwrap().to_owned(),
        );
    }
    assert!(
        Timestamp::now() < release_at,
        "the line formed before the release"
    );
    assert_eq!(line.len(), WAITERS, "a place each");

    let stormed: Vec<String> = futures_util::stream::iter(0..STORMERS)
        .map(|lane| storm(&app, lane, release_at))
        .buffer_unordered(STORMERS)
        .flat_map(futures_util::stream::iter)
        .collect()
        .await;
    let holders: Vec<Value> = eventually(
        Duration::from_secs(60),
        "the released seats held",
        || async {
            let mut held = Vec::new();
            for job_id in line.values().chain(&stormed) {
                let job = app.job(job_id).await;
                if job["status"] == "HELD" {
                    held.push(job);
                }
            }
            (held.len() == SEATS).then_some(held)
        },
    )
    .await;
    let first: Vec<&String> = line.values().take(SEATS).collect();
    let mut held: Vec<&str> = holders
        .iter()
        .map(|j| j["job_id"].as_str().unwrap())
        .collect();
    held.sort_unstable();

    let mut expected: Vec<&str> = first.iter().map(|id| id.as_str()).collect();
    expected.sort_unstable();
    assert_eq!(
        held, expected,
        "the line's first {SEATS} waiters, and no one arriving around the release"
    );
    for job in &holders {
        let until: Timestamp = job["hold_expires_at"].as_str().unwrap().parse().unwrap();
        let decided = until - SignedDuration::from_secs(HOLD_SECONDS);
        assert!(
            decided >= release_at,
            "a hold decided at {decided}, before the release: {job}"
        );
    }
    for job_id in &stormed {
        let job = app.decided(job_id, Duration::from_secs(60)).await;
        assert_eq!(
            job["status"], "WAITLISTED",
            "a buyer of the release's instant waits: {job}"
        );
        let place = job["waitlist_position"].as_u64().unwrap_or(0);
        assert!(
            place > (WAITERS - SEATS) as u64,
            "behind every earlier waiter: {job}"
        );
    }
    let exit = worker.terminate(Duration::from_secs(20));
    assert!(
        exit.success(),
        "the worker exits cleanly on SIGTERM: {exit:?}"
    );
    eprintln!(
        "release: {WAITERS} waiters, {} buyers across the release",
        stormed.len()
    );
    app.assert_audit_passes("rls");
}
