//! The worker's heart, `process_batch`, driven directly on a real embedded backend, with a
//! fault-injecting wrapper around the real inventory for failures SQLite will not produce on cue.
//!
//! Backends: both (`tests/run.sh` reruns this suite on the AWS emulator).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use jiff::{SignedDuration, Timestamp};
use seatclaim_core::Backend;
use seatclaim_core::domain::{EventId, Intent, JobAction, JobId, JobStatus};
use seatclaim_core::domain::{Notice, ReservationEvent, Tender};
use seatclaim_core::ports::{BackendError, Claims, Delivery, EventPublisher, Inventory, Settled};
use seatclaim_e2e::process_batch;
use seatclaim_e2e::{AppOptions, TestApp, eventually};
use seatclaim_runtime::loops::{BatchOutcome, Limits, relay_once};
use serde_json::json;

/// The real inventory, except that the next `failures` claims fail with `error`.
struct Faulty {
    inner: Arc<dyn Inventory>,
    failures: AtomicUsize,
    error: BackendError,
}

#[async_trait]
impl Inventory for Faulty {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        let failing = self
            .failures
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if failing {
            return Err(self.error.clone());
        }
        self.inner.claim(intents, now).await
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        self.inner.settle(job_id, action, tender).await
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        self.inner.release_lapsed_holds(now, limit).await
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        self.inner.close_waitlist(event_id).await
    }
}

const MAX_ATTEMPTS: u32 = 3;

/// An app with no worker (the test is the worker) and one pending job for seat A-1-1.
async fn one_pending_job() -> (TestApp, String) {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let job_id = app
        .reserve_ok("e1", "k", &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}))
        .await;
    (app, job_id)
}

fn with_faults(backend: &Backend, failures: usize, error: BackendError) -> Backend {
    let faulty = Faulty {
        inner: Arc::clone(&backend.inventory),
        failures: AtomicUsize::new(failures),
        error,
    };
    Backend {
        inventory: Arc::new(faulty),
        ..backend.clone()
    }
}

/// Receives the next delivery, waiting out any retry delay.
async fn next(backend: &Backend) -> Vec<Delivery> {
    eventually(Duration::from_secs(30), "the next delivery", || async {
        let got = backend
            .queue
            .receive(10, Duration::from_millis(200))
            .await
            .unwrap();
        (!got.is_empty()).then_some(got)
    })
    .await
}

/// A FAILED job as operators see it (its reason the error itself), after checking that its buyer
/// sees it FAILED with the generic reason.
async fn failed(app: &TestApp, job_id: &str) -> serde_json::Value {
    let public = app.job(job_id).await;
    assert_eq!(public["status"], "FAILED");
    assert_eq!(
        public["reason"], "processing failed; the request will not be retried",
        "buyers see no internals"
    );
    let id = JobId::parse(job_id).unwrap();
    let job = app.backend.jobs.job(id).await.unwrap().unwrap();
    serde_json::json!({"status": job.status.as_str(), "reason": job.reason})
}

#[tokio::test]
async fn a_transient_failure_is_retried_until_the_claim_succeeds() {
    let (app, job_id) = one_pending_job().await;
    let backend = with_faults(&app.backend, 2, BackendError::transient("throttled"));
    for _ in 0..2 {
        let outcome = process_batch(
            &backend,
            next(&backend).await,
            Limits::attempts(MAX_ATTEMPTS),
        )
        .await;
        assert_eq!(
            outcome,
            BatchOutcome {
                retried: 1,
                ..BatchOutcome::default()
            }
        );
        assert_eq!(app.job(&job_id).await["status"], "PENDING");
    }
    let outcome = process_batch(
        &backend,
        next(&backend).await,
        Limits::attempts(MAX_ATTEMPTS),
    )
    .await;
    assert_eq!(
        outcome,
        BatchOutcome {
            held: 1,
            ..BatchOutcome::default()
        }
    );
    assert_eq!(app.job(&job_id).await["status"], "HELD");
    assert!(
        backend
            .queue
            .receive(10, Duration::from_millis(300))
            .await
            .unwrap()
            .is_empty(),
        "acknowledged"
    );
}

#[tokio::test]
async fn an_intent_that_keeps_failing_is_dead_lettered_and_its_job_failed() {
    let (app, job_id) = one_pending_job().await;
    let backend = with_faults(
        &app.backend,
        usize::MAX,
        BackendError::transient("store unavailable"),
    );
    let mut outcomes = Vec::new();
    for _ in 0..MAX_ATTEMPTS {
        outcomes.push(
            process_batch(
                &backend,
                next(&backend).await,
                Limits::attempts(MAX_ATTEMPTS),
            )
            .await,
        );
    }
    assert_eq!(outcomes.iter().map(|o| o.retried).sum::<usize>(), 2);
    assert_eq!(outcomes.last().unwrap().dead_lettered, 1);
    let job = failed(&app, &job_id).await;
    assert!(
        job["reason"]
            .as_str()
            .unwrap()
            .contains("store unavailable"),
        "{job}"
    );
    assert!(
        backend
            .queue
            .receive(10, Duration::from_millis(300))
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn a_permanent_failure_fails_the_job_at_once() {
    let (app, job_id) = one_pending_job().await;
    let backend = with_faults(
        &app.backend,
        usize::MAX,
        BackendError::permanent("unreadable row"),
    );
    let outcome = process_batch(
        &backend,
        next(&backend).await,
        Limits::attempts(MAX_ATTEMPTS),
    )
    .await;
    assert_eq!(
        outcome,
        BatchOutcome {
            dead_lettered: 1,
            ..BatchOutcome::default()
        }
    );
    assert_eq!(app.job(&job_id).await["status"], "FAILED");
}

#[tokio::test]
async fn an_intent_received_past_its_attempts_fails_without_a_claim() {
    // A worker that crashed on every attempt never got to fail the job; the next one does.
    let (app, job_id) = one_pending_job().await;
    let mut deliveries = next(&app.backend).await;
    deliveries[0].receive_count = MAX_ATTEMPTS + 1;
    let outcome = process_batch(&app.backend, deliveries, Limits::attempts(MAX_ATTEMPTS)).await;
    assert_eq!(
        outcome,
        BatchOutcome {
            dead_lettered: 1,
            ..BatchOutcome::default()
        }
    );
    let job = failed(&app, &job_id).await;
    assert_eq!(
        job["reason"],
        format!("gave up after {MAX_ATTEMPTS} attempts")
    );
    assert_eq!(app.seat_map("e1").await["seats"][0]["state"], "AVAILABLE");
}

#[tokio::test]
async fn an_undecodable_message_is_dead_lettered_and_fails_the_job_it_names() {
    let (app, job_id) = one_pending_job().await;
    let mut deliveries = next(&app.backend).await;
    deliveries[0].message = seatclaim_core::codec::decode_message("{not an intent".into());
    let outcome = process_batch(&app.backend, deliveries, Limits::attempts(MAX_ATTEMPTS)).await;
    assert_eq!(
        outcome,
        BatchOutcome {
            dead_lettered: 1,
            ..BatchOutcome::default()
        }
    );
    let job = failed(&app, &job_id).await;
    assert!(
        job["reason"]
            .as_str()
            .unwrap()
            .starts_with("undecodable intent"),
        "{job}"
    );
}

#[tokio::test]
async fn one_bad_intent_does_not_hold_up_the_rest_of_its_batch() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let first = app
        .reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await;
    let second = app
        .reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-2"]}),
        )
        .await;
    // The batch claim fails, and so does the first intent claimed on its own: only that one fails.
    let backend = with_faults(&app.backend, 2, BackendError::permanent("unreadable row"));
    let deliveries = backend
        .queue
        .receive(10, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(deliveries.len(), 2);
    let outcome = process_batch(&backend, deliveries, Limits::attempts(MAX_ATTEMPTS)).await;
    assert_eq!(
        outcome,
        BatchOutcome {
            held: 1,
            dead_lettered: 1,
            ..BatchOutcome::default()
        }
    );
    assert_eq!(app.job(&first).await["status"], JobStatus::Failed.as_str());
    assert_eq!(app.job(&second).await["status"], JobStatus::Held.as_str());
}

/// A publisher that, on its first call, publishes all but the first event and reports that one failed.
struct PartlyFailing {
    inner: Arc<dyn EventPublisher>,
    failed_once: AtomicUsize,
}

#[async_trait]
impl EventPublisher for PartlyFailing {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        if self.failed_once.fetch_add(1, Ordering::SeqCst) == 0 && events.len() > 1 {
            self.inner.publish(&events[1..]).await?;
            return Ok(vec![0]);
        }
        self.inner.publish(events).await
    }

    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError> {
        self.inner.publish_notice(notice).await
    }
}

#[tokio::test]
async fn a_partly_failed_publication_is_retried_for_the_failed_events_only() {
    let app = TestApp::spawn_with(AppOptions {
        embedded_worker: false,
        ..AppOptions::default()
    })
    .await;
    app.create_grid("e1", 1, 4, 300).await;
    let jobs = [
        app.reserve_ok(
            "e1",
            "k1",
            &json!({"buyer_id": "b1", "seat_ids": ["A-1-1"]}),
        )
        .await,
        app.reserve_ok(
            "e1",
            "k2",
            &json!({"buyer_id": "b2", "seat_ids": ["A-1-2"]}),
        )
        .await,
    ];
    let deliveries = app
        .backend
        .queue
        .receive(10, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(
        process_batch(&app.backend, deliveries, Limits::attempts(MAX_ATTEMPTS))
            .await
            .held,
        2
    );
    let publisher = PartlyFailing {
        inner: Arc::clone(&app.backend.publisher),
        failed_once: AtomicUsize::new(0),
    };
    let backend = Backend {
        publisher: Arc::new(publisher),
        ..app.backend.clone()
    };
    assert_eq!(
        relay_once(&backend).await.unwrap(),
        1,
        "one of two published"
    );
    assert_eq!(
        backend.outbox.unpublished(10).await.unwrap().len(),
        1,
        "the failed one waits"
    );
    assert_eq!(
        relay_once(&backend).await.unwrap(),
        1,
        "and goes on the next round"
    );
    assert_eq!(relay_once(&backend).await.unwrap(), 0);
    let published = eventually(
        Duration::from_secs(30),
        "both events to reach the consumer",
        || async {
            let published = app.published_events().await;
            (published.len() >= 2).then_some(published)
        },
    )
    .await;
    let mut ids: Vec<&str> = published
        .iter()
        .map(|e| e["detail"]["job_id"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    let mut expected: Vec<&str> = jobs.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(ids, expected, "each event published once");
}

#[tokio::test]
async fn an_intent_older_than_the_maximum_age_is_rejected_as_expired() {
    let (app, job_id) = one_pending_job().await;
    let outcome = decide_aged(&app, 61).await;
    assert_eq!(
        outcome,
        BatchOutcome {
            expired: 1,
            ..BatchOutcome::default()
        }
    );
    let job = app.job(&job_id).await;
    assert_eq!(
        (job["status"].as_str(), job["reason"].as_str()),
        (Some("REJECTED"), Some("request expired"))
    );
    assert_eq!(app.seat_map("e1").await["seats"][0]["state"], "AVAILABLE");
    assert!(
        app.backend
            .queue
            .receive(10, Duration::from_millis(300))
            .await
            .unwrap()
            .is_empty(),
        "acknowledged"
    );
}

#[tokio::test]
async fn an_intent_just_within_the_maximum_age_is_claimed() {
    let (app, job_id) = one_pending_job().await;
    let outcome = decide_aged(&app, 59).await;
    assert_eq!(
        outcome,
        BatchOutcome {
            held: 1,
            ..BatchOutcome::default()
        }
    );
    assert_eq!(app.job(&job_id).await["status"], "HELD");
}

/// Decides the queued intent once it is `secs` old, under a maximum age of 60 s. The intent ages
/// by the app's clock, which accepted it and which the worker reads.
async fn decide_aged(app: &TestApp, secs: i64) -> BatchOutcome {
    let limits = Limits {
        max_attempts: MAX_ATTEMPTS,
        max_intent_age: SignedDuration::from_secs(60),
    };
    app.clock.advance(SignedDuration::from_secs(secs));
    process_batch(&app.backend, next(&app.backend).await, limits).await
}
