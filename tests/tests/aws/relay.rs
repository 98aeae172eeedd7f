//! The AWS outbox relay scaled out: relays side by side lease different shards of the outbox,
//! so each event is published once, and a relay that dies holding leases delays its shards only
//! until the leases lapse. On DynamoDB Local (leases are conditional writes) and moto (the bus,
//! with a consumer queue that sees every delivery).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use seatclaim_core::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, JobId, NewEvent, SeatRequest, SectionSpec,
};
use seatclaim_core::{
    Backend,
    app::{self, relay_once},
};
use seatclaim_e2e::JumpClock;
use seatclaim_e2e::emulator::{EventConsumer, emulator_config, fresh_settings, provision};
use seatclaim_e2e::eventually;
use seatclaim_runtime::config::AwsSettings;

const VISIBILITY: Duration = Duration::from_secs(30);

async fn relay(
    config: &aws_config::SdkConfig,
    settings: &AwsSettings,
    clock: Arc<JumpClock>,
) -> Backend {
    seatclaim_e2e::emulator::open(config, settings, VISIBILITY, clock)
        .await
        .expect("the AWS backend opens on the emulator")
}

/// Each buyer's one key: its own id.
fn key_of(buyer: &BuyerId) -> IdempotencyKey {
    IdempotencyKey::parse(buyer.as_str()).unwrap()
}

/// Records one Held event for each of `jobs` new jobs (admitted and claimed, any seat of A).
async fn record_holds(backend: &Backend, jobs: usize) {
    let event_id = EventId::parse("e1").unwrap();
    let event = NewEvent::parse(EventSpec {
        event_id: event_id.to_string(),
        name: "relay".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "A".into(),
            rows: 1,
            seats_per_row: u32::try_from(jobs).unwrap(),
            price: None,
        }]),
        ..EventSpec::default()
    })
    .unwrap();
    backend.catalog.create_event(&event).await.unwrap();
    let intents: Vec<Intent> = (0..jobs)
        .map(|n| {
            let buyer_id = BuyerId::parse(&format!("b{n}")).unwrap();
            Intent {
                access: None,
                job_id: JobId::for_key(&buyer_id, &key_of(&buyer_id)),
                event_id: event_id.clone(),
                buyer_id,
                request: SeatRequest::in_section("A", 1).unwrap(),
                accepted_at: backend.clock.now(),
                opens_at: None,
            }
        })
        .collect();
    for intent in &intents {
        let key = key_of(&intent.buyer_id);
        backend.admissions.admit(&key, intent).await.unwrap();
    }
    for batch in intents.chunks(10) {
        app::claim(backend, batch, backend.clock.now())
            .await
            .unwrap();
    }
}

/// Relay rounds until one publishes nothing; how many events they published.
async fn relay_until_nothing(backend: &Backend) -> usize {
    let mut published = 0;
    loop {
        match relay_once(backend).await.unwrap() {
            0 => return published,
            n => published += n,
        }
    }
}

/// Job ids of the delivered events, with how often each was delivered.
fn deliveries(events: &[serde_json::Value]) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for event in events {
        let job = event["detail"]["job_id"]
            .as_str()
            .expect("a job id")
            .to_owned();
        *seen.entry(job).or_default() += 1;
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_relays_share_the_outbox_and_publish_each_event_once() {
    let config = emulator_config().await;
    let settings = fresh_settings();
    provision(&config, &settings, VISIBILITY, 3).await;
    let consumer = EventConsumer::subscribe(&config, &settings).await;
    let clock = Arc::new(JumpClock::default());
    let (first, second) = (
        relay(&config, &settings, clock.clone()).await,
        relay(&config, &settings, clock.clone()).await,
    );
    let jobs = 240;
    record_holds(&first, jobs).await;

    let drain = |backend: Backend| async move {
        let mut published = 0;
        loop {
            match relay_once(&backend).await.unwrap() {
                0 if backend.outbox.oldest_unpublished().await.unwrap().is_none() => {
                    return published;
                }
                n => published += n,
            }
        }
    };
    let (by_first, by_second) = tokio::join!(drain(first.clone()), drain(second.clone()));
    eprintln!("relay 1 published {by_first}, relay 2 published {by_second}");
    assert_eq!(by_first + by_second, jobs, "every event is published once");
    assert!(by_first > 0 && by_second > 0, "both relays took a share");

    let delivered = eventually(
        Duration::from_secs(30),
        "every event reaches the consumer",
        || async {
            let seen = deliveries(&consumer.drain().await);
            (seen.len() == jobs).then_some(seen)
        },
    )
    .await;
    assert!(
        delivered.values().all(|times| *times == 1),
        "no event was delivered twice: {delivered:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_relays_shards_are_published_once_its_leases_lapse() {
    let config = emulator_config().await;
    let settings = fresh_settings();
    provision(&config, &settings, VISIBILITY, 3).await;
    let clock = Arc::new(JumpClock::default());
    let (dead, alive) = (
        relay(&config, &settings, clock.clone()).await,
        relay(&config, &settings, clock.clone()).await,
    );
    record_holds(&dead, 60).await;

    // The first relay takes a page (and its shards' leases), then dies before marking it.
    let taken = dead.outbox.unpublished(100).await.unwrap();
    assert!(!taken.is_empty());
    drop(dead);
    let published = relay_until_nothing(&alive).await;
    assert_eq!(
        published,
        60 - taken.len(),
        "everything but the leased shards"
    );
    assert!(alive.outbox.oldest_unpublished().await.unwrap().is_some());

    clock.advance(SignedDuration::from_secs(11));
    let recovered = relay_until_nothing(&alive).await;
    assert_eq!(
        recovered,
        taken.len(),
        "the lapsed shards move to the live relay"
    );
    assert!(alive.outbox.oldest_unpublished().await.unwrap().is_none());
}
