//! Holds end deterministically: a lapsed hold is released by the sweeper (job EXPIRED) or taken
//! over by a new claim, and the release never touches a seat that another job holds now. Holds
//! lapse because the test moves the app's clock past their deadline, not because it sleeps.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::time::Duration;

use jiff::SignedDuration;
use reqwest::StatusCode;
use seatclaim_e2e::{AppOptions, TestApp, eventually};
use serde_json::{Value, json};

const WITHIN: Duration = Duration::from_secs(30);
/// Far longer than any wait in these tests: only a move of the clock can make a hold lapse.
const HOLD_SECONDS: u32 = 300;

/// Just past a hold's deadline.
fn past_the_hold() -> SignedDuration {
    SignedDuration::from_secs(i64::from(HOLD_SECONDS) + 1)
}

/// An app whose sweeper runs once an hour: lapsed holds stay in place until the test sweeps.
async fn with_a_stalled_sweeper() -> TestApp {
    TestApp::spawn_with(AppOptions {
        sweep_interval_ms: 3_600_000,
        ..AppOptions::default()
    })
    .await
}

/// Each seat's state, in the seat map's order.
fn states(map: &Value) -> Vec<&str> {
    map["seats"]
        .as_array()
        .expect("a list of seats")
        .iter()
        .map(|s| s["state"].as_str().expect("a state"))
        .collect()
}

#[tokio::test]
async fn a_lapsed_hold_expires_and_its_seats_can_be_claimed_again() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 4, HOLD_SECONDS).await;
    let first = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1", "A-1-2"]}),
        )
        .await;
    assert_eq!(app.decided(&first, WITHIN).await["status"], "HELD");
    assert_eq!(
        states(&app.seat_map("e1").await),
        ["HELD", "HELD", "AVAILABLE", "AVAILABLE"]
    );

    app.clock.advance(past_the_hold());
    eventually(WITHIN, "the sweeper to expire the lapsed hold", || async {
        (app.job(&first).await["status"] == "EXPIRED").then_some(())
    })
    .await;
    assert!(
        states(&app.seat_map("e1").await)
            .iter()
            .all(|s| *s == "AVAILABLE")
    );
    app.post_problem(&format!("/v1/jobs/{first}/confirm"), StatusCode::CONFLICT)
        .await;

    let second = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-2"]}),
        )
        .await;
    assert_eq!(app.decided(&second, WITHIN).await["status"], "HELD");
}

#[tokio::test]
async fn a_claim_takes_over_a_lapsed_hold_and_the_late_sweep_leaves_the_new_hold_alone() {
    // The sweeper is slowed to an hour so the lapsed hold is still in place when the second buyer claims.
    let app = with_a_stalled_sweeper().await;
    app.create_grid("e1", 1, 2, HOLD_SECONDS).await;
    let first = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1", "A-1-2"]}),
        )
        .await;
    assert_eq!(app.decided(&first, WITHIN).await["status"], "HELD");
    assert_eq!(states(&app.seat_map("e1").await), ["HELD", "HELD"]);
    app.clock.advance(past_the_hold());

    let map = app.seat_map("e1").await;
    assert_eq!(
        map["seats"][0]["state"], "AVAILABLE",
        "a lapsed hold shows as available"
    );
    let second = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(app.decided(&second, WITHIN).await["status"], "HELD");
    app.post_problem(&format!("/v1/jobs/{first}/confirm"), StatusCode::CONFLICT)
        .await;

    let released = seatclaim_runtime::loops::sweep_once(&app.backend)
        .await
        .unwrap();
    assert_eq!(released, 1);
    assert_eq!(app.job(&first).await["status"], "EXPIRED");
    assert_eq!(app.job(&second).await["status"], "HELD");
    let map = app.seat_map("e1").await;
    assert_eq!(
        map["seats"][0]["state"], "HELD",
        "the new hold survives the old one's release"
    );
    assert_eq!(map["seats"][1]["state"], "AVAILABLE");
}

/// A HELD job on seat A-1-1 of a new event `e1` whose hold has lapsed by the wall clock but not
/// by the app's. `seatclaimctl` is a process of its own, on the wall clock, so the app's clock is
/// set back by more than the hold while the hold is taken: by the wall clock it lapsed a second ago.
async fn lapsed_by_the_wall_clock(app: &TestApp) -> String {
    app.create_grid("e1", 1, 2, HOLD_SECONDS).await;
    app.clock.advance(-past_the_hold());
    let job = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    let held = app.decided(&job, WITHIN).await;
    assert_eq!(held["status"], "HELD");
    let until: jiff::Timestamp = held["hold_expires_at"].as_str().unwrap().parse().unwrap();
    assert!(until < jiff::Timestamp::now(), "lapsed by the wall clock");
    job
}

#[tokio::test]
async fn seatclaimctl_sweep_releases_lapsed_holds_for_a_stuck_deployment() {
    let app = with_a_stalled_sweeper().await;
    let job = lapsed_by_the_wall_clock(&app).await;
    assert_eq!(
        states(&app.seat_map("e1").await),
        ["HELD", "AVAILABLE"],
        "still held by the app's clock"
    );

    let (code, stdout) = app.ctl(&["sweep"]);
    assert_eq!((code, stdout.trim()), (0, "released 1 lapsed holds"));
    assert_eq!(app.job(&job).await["status"], "EXPIRED");
}

#[tokio::test]
async fn a_hold_past_its_deadline_reads_expired_in_every_view_before_the_sweeper_runs() {
    let app = with_a_stalled_sweeper().await;
    app.create_grid("e1", 1, 2, HOLD_SECONDS).await;
    let first = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(app.decided(&first, WITHIN).await["status"], "HELD");
    app.clock.advance(past_the_hold());

    assert_eq!(app.job(&first).await["status"], "EXPIRED");
    let (_, polled) = app.get(&format!("/v1/jobs/{first}?wait=1")).await;
    assert_eq!(polled["status"], "EXPIRED", "the long poll too: {polled}");
    for action in ["confirm", "cancel"] {
        let problem = app
            .post_problem(&format!("/v1/jobs/{first}/{action}"), StatusCode::CONFLICT)
            .await;
        assert_eq!(
            problem["detail"], "the hold has expired",
            "{action}: {problem}"
        );
    }
    let second = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(app.decided(&second, WITHIN).await["status"], "HELD");
    assert_eq!(
        app.job(&first).await["status"],
        "EXPIRED",
        "one seat, one live hold, in every answer"
    );

    let released = seatclaim_runtime::loops::sweep_once(&app.backend)
        .await
        .unwrap();
    assert_eq!(released, 1, "the sweeper's release is still to come");
    assert_eq!(app.job(&first).await["status"], "EXPIRED");
    assert_eq!(app.job(&second).await["status"], "HELD");
}

#[tokio::test]
async fn seatclaimctl_shows_a_hold_past_its_deadline_as_expired() {
    let app = with_a_stalled_sweeper().await;
    let job = lapsed_by_the_wall_clock(&app).await;

    let (code, stdout) = app.ctl(&["jobs", "show", &job, "--json"]);
    assert_eq!(code, 0, "{stdout}");
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(shown["job"]["status"], "EXPIRED", "{shown}");
    assert_eq!(
        app.job(&job).await["status"],
        "HELD",
        "live by the app's own clock"
    );
}
