//! What one single-seat reservation costs in AWS requests, from POST to HELD and its published
//! event, counted by a proxy in front of the emulator (the real requests the real code sends).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;

use aws_config::BehaviorVersion;
use reqwest::StatusCode;
use seatclaim_api::{
    Access, AppState, Application, BuyerRate, LongPolls, ReadBudget, SeatMapLimits, ServerLimits,
};
use seatclaim_core::Backend;
use seatclaim_core::domain::{BuyerId, EventId, Intent, JobId, SeatRequest};
use seatclaim_core::identity::DEFAULT_ADMIN_SCOPE;
use seatclaim_core::ports::SystemClock;
use seatclaim_e2e::emulator::{emulator_config, fresh_settings, provision};
use seatclaim_e2e::process_batch;
use seatclaim_e2e::request_log::{Counts, LINE_COUNTS, RequestLog};
use seatclaim_runtime::loops::{Limits, relay_once};
use serde_json::json;

mod api_role;

/// Requests to `service`, leaving out the queue counts a process adds once a second.
fn total(counts: &Counts, service: &str) -> usize {
    counts
        .iter()
        .filter(|(op, _)| op.starts_with(service) && op.as_str() != LINE_COUNTS)
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

/// A proxy in front of the emulator (with `observer`, if given), and an SDK configuration that
/// sends every request through it.
async fn proxy(
    observer: Option<Arc<dyn seatclaim_e2e::request_log::Observer>>,
) -> (RequestLog, aws_config::SdkConfig) {
    let endpoint = |name: &str| std::env::var(name).unwrap_or_default();
    let dynamodb = endpoint("AWS_ENDPOINT_URL_DYNAMODB");
    let log = RequestLog::observed(
        &endpoint("AWS_ENDPOINT_URL"),
        Some(dynamodb.as_str()),
        observer,
    )
    .await;
    let proxied = aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(&log.endpoint)
        .load()
        .await;
    (log, proxied)
}

/// A fresh AWS backend on the emulator whose every request goes through a counting proxy.
async fn counted_backend() -> (RequestLog, Backend) {
    let direct = emulator_config().await;
    let (log, counted) = proxy(None).await;
    let settings = fresh_settings();
    provision(&direct, &settings, Duration::from_secs(30), 6).await;
    let backend = seatclaim_e2e::emulator::open(
        &counted,
        &settings,
        Duration::from_secs(30),
        Arc::new(SystemClock),
    )
    .await
    .unwrap();
    (log, backend)
}

/// Serves the API on `backend` on a free port; returns its base URL. Authentication off and no
/// buyer limit to speak of: these tests count requests, nothing else.
async fn serve(backend: Backend) -> String {
    let state = AppState::new(
        backend,
        Access {
            auth: None,
            admin_scope: DEFAULT_ADMIN_SCOPE.to_owned(),
            creates_events: true,
            max_event_seats: seatclaim_core::domain::MAX_SEATS_PER_EVENT,
            // The requests counted are those of events without a seat limit.
            default_seat_limit: None,
            ui_oidc: None,
            page_origins: Vec::new(),
            token_links: true,
            buyers: BuyerRate::new(1_000, 1_000),
            long_polls: LongPolls::new(&ServerLimits {
                max_long_polls: 16,
                ..ServerLimits::default()
            }),
            body_read_timeout: ServerLimits::default().body_read_timeout(),
            stripe: None,
            payments_required: false,
            code_key: None,
        },
        SeatMapLimits {
            max_age: SignedDuration::ZERO,
            budget: ReadBudget::default(),
        },
        false,
        seatclaim_api::openapi::json(false),
    );
    let app = Application::build(
        state,
        "127.0.0.1:0".parse().unwrap(),
        "127.0.0.1:0".parse().unwrap(),
        None,
        Duration::from_secs(5),
        ServerLimits::default(),
    )
    .await
    .unwrap();
    let base = format!("http://{}", app.local_addr().unwrap());
    tokio::spawn(app.run_until_stopped(std::future::pending()));
    base
}

/// SQS requests per intent at flash-sale load: 1,000 intents handed to the queue at once, as
/// that many concurrent admissions do, then taken by the worker loop's turn
/// (`acknowledge_and_receive`, ten at a time, each batch acknowledged with the next receive). The
/// claims between receive and acknowledge call DynamoDB only, so they are left out. SQS carries at
/// most ten messages per call, so one send, one receive and one delete per ten intents, 0.3, is
/// the floor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_load_sqs_requests_per_intent_come_close_to_the_floor_of_three_per_ten() {
    let (log, backend) = counted_backend().await;
    let event = EventId::parse("e1").unwrap();
    let intents: Vec<Intent> = (0..1_000)
        .map(|n| Intent {
            access: None,
            job_id: JobId::new(),
            event_id: event.clone(),
            buyer_id: BuyerId::parse(&format!("b{n}")).unwrap(),
            request: SeatRequest::exact(&["A-1-1".to_owned()]).unwrap(),
            accepted_at: backend.clock.now(),
            opens_at: None,
        })
        .collect();
    log.take();
    let sends = intents
        .iter()
        .map(|intent| backend.queue.send(std::slice::from_ref(intent)));
    for sent in futures_util::future::join_all(sends).await {
        sent.unwrap();
    }
    let mut received = std::collections::HashSet::new();
    let mut done = Vec::new();
    while received.len() < intents.len() {
        let batch = backend
            .queue
            .acknowledge_and_receive(&done, 10, Duration::from_secs(1))
            .await
            .unwrap();
        received.extend(batch.iter().filter_map(|d| d.job_id));
        done = batch.into_iter().map(|d| d.receipt).collect();
    }
    backend.queue.delete(&done).await.unwrap();
    let counts = log.take();
    let per_intent = total(&counts, "SQS") as f64 / intents.len() as f64;
    eprintln!(
        "SQS requests per intent at load: {per_intent:.3} ({})",
        show("1,000 intents", &counts)
    );
    assert!(
        per_intent < 0.5,
        "sends, receives and deletes are batched: {per_intent}"
    );
    assert!(
        backend
            .queue
            .receive(10, Duration::ZERO)
            .await
            .unwrap()
            .is_empty(),
        "every message was acknowledged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_single_seat_reservation_costs_one_dynamodb_write_to_claim() {
    let (log, backend) = counted_backend().await;
    let base = serve(backend.clone()).await;
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
            admission.get("DynamoDB.PutItem"),
            Some(&1),
            "admission is one write: the job item is the key's record"
        );
        assert_eq!(admission.get("DynamoDB.TransactWriteItems"), None);
        assert_eq!(total(&admission, "SQS"), 1, "admission sends one message");
        if round == "next reservation" {
            assert_eq!(
                total(&admission, "DynamoDB"),
                1,
                "a warm admission is its one put: no key read for a new key"
            );
        }
        assert_eq!(
            admission.get("DynamoDB.BatchGetItem"),
            None,
            "admission reads no seat items: seat ids come from the event cache"
        );
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
        assert_eq!(
            relay.get("DynamoDB.BatchWriteItem"),
            Some(&1),
            "the page is marked published in one batch"
        );
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
