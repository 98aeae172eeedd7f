//! Rejections on AWS: the job's conditional update alone, its event published by the worker on
//! the spot and recorded after it (or left to the relay while the bus refuses it), and a crash
//! between the update and the record mended by the redelivery. On DynamoDB Local and moto (the
//! bus, with a consumer queue that sees every delivery).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;

use seatclaim_core::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, JobId, JobStatus, NewEvent,
    ReservationEvent, SeatRequest, SectionSpec,
};
use seatclaim_core::ports::ClaimOutcome;
use seatclaim_core::{
    Backend,
    app::{self, relay_once},
};
use seatclaim_e2e::JumpClock;
use seatclaim_e2e::emulator::{EventConsumer, emulator_config, fresh_settings, provision};
use seatclaim_e2e::eventually;
use seatclaim_e2e::faults::FaultSettings;

const VISIBILITY: Duration = Duration::from_secs(30);

/// A backend on a fresh prefix, with an event of one seat, `A-1-1`, and a consumer of its bus.
async fn one_seat() -> (Backend, EventConsumer, Arc<JumpClock>) {
    let config = emulator_config().await;
    let settings = fresh_settings();
    provision(&config, &settings, VISIBILITY, 3).await;
    let consumer = EventConsumer::subscribe(&config, &settings).await;
    let clock = Arc::new(JumpClock::default());
    let backend = seatclaim_e2e::emulator::open(&config, &settings, VISIBILITY, clock.clone())
        .await
        .unwrap();
    let event = NewEvent::parse(EventSpec {
        event_id: "e1".into(),
        name: "rejections".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "A".into(),
            rows: 1,
            seats_per_row: 1,
            price: None,
        }]),
        ..EventSpec::default()
    })
    .unwrap();
    backend.catalog.create_event(&event).await.unwrap();
    (backend, consumer, clock)
}

/// An admitted intent of `buyer` for the one seat.
async fn admitted(backend: &Backend, buyer: &str) -> Intent {
    let (buyer_id, key) = (
        BuyerId::parse(buyer).unwrap(),
        IdempotencyKey::parse(buyer).unwrap(),
    );
    let intent = Intent {
        access: None,
        job_id: JobId::for_key(&buyer_id, &key),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id,
        request: SeatRequest::exact(&["A-1-1".to_owned()]).unwrap(),
        accepted_at: backend.clock.now(),
        opens_at: None,
    };
    backend.admissions.admit(&key, &intent).await.unwrap();
    intent
}

/// What identifies events: job, status and instant (stored to the millisecond).
fn summary(events: &[ReservationEvent]) -> Vec<(JobId, JobStatus, i64)> {
    events
        .iter()
        .map(|e| (e.job_id, e.status, e.occurred_at.as_millisecond()))
        .collect()
}

/// The delivered events' (job id, detail-type) pairs.
async fn delivered(consumer: &EventConsumer, want: usize) -> Vec<(String, String)> {
    eventually(
        Duration::from_secs(30),
        "the events reach the consumer",
        || async {
            let seen: Vec<(String, String)> = consumer
                .drain()
                .await
                .iter()
                .map(|e| {
                    let job = e["detail"]["job_id"].as_str().unwrap_or_default();
                    let kind = e["detail-type"].as_str().unwrap_or_default();
                    (job.to_owned(), kind.to_owned())
                })
                .collect();
            (seen.len() >= want).then_some(seen)
        },
    )
    .await
}

/// Claims `intent` alone, as one delivery of it, and expects a rejection handed back to record.
async fn rejected_unrecorded(backend: &Backend, intent: &Intent) -> Vec<ReservationEvent> {
    let claims = backend
        .inventory
        .claim(std::slice::from_ref(intent), backend.clock.now())
        .await
        .unwrap();
    assert!(matches!(
        claims.outcomes[..],
        [ClaimOutcome::Rejected { .. }]
    ));
    assert_eq!(
        claims.unrecorded.len(),
        1,
        "the rejection's event is handed back"
    );
    claims.unrecorded
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_delivery_waits_for_the_deciding_deliverys_record() {
    let (backend, consumer, _) = one_seat().await;
    let holder = admitted(&backend, "b1").await;
    let loser = admitted(&backend, "b2").await;
    app::claim(&backend, &[holder], backend.clock.now())
        .await
        .unwrap();
    let events = rejected_unrecorded(&backend, &loser).await;
    // A duplicate delivery arrives while the deciding one is still publishing: it waits for the
    // record instead of failing (which would spend one of the intent's attempts).
    let duplicate = tokio::spawn({
        let (backend, loser) = (backend.clone(), loser.clone());
        async move {
            let now = backend.clock.now();
            backend.inventory.claim(&[loser], now).await
        }
    });
    assert!(backend.publisher.publish(&events).await.unwrap().is_empty());
    backend.outbox.record(&events, &[]).await.unwrap();
    let duplicate = duplicate.await.unwrap().unwrap();
    assert_eq!(
        duplicate.outcomes,
        [ClaimOutcome::AlreadyDecided(JobStatus::Rejected)]
    );
    assert!(
        duplicate.unrecorded.is_empty(),
        "the deciding delivery's event is not taken over"
    );
    let seen = delivered(&consumer, 1).await;
    assert_eq!(
        seen,
        [(loser.job_id.to_string(), "Reservation Rejected".to_owned())],
        "published once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejection_is_published_at_once_and_a_crash_before_its_record_is_mended() {
    let (backend, consumer, clock) = one_seat().await;
    let holder = admitted(&backend, "b1").await;
    let loser = admitted(&backend, "b2").await;
    app::claim(&backend, &[holder], backend.clock.now())
        .await
        .unwrap();
    let unrecorded = rejected_unrecorded(&backend, &loser).await;
    // The worker dies here: its event neither published nor recorded. The redelivery, after the
    // visibility timeout, finds the job decided and hands the event back again.
    clock.advance(SignedDuration::from_secs(30));
    let now = backend.clock.now();
    let again = backend
        .inventory
        .claim(std::slice::from_ref(&loser), now)
        .await
        .unwrap();
    assert_eq!(
        again.outcomes,
        [ClaimOutcome::AlreadyDecided(JobStatus::Rejected)]
    );
    assert_eq!(summary(&again.unrecorded), summary(&unrecorded));
    app::claim(&backend, std::slice::from_ref(&loser), now)
        .await
        .unwrap();
    let settled = backend
        .inventory
        .claim(std::slice::from_ref(&loser), now)
        .await
        .unwrap();
    assert!(
        settled.unrecorded.is_empty(),
        "recorded once, handed back no more"
    );

    let history = backend.jobs.history(loser.job_id).await.unwrap();
    assert_eq!(
        summary(&history),
        summary(&unrecorded),
        "the job's history has its rejection once"
    );
    let seen = delivered(&consumer, 1).await;
    assert_eq!(
        seen,
        [(loser.job_id.to_string(), "Reservation Rejected".to_owned())],
        "published without the relay, once"
    );
    assert_eq!(
        relay_once(&backend).await.unwrap(),
        1,
        "only the hold waited"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejections_the_bus_refuses_wait_in_the_outbox_for_the_relay() {
    let (backend, consumer, _) = one_seat().await;
    let down = FaultSettings {
        bus_down: true,
        ..FaultSettings::default()
    }
    .inject(backend.clone());
    let holder = admitted(&backend, "b1").await;
    let loser = admitted(&backend, "b2").await;
    let now = backend.clock.now();
    let outcomes = app::claim(&down, &[holder.clone(), loser.clone()], now)
        .await
        .unwrap();
    // Within one batch either may win: the outcomes say which.
    let (held, rejected) = match outcomes[..] {
        [ClaimOutcome::Held { .. }, ClaimOutcome::Rejected { .. }] => (holder, loser),
        [ClaimOutcome::Rejected { .. }, ClaimOutcome::Held { .. }] => (loser, holder),
        _ => panic!("one hold and one rejection, got {outcomes:?}"),
    };
    assert!(
        relay_once(&down).await.is_err(),
        "the relay cannot publish either"
    );
    assert_eq!(
        backend.jobs.history(rejected.job_id).await.unwrap().len(),
        1
    );

    assert_eq!(
        relay_once(&backend).await.unwrap(),
        2,
        "the hold and the rejection"
    );
    let mut seen = delivered(&consumer, 2).await;
    seen.sort();
    let mut want = vec![
        (held.job_id.to_string(), "Reservation Held".to_owned()),
        (
            rejected.job_id.to_string(),
            "Reservation Rejected".to_owned(),
        ),
    ];
    want.sort();
    assert_eq!(seen, want, "each published once, by the relay");
    assert!(backend.outbox.oldest_unpublished().await.unwrap().is_none());
}
