//! What operators see: Prometheus metrics on the API and on the worker, and one job followed by
//! its id from the POST through the queue to the worker's claim in the logs.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::cell::RefCell;
use std::time::Duration;

use seatclaim_e2e::{AppOptions, ChildProcess, TestApp, eventually};
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_exposes_prometheus_metrics_of_admission_and_claims() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 4, 300).await;
    let job = app
        .reserve_ok("e1", "k", &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}))
        .await;
    app.decided(&job, Duration::from_secs(10)).await;
    // The relay publishes the decision and the queue gauges are sampled on their own schedule
    // after the job is decided, so the page is read until it shows them all.
    let names = [
        "seatclaim_intents_admitted_total{result=\"accepted\"}",
        "seatclaim_claims_total{outcome=\"held\"}",
        "seatclaim_claim_duration_seconds_bucket",
        "seatclaim_decision_latency_seconds_bucket",
        "seatclaim_batch_size_bucket",
        "seatclaim_events_published_total",
        "seatclaim_outbox_lag_seconds",
        "seatclaim_queue_messages{state=\"dead\"}",
    ];
    let (public, _) = app.get_text("/metrics").await;
    assert_eq!(
        public.as_u16(),
        404,
        "/metrics is served on SEATCLAIM_METRICS_LISTEN, not the public listener"
    );
    // Shown (on failure) each time the set of missing metrics changes.
    let reported = RefCell::new(None);
    eventually(
        Duration::from_secs(30),
        "/metrics to show every metric of admission, claims, the relay and the queue",
        || async {
            let text = app.metrics().await;
            let missing: Vec<&str> = names
                .into_iter()
                .filter(|name| !text.contains(name))
                .collect();
            if reported.borrow().as_ref() != Some(&missing) {
                eprintln!("/metrics lacks {missing:?}");
                reported.replace(Some(missing.clone()));
            }
            missing.is_empty().then_some(())
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_is_followed_by_its_id_from_the_post_to_the_worker_process() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let mut env = app.process_env();
    env.extend([
        ("SEATCLAIM_METRICS_LISTEN", "127.0.0.1:0".to_owned()),
        ("SEATCLAIM_RECEIVE_WAIT_MS", "100".to_owned()),
        ("RUST_LOG", "info".to_owned()),
    ]);
    let worker = ChildProcess::start("seatclaim-worker", &env);
    let started: Value =
        serde_json::from_str(&worker.wait_for_log("worker started", Duration::from_secs(30)))
            .unwrap();
    let metrics = started["metrics"].as_str().unwrap().to_owned();

    let job = app
        .reserve_ok("e1", "k", &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}))
        .await;
    let line = worker.wait_for_log(&job, Duration::from_secs(30));
    let logged: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        logged["span"]["job_id"],
        job.as_str(),
        "the worker's claim is logged in the job's span: {logged}"
    );
    assert_eq!(
        app.decided(&job, Duration::from_secs(10)).await["status"],
        "HELD"
    );

    let client = reqwest::Client::new();
    let health = client
        .get(format!("http://{metrics}/healthz"))
        .send()
        .await
        .unwrap();
    assert!(health.status().is_success());
    let text = client
        .get(format!("http://{metrics}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("seatclaim_claims_total{outcome=\"held\"} 1"),
        "{text}"
    );
}
