//! What operators see: Prometheus metrics on the API and on the worker, and one job followed by
//! its id from the POST through the queue to the worker's claim in the logs.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

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
    // Through the queue, so that the worker's batch metrics are recorded too.
    let app = TestApp::spawn_with(AppOptions {
        decide_on_admission: false,
        ..AppOptions::default()
    })
    .await;
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

/// The value of the series whose line starts with `name{` and carries every label in `labels`.
fn series(text: &str, name: &str, labels: &[&str]) -> Option<f64> {
    text.lines()
        .filter(|line| line.starts_with(&format!("{name}{{")))
        .find(|line| labels.iter().all(|label| line.contains(label)))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_counts_and_times_requests_per_route_and_status() {
    let app = TestApp::spawn().await;
    app.create_grid("e1", 1, 4, 300).await;
    app.reserve_ok("e1", "k", &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}))
        .await;
    let (missing, _) = app.get_text("/v1/jobs/not-a-job").await;
    assert_eq!(missing.as_u16(), 404);
    let (nowhere, _) = app.get_text("/no/such/route/4711").await;
    assert_eq!(nowhere.as_u16(), 404);

    let text = app.metrics().await;
    let reserve = [
        "method=\"POST\"",
        "route=\"/v1/events/{event_id}/reservations\"",
        "status=\"202\"",
    ];
    let count = series(&text, "http_server_requests_total", &reserve);
    assert!(count.is_some_and(|n| n >= 1.0), "{text}");
    let timed = series(
        &text,
        "http_server_request_duration_seconds_count",
        &reserve,
    );
    assert_eq!(timed, count, "every counted request is timed: {text}");
    assert!(
        series(
            &text,
            "http_server_request_duration_seconds_bucket",
            &reserve
        )
        .is_some(),
        "a histogram, with buckets: {text}"
    );
    let job = ["route=\"/v1/jobs/{job_id}\"", "status=\"404\""];
    assert!(
        series(&text, "http_server_requests_total", &job).is_some(),
        "{text}"
    );
    // An unknown path is one series, whatever the path: the raw path is never a label.
    let unmatched = ["route=\"unmatched\"", "status=\"404\""];
    assert!(
        series(&text, "http_server_requests_total", &unmatched).is_some(),
        "{text}"
    );
    assert!(!text.contains("/no/such/route/4711"), "{text}");
    // Errors are the server's own (5xx): a 202 or a 404 is not one.
    assert!(
        series(&text, "http_server_errors_total", &reserve).is_none(),
        "{text}"
    );
    assert!(
        series(&text, "http_server_errors_total", &job).is_none(),
        "{text}"
    );
}
