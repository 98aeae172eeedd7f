//! Sale openings in the port contract: intents admitted before `sale_starts_at` wait in the
//! pre-queue (one per buyer), nothing of the event is received before the start, and at the
//! start the pre-queue is queued in the order its published seed draws, ahead of every intent
//! admitted later. Backends that do not build openings refuse the event instead.

use std::time::Duration;

use crate::app::{self, Limits};
use crate::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, JobId, JobStatus, NewEvent, SaleOpened,
    SeatRequest, SectionSpec, Seed, digest, shuffle,
};
use crate::ports::{Admission, EventCreation, Message};
use jiff::{SignedDuration, Timestamp};

use crate::contract::Fixture;
use crate::testkit::process_batch;

/// How long after the fixture's "now" the sale starts.
const STARTS_IN: SignedDuration = SignedDuration::from_secs(60);

/// Creates event `id` with `seats` seats in section O, starting [`STARTS_IN`] from now; `None`
/// where the backend refuses openings.
async fn opening_later(f: &Fixture, id: &str, seats: u32) -> (EventId, Timestamp) {
    opening_with(f, id, seats, false).await
}

/// [`opening_later`], its section keeping a line where `waitlist`.
async fn opening_with(f: &Fixture, id: &str, seats: u32, waitlist: bool) -> (EventId, Timestamp) {
    // Whole seconds, as organisers announce a start (stores keep milliseconds).
    let now = f.backend.clock.now().as_second();
    let starts = Timestamp::from_second(now).unwrap() + STARTS_IN;
    let event = NewEvent::parse(EventSpec {
        event_id: id.into(),
        name: "opening".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "O".into(),
            rows: 1,
            seats_per_row: seats,
            price: None,
        }]),
        sale_starts_at: Some(starts.to_string()),
        waitlist: Some(waitlist),
        ..EventSpec::default()
    })
    .expect("a valid event");
    match f.backend.catalog.create_event(&event).await.unwrap() {
        EventCreation::Created(_) => (event.event_id, starts),
        other => panic!("the event was not created: {other:?}"),
    }
}

fn intent(f: &Fixture, event: &EventId, buyer: &str, key: &IdempotencyKey) -> Intent {
    let buyer_id = BuyerId::parse(buyer).unwrap();
    Intent {
        access: None,
        job_id: f.backend.admissions.new_job_id(&buyer_id, key),
        event_id: event.clone(),
        buyer_id,
        request: SeatRequest::in_section("O", 1).unwrap(),
        accepted_at: f.backend.clock.now(),
        opens_at: None,
    }
}

async fn admit(f: &Fixture, event: &EventId, buyer: &str, key: &str) -> (Intent, Admission) {
    let key = IdempotencyKey::parse(key).unwrap();
    let intent = intent(f, event, buyer, &key);
    let admission = f.backend.admissions.admit(&key, &intent).await.unwrap();
    (intent, admission)
}

/// The event's draw, once made.
async fn drawn(f: &Fixture, event: &EventId) -> Option<SaleOpened> {
    let opening = f.backend.catalog.opening(event, None).await.unwrap();
    opening.expect("an event with a start").draw
}

/// Every message the queue has now, in the order first received. Nothing is acknowledged, so
/// a slow run sees its first messages again after the visibility timeout: those redeliveries
/// are left out, and a batch of nothing new ends the reading.
pub(super) async fn receive_all(f: &Fixture) -> Vec<JobId> {
    let mut received = Vec::new();
    loop {
        let batch = f.backend.queue.receive(10, Duration::ZERO).await.unwrap();
        let before = received.len();
        for delivery in batch {
            let Message::Intent(intent) = delivery.message else {
                panic!("an undecodable message");
            };
            if !received.contains(&intent.job_id) {
                received.push(intent.job_id);
            }
        }
        if received.len() == before {
            return received;
        }
    }
}

/// The pre-queue waits, one intent per buyer; the opening queues it in the drawn order, which
/// its seed and digest reproduce, before what is admitted after it.
pub async fn a_sale_opens_in_the_order_its_seed_draws(f: Fixture) {
    let (event, starts) = opening_later(&f, "op", 10).await;
    let mut arrivals = Vec::new();
    for n in 0..6 {
        let (intent, admission) = admit(&f, &event, &format!("b{n}"), &format!("k{n}")).await;
        assert_eq!(admission, Admission::Prequeued(intent.job_id));
        arrivals.push(intent.job_id);
    }
    let (_, again) = admit(&f, &event, "b0", "another-key").await;
    assert_eq!(again, Admission::AlreadyQueued(arrivals[0]));
    let (_, retried) = admit(&f, &event, "b0", "k0").await;
    assert_eq!(retried, Admission::Prequeued(arrivals[0]), "a retry");
    let pending = f.backend.jobs.job(arrivals[3]).await.unwrap().unwrap();
    assert_eq!(
        f.backend.jobs.line(&pending).await.unwrap().opens_at,
        Some(starts)
    );
    assert_eq!(
        receive_all(&f).await,
        [],
        "nothing is received before the start"
    );
    let waiting = f
        .backend
        .catalog
        .opening(&event, None)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((waiting.sale_starts_at, waiting.prequeued), (starts, 6));
    assert_eq!(waiting.draw, None);

    f.clock
        .advance(starts.duration_since(f.backend.clock.now()));
    let (late, admission) = admit(&f, &event, "late", "k-late").await;
    assert_eq!(
        admission,
        Admission::Accepted(late.job_id),
        "after the start"
    );
    let received = receive_all(&f).await;
    let draw = drawn(&f, &event).await;
    let draw = draw.expect("drawn at the first receive after the start");
    eprintln!("seed {}", draw.seed);
    assert_eq!(draw.shuffled, 6);
    let mut reproduced = arrivals.clone();
    shuffle(&Seed::parse(&draw.seed).unwrap(), &mut reproduced);
    assert_eq!(
        received[..6],
        reproduced,
        "the queue follows the drawn order"
    );
    assert_eq!(digest(&reproduced), draw.digest);
    assert_eq!(received[6..], [late.job_id], "after the whole pre-queue");
    for (place, job_id) in reproduced.iter().enumerate() {
        let job = f.backend.jobs.job(*job_id).await.unwrap().unwrap();
        let line = f.backend.jobs.line(&job).await.unwrap();
        assert_eq!((line.ahead, line.opens_at), (place as u64, None));
    }

    let unpublished = f.backend.catalog.unpublished_openings().await.unwrap();
    assert_eq!(unpublished, [draw]);
    app::relay_once(&f.backend).await.unwrap();
    assert_eq!(f.backend.catalog.unpublished_openings().await.unwrap(), []);
}

/// An intent admitted an hour before its sale opens is not "request expired" at the opening:
/// its age counts from the opening, not from its admission.
pub async fn a_pre_queued_intent_ages_from_the_opening(f: Fixture) {
    let starts_in = SignedDuration::from_hours(1);
    let starts = Timestamp::from_second(f.backend.clock.now().as_second()).unwrap() + starts_in;
    let event = NewEvent::parse(EventSpec {
        event_id: "early".into(),
        name: "an early line".into(),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "O".into(),
            rows: 1,
            seats_per_row: 1,
            price: None,
        }]),
        sale_starts_at: Some(starts.to_string()),
        ..EventSpec::default()
    })
    .unwrap();
    f.backend.catalog.create_event(&event).await.unwrap();
    let (intent, _) = admit(&f, &event.event_id, "b1", "k1").await;
    f.clock
        .advance(starts.duration_since(f.backend.clock.now()) + SignedDuration::from_secs(1));
    let batch = f.backend.queue.receive(10, Duration::ZERO).await.unwrap();
    let limits = Limits::attempts(5);
    assert!(
        limits.max_intent_age < starts_in,
        "the wait is longer than an intent's age"
    );
    let outcome = process_batch(&f.backend, batch, limits).await;
    let job = f.backend.jobs.job(intent.job_id).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Held, "{outcome:?}");
}

/// Arriving first buys nothing: 1,000 buyers pre-queued for 250 seats win in the drawn order, so
/// the first quarter of arrivals takes about a quarter of the seats, not all of them.
pub async fn arriving_first_buys_no_advantage_at_the_opening(f: Fixture) {
    let (event, _) = opening_later(&f, "fair", 250).await;
    let mut arrivals = Vec::new();
    for n in 0..1_000 {
        let (intent, _) = admit(&f, &event, &format!("b{n}"), &format!("k{n}")).await;
        arrivals.push(intent.job_id);
    }
    f.clock.advance(STARTS_IN);
    // A figure for the report, not a check: the draw and the decisions of one claim loop.
    let opened = std::time::Instant::now();
    loop {
        let batch = f.backend.queue.receive(10, Duration::ZERO).await.unwrap();
        if batch.is_empty() {
            break;
        }
        process_batch(&f.backend, batch, Limits::attempts(5)).await;
    }
    let took = opened.elapsed();
    let mut winners_by_quarter = [0_u32; 4];
    for (rank, job_id) in arrivals.iter().enumerate() {
        let job = f.backend.jobs.job(*job_id).await.unwrap().unwrap();
        assert_ne!(job.status, JobStatus::Pending, "every intent is decided");
        if job.status == JobStatus::Held {
            winners_by_quarter[rank / 250] += 1;
        }
    }
    let draw = drawn(&f, &event).await;
    eprintln!(
        "seed {}: winners by quarter of arrival {winners_by_quarter:?}; opening to last decision \
         {} ms for 1,000 intents",
        draw.map(|d| d.seed).unwrap_or_default(),
        took.as_millis()
    );
    assert_eq!(winners_by_quarter.iter().sum::<u32>(), 250);
    assert!(
        winners_by_quarter[0] < 100,
        "fewer than 40% of the first quarter win: {winners_by_quarter:?}"
    );
    assert!(
        winners_by_quarter[3] > 25,
        "the last quarter wins too: {winners_by_quarter:?}"
    );
}

/// The buyers of a pre-queue that lose the draw wait in line in the drawn order, not in the
/// order they arrived: arriving first buys no better place in the line either.
pub async fn the_pre_queues_losers_wait_in_drawn_order(f: Fixture) {
    let (event, _) = opening_with(&f, "drawn-line", 1, true).await;
    let mut arrivals = Vec::new();
    for n in 0..12 {
        let (intent, _) = admit(&f, &event, &format!("b{n}"), &format!("k{n}")).await;
        arrivals.push(intent.job_id);
    }
    f.clock.advance(STARTS_IN);
    loop {
        let batch = f.backend.queue.receive(10, Duration::ZERO).await.unwrap();
        if batch.is_empty() {
            break;
        }
        process_batch(&f.backend, batch, Limits::attempts(5)).await;
    }
    let draw = drawn(&f, &event).await.expect("drawn at the opening");
    eprintln!("seed {}", draw.seed);
    let mut order = arrivals.clone();
    shuffle(&Seed::parse(&draw.seed).unwrap(), &mut order);
    // Who wins is the release's order (on SQS, the drawn one to within a window); whoever
    // lost waits in the drawn order.
    let mut losers = Vec::new();
    for job_id in &order {
        let job = f.backend.jobs.job(*job_id).await.unwrap().unwrap();
        if job.status != JobStatus::Held {
            losers.push(job);
        }
    }
    assert_eq!(losers.len(), order.len() - 1, "one seat, one hold");
    for (place, job) in losers.iter().enumerate() {
        assert_eq!(job.status, JobStatus::Waitlisted);
        let position = f.backend.jobs.waitlist_position(job).await.unwrap();
        assert_eq!(
            position,
            Some(place as u64 + 1),
            "the line follows the draw (arrivals {arrivals:?}, drawn {order:?})"
        );
    }
}
