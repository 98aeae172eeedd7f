//! Retention: decided jobs (REJECTED, FAILED, EXPIRED, CANCELLED), their idempotency keys and
//! their history are deleted once the retention has passed, and nothing else is: not a SOLD
//! job, not a live hold, not a job decided recently. The embedded backend deletes them in its
//! periodic purge; on DynamoDB each final transition carries the `expires_at` the table's TTL
//! deletes by. The clock is moved, never waited on.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::time::Duration;

use jiff::SignedDuration;
use reqwest::StatusCode;
use seatclaim_core::app::purge_once;
use seatclaim_core::domain::Retention;
use seatclaim_core::ports::Clock;
use seatclaim_e2e::{AppOptions, TestApp, test_backend};
use seatclaim_runtime::config::BackendKind;
use serde_json::{Value, json};

const WITHIN: Duration = Duration::from_secs(30);

/// A sale's jobs in every final status but FAILED, and a HELD one: returns (rejected,
/// cancelled, sold, held) job ids.
async fn decided_jobs(app: &TestApp) -> [String; 4] {
    app.create_grid("e1", 1, 4, 86_400).await;
    let reserve = |key: &'static str, buyer: &'static str, seat: &'static str| async move {
        let job = app
            .reserve_ok("e1", key, &json!({"buyer_id": buyer, "seat_ids": [seat]}))
            .await;
        app.decided(&job, WITHIN).await;
        job
    };
    let sold = reserve("k-sold", "b1", "A-1-1").await;
    let rejected = reserve("k-rejected", "b2", "A-1-1").await;
    let cancelled = reserve("k-cancelled", "b3", "A-1-2").await;
    let held = reserve("k-held", "b4", "A-1-3").await;
    assert_eq!(app.job(&rejected).await["status"], "REJECTED");
    assert_eq!(
        app.post(&format!("/v1/jobs/{sold}/confirm")).await.0,
        StatusCode::OK
    );
    assert_eq!(
        app.post(&format!("/v1/jobs/{cancelled}/cancel")).await.0,
        StatusCode::OK
    );
    [rejected, cancelled, sold, held]
}

#[tokio::test]
async fn the_embedded_purge_deletes_decided_jobs_past_the_retention_and_nothing_else() {
    if test_backend() != BackendKind::Embedded {
        eprintln!("skipped: DynamoDB deletes by TTL (the other test)");
        return;
    }
    let app = TestApp::spawn_with(AppOptions {
        sweep_interval_ms: 3_600_000,
        ..AppOptions::default()
    })
    .await;
    let [rejected, cancelled, sold, held] = decided_jobs(&app).await;
    let retention = Retention::days(14).unwrap();
    // A job whose events are unpublished is kept however old: wait for the relay first.
    seatclaim_e2e::eventually(WITHIN, "the relay to publish the six events", || async {
        (app.published_events().await.len() == 6).then_some(())
    })
    .await;

    app.clock
        .advance(retention.period() - SignedDuration::from_secs(60));
    purge_once(&app.backend, retention).await.unwrap();
    for job in [&rejected, &cancelled, &sold, &held] {
        assert_eq!(
            app.get(&format!("/v1/jobs/{job}")).await.0,
            StatusCode::OK,
            "kept: {job}"
        );
    }

    app.clock.advance(SignedDuration::from_secs(120));
    let purged = purge_once(&app.backend, retention).await.unwrap();
    assert_eq!(purged, 2, "the rejection and the cancellation");
    for job in [&rejected, &cancelled] {
        assert_eq!(
            app.get(&format!("/v1/jobs/{job}")).await.0,
            StatusCode::NOT_FOUND
        );
        let id = seatclaim_core::domain::JobId::parse(job).unwrap();
        let history = app.backend.jobs.history(id).await.unwrap();
        assert!(history.is_empty(), "its history goes with it: {history:?}");
    }
    assert_eq!(app.job(&sold).await["status"], "SOLD", "a purchase is kept");
    // The hold lapsed long ago (it reads EXPIRED), but the sweeper has not released it yet: it
    // is kept, and once released it is kept for a retention from its release.
    assert_eq!(app.job(&held).await["status"], "EXPIRED");
    assert_eq!(
        seatclaim_runtime::loops::sweep_once(&app.backend)
            .await
            .unwrap(),
        1
    );
    purge_once(&app.backend, retention).await.unwrap();
    assert_eq!(
        app.job(&held).await["status"],
        "EXPIRED",
        "released just now: kept"
    );
    // The key went with its job: the window in which a retry is recognised has passed.
    let again = app
        .reserve_ok(
            "e1",
            "k-rejected",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-1"]}),
        )
        .await;
    assert_ne!(again, rejected);
    // The newest event when the purge ran was the cancellation's: its place in the outbox is not
    // handed out again, so the relay publishes what came after (the expiry, the new decision).
    seatclaim_e2e::eventually(
        WITHIN,
        "the events after the purge to be published",
        || async {
            let published = app.published_events().await;
            let of = |job: &str, status: &str| {
                let line =
                    |e: &Value| e.to_string().contains(job) && e.to_string().contains(status);
                published.iter().any(line)
            };
            (of(&held, "EXPIRED") && of(&again, "") && published.len() == 8).then_some(())
        },
    )
    .await;
    app.assert_audit_passes("e1");
}

#[tokio::test]
async fn on_dynamodb_every_final_transition_carries_the_retention_ttl() {
    if test_backend() != BackendKind::Aws {
        eprintln!("skipped: the embedded backend purges (the other test)");
        return;
    }
    let app = TestApp::spawn().await;
    let [rejected, cancelled, sold, held] = decided_jobs(&app).await;
    let config = seatclaim_aws::sdk_config().await;
    let db = aws_sdk_dynamodb::Client::new(&config);
    let table = format!("{}-reservation-jobs", app.settings.aws.aws_prefix);
    let period = Retention::default().period().as_secs();
    let now = app.clock.now().as_second();
    for (job, expiring) in [
        (&rejected, true),
        (&cancelled, true),
        (&sold, false),
        (&held, false),
    ] {
        let item = db
            .get_item()
            .table_name(&table)
            .key(
                "job_id",
                aws_sdk_dynamodb::types::AttributeValue::S(job.clone()),
            )
            .send()
            .await
            .unwrap();
        let item = item.item().unwrap();
        let expires = item
            .get("expires_at")
            .map(|v| v.as_n().unwrap().parse::<i64>().unwrap());
        match expires {
            Some(at) => {
                assert!(expiring, "{job} must not expire: {item:?}");
                assert!(
                    (at - now - period).abs() < 600,
                    "{at} is the decision + {period}s"
                );
            }
            None => assert!(!expiring, "{job} must carry expires_at: {item:?}"),
        }
    }
}
