//! What one single-seat reservation costs in AWS requests, from POST to HELD and its published
//! event, counted by a proxy in front of the emulator (the real requests the real code sends).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use aws_config::BehaviorVersion;
use reqwest::StatusCode;
use seatclaim_api::Application;
use seatclaim_e2e::emulator::{emulator_config, fresh_settings, provision};
use seatclaim_e2e::request_log::{Counts, RequestLog};
use seatclaim_shared::adapters::aws;
use seatclaim_shared::ports::SystemClock;
use seatclaim_worker::{Limits, process_batch, relay_once};
use serde_json::json;

fn total(counts: &Counts, service: &str) -> usize {
    counts
        .iter()
        .filter(|(op, _)| op.starts_with(service))
        .map(|(_, n)| n)
        .sum()
}

fn show(label: &str, counts: &Counts) -> String {
    let ops: Vec<String> = counts.iter().map(|(op, n)| format!("{op} {n}")).collect();
    format!(
        "{label}: {} requests ({})",
        counts.values().sum::<usize>(),
        ops.join(", ")
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_seat_reservation_costs_one_dynamodb_write_to_claim() {
    let direct = emulator_config().await;
    let log = RequestLog::start(&std::env::var("AWS_ENDPOINT_URL").unwrap_or_default()).await;
    let counted = aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(&log.endpoint)
        .load()
        .await;
    let settings = fresh_settings();
    provision(&direct, &settings, Duration::from_secs(30), 6).await;
    let backend = aws::open_with(
        &counted,
        &settings,
        Duration::from_secs(30),
        Arc::new(SystemClock),
    )
    .await
    .unwrap();
    let app = Application::build(
        backend.clone(),
        "127.0.0.1:0".parse().unwrap(),
        None,
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let base = format!("http://{}", app.local_addr().unwrap());
    tokio::spawn(app.run_until_stopped(std::future::pending()));
    let client = reqwest::Client::new();
    let created = client
        .post(format!("{base}/v1/events"))
        .json(&json!({"event_id": "e1", "name": "n", "sections": [{"section": "A", "rows": 1, "seats_per_row": 4}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    eprintln!(
        "{}",
        show(
            "start-up and event creation (not per reservation)",
            &log.take()
        )
    );

    for (round, seat) in [
        ("first reservation (cold event cache)", "A-1-1"),
        ("next reservation", "A-1-2"),
    ] {
        let posted = client
            .post(format!("{base}/v1/events/e1/reservations"))
            .header("Idempotency-Key", seat)
            .json(&json!({"buyer_id": "b1", "seat_ids": [seat]}))
            .send()
            .await
            .unwrap();
        assert_eq!(posted.status(), StatusCode::ACCEPTED);
        let admission = log.take();

        let deliveries = backend
            .queue
            .receive(10, Duration::from_secs(2))
            .await
            .unwrap();
        assert_eq!(deliveries.len(), 1);
        let outcome = process_batch(&backend, deliveries, Limits::attempts(5)).await;
        assert_eq!(outcome.held, 1);
        let claim = log.take();
        assert_eq!(relay_once(&backend).await.unwrap(), 1);
        let relay = log.take();

        eprintln!("{round}:");
        eprintln!("  {}", show("admission (POST -> 202)", &admission));
        eprintln!(
            "  {}",
            show("claim (receive -> HELD -> acknowledged)", &claim)
        );
        eprintln!("  {}", show("event relay", &relay));
        assert_eq!(
            admission.get("DynamoDB.TransactWriteItems"),
            Some(&1),
            "admission is one write"
        );
        assert_eq!(total(&admission, "SQS"), 1, "admission sends one message");
        assert_eq!(
            claim.get("DynamoDB.TransactWriteItems"),
            Some(&1),
            "the claim is one write"
        );
        assert_eq!(
            total(&claim, "SQS"),
            2,
            "one receive and one batched delete"
        );
        assert_eq!(relay.get("EventBridge.PutEvents"), Some(&1));
    }

    // A burst: admissions that arrive together share SendMessageBatch calls.
    let burst = 20;
    let posts = (0..burst).map(|n| {
        client
            .post(format!("{base}/v1/events/e1/reservations"))
            .header("Idempotency-Key", format!("burst-{n}"))
            .json(&json!({"buyer_id": format!("burst-{n}"), "section": "A", "quantity": 1}))
            .send()
    });
    for response in futures_util::future::join_all(posts).await {
        assert_eq!(response.unwrap().status(), StatusCode::ACCEPTED);
    }
    let sends = log.take().get("SQS.SendMessageBatch").copied().unwrap_or(0);
    eprintln!("a burst of {burst} concurrent reservations: {sends} SendMessageBatch calls");
    assert!((1..=burst).contains(&sends));
}
