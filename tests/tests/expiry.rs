//! Holds end deterministically: a lapsed hold is released by the sweeper (job EXPIRED) or taken
//! over by a new claim, and the release never touches a seat that another job holds now.

use std::time::Duration;

use reqwest::StatusCode;
use seatclaim_e2e::{AppOptions, TestApp};
use serde_json::json;

const WITHIN: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_lapsed_hold_expires_and_its_seats_can_be_claimed_again() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 4, 1).await;
    let first = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1", "A-1-2"]}),
        )
        .await;
    assert_eq!(app.decided(&first, WITHIN).await["status"], "HELD");

    let deadline = std::time::Instant::now() + WITHIN;
    while app.job(&first).await["status"] != "EXPIRED" {
        assert!(
            std::time::Instant::now() < deadline,
            "the hold never expired"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let map = app.seat_map("e1").await;
    assert!(
        map["seats"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] == "AVAILABLE")
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
    let app = TestApp::spawn_with(AppOptions {
        sweep_interval_ms: 3_600_000,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 2, 1).await;
    let first = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1", "A-1-2"]}),
        )
        .await;
    assert_eq!(app.decided(&first, WITHIN).await["status"], "HELD");
    tokio::time::sleep(Duration::from_millis(1_100)).await;

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

    let released = seatclaim_worker::sweep_once(&app.backend).await.unwrap();
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

#[tokio::test]
async fn seatclaimctl_sweep_releases_lapsed_holds_for_a_stuck_deployment() {
    let app = TestApp::spawn_with(AppOptions {
        sweep_interval_ms: 3_600_000,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 2, 1).await;
    let job = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_eq!(app.decided(&job, WITHIN).await["status"], "HELD");
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (code, stdout) = app.ctl(&["sweep"]);
    assert_eq!((code, stdout.trim()), (0, "released 1 lapsed holds"));
    assert_eq!(app.job(&job).await["status"], "EXPIRED");
}
