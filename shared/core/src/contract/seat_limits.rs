//! The per-buyer seat limit in the port contract: the claim's atomic step is the authority, so
//! one buyer racing claims from several worker loops gets no more seats than the limit, and
//! seats given back (cancelled, or a hold that lapsed) make room again.

use crate::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, Job, JobAction, JobStatus, NewEvent,
    SeatRequest, SectionSpec, Tender,
};
use crate::ports::{Admission, Settled};
use futures_util::future::join_all;
use jiff::SignedDuration;

use crate::contract::{Fixture, claim_as_redelivered};
use crate::testkit::seeded_rng;

const LIMIT: u32 = 2;
const HOLD_SECONDS: u32 = 60;
/// Worker loops claiming the buyer's intents at once.
const LOOPS: usize = 4;

/// Creates an event of one 20-seat section `L` with a limit of [`LIMIT`] seats per buyer.
async fn limited_event(f: &Fixture) -> EventId {
    let event = NewEvent::parse(EventSpec {
        event_id: "limited".into(),
        name: "limited".into(),
        hold_seconds: Some(HOLD_SECONDS),
        max_seats_per_buyer: Some(LIMIT),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "L".into(),
            rows: 1,
            seats_per_row: 20,
            price: None,
        }]),
        ..EventSpec::default()
    })
    .expect("a valid event");
    f.backend.catalog.create_event(&event).await.unwrap();
    event.event_id
}

/// Admits `buyer`'s intent for `quantity` seats of section L, under a key of its own.
async fn admitted(f: &Fixture, event: &EventId, buyer: &str, quantity: i64) -> Intent {
    let buyer_id = BuyerId::parse(buyer).unwrap();
    let key = IdempotencyKey::parse(&format!("limit-{}", uuid::Uuid::new_v4())).unwrap();
    let intent = Intent {
        access: None,
        job_id: f.backend.admissions.new_job_id(&buyer_id, &key),
        event_id: event.clone(),
        buyer_id,
        request: SeatRequest::in_section("L", quantity).unwrap(),
        accepted_at: f.backend.clock.now(),
        opens_at: None,
    };
    assert_eq!(
        f.backend.admissions.admit(&key, &intent).await.unwrap(),
        Admission::Accepted(intent.job_id)
    );
    intent
}

async fn job(f: &Fixture, intent: &Intent) -> Job {
    f.backend.jobs.job(intent.job_id).await.unwrap().unwrap()
}

/// Claims one intent and returns its job as decided.
async fn decided(f: &Fixture, intent: &Intent) -> Job {
    claim_as_redelivered(f, std::slice::from_ref(intent)).await;
    job(f, intent).await
}

fn assert_limited(job: &Job) {
    assert_eq!(job.status, JobStatus::Rejected, "{job:?}");
    let reason = job.reason.as_deref().unwrap_or_default();
    assert!(reason.contains("limit"), "{reason}");
}

/// One buyer races ten one-seat claims from four loops against a limit of two: exactly two
/// are held, the other eight are rejected for the limit, and another buyer is not affected.
/// A cancel and a lapsed hold make room again; a sale keeps counting.
pub async fn a_buyer_racing_claims_gets_no_more_seats_than_the_limit(f: Fixture) {
    let event = limited_event(&f).await;
    let mut intents = Vec::new();
    for _ in 0..10 {
        intents.push(admitted(&f, &event, "hoarder", 1).await);
    }
    seeded_rng().shuffle(&mut intents);
    let shares: Vec<Vec<Intent>> = (0..LOOPS)
        .map(|l| intents.iter().skip(l).step_by(LOOPS).cloned().collect())
        .collect();
    join_all(shares.iter().map(|share| claim_as_redelivered(&f, share))).await;
    let mut held = Vec::new();
    for intent in &intents {
        let job = job(&f, intent).await;
        if job.status == JobStatus::Held {
            held.push(job);
        } else {
            assert_limited(&job);
        }
    }
    let ids: Vec<_> = held.iter().map(|job| job.job_id).collect();
    assert_eq!(held.len(), 2, "held of 10 racing claims: {ids:?}");
    let too_many = admitted(&f, &event, "newcomer", 3).await;
    assert_limited(&decided(&f, &too_many).await);
    let other = admitted(&f, &event, "newcomer", 2).await;
    assert_eq!(decided(&f, &other).await.status, JobStatus::Held);

    let cancelled = f
        .backend
        .inventory
        .settle(held[0].job_id, JobAction::Cancel, &Tender::Nothing);
    assert!(matches!(cancelled.await.unwrap(), Settled::Done(_)));
    let after_cancel = admitted(&f, &event, "hoarder", 1).await;
    assert_eq!(decided(&f, &after_cancel).await.status, JobStatus::Held);
    assert_limited(&decided(&f, &admitted(&f, &event, "hoarder", 1).await).await);

    // Both of the buyer's holds lapse; the sweeper has not run yet.
    f.clock
        .advance(SignedDuration::from_secs(i64::from(HOLD_SECONDS) + 1));
    let after_lapse = admitted(&f, &event, "hoarder", 2).await;
    assert_eq!(decided(&f, &after_lapse).await.status, JobStatus::Held);
    f.backend
        .inventory
        .release_lapsed_holds(f.backend.clock.now(), 100)
        .await
        .unwrap();
    let sold = f
        .backend
        .inventory
        .settle(after_lapse.job_id, JobAction::Confirm, &Tender::Nothing);
    assert!(matches!(sold.await.unwrap(), Settled::Done(job) if job.status == JobStatus::Sold));
    assert_limited(&decided(&f, &admitted(&f, &event, "hoarder", 1).await).await);
}
