//! Races of the port contract that only an atomic engine passes: claims from several worker
//! loops at once, on the same seats. On DynamoDB they run against DynamoDB Local, AWS's own
//! engine, with nothing serialising its requests; a check-then-write store fails them.

use std::collections::HashMap;

use crate::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, JobId, NewEvent, Seat, SeatId,
    SeatRequest, SeatState, SectionSpec,
};
use crate::ports::{Admission, ClaimOutcome};
use futures_util::future::join_all;

use crate::contract::{Fixture, claim_as_redelivered};
use crate::testkit::seeded_rng;

/// How many worker loops claim at once, each a batch of ten at a time, as a worker task does.
const LOOPS: usize = 4;
const BATCH: usize = 10;

/// Creates an event of one section of `rows` rows of `seats` seats and admits `requests`, one
/// buyer each.
pub(crate) async fn admitted_crowd(
    f: &Fixture,
    section: &str,
    (rows, seats): (u32, u32),
    requests: Vec<SeatRequest>,
) -> Vec<Intent> {
    let event = NewEvent::parse(EventSpec {
        event_id: format!("race-{section}"),
        name: "race".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: section.into(),
            rows,
            seats_per_row: seats,
            price: None,
        }]),
        ..EventSpec::default()
    })
    .expect("a valid event");
    f.backend.catalog.create_event(&event).await.unwrap();
    let intents: Vec<Intent> = requests
        .into_iter()
        .enumerate()
        .map(|(n, request)| crowd_intent(f, &event.event_id, n, request))
        .collect();
    for (c, chunk) in intents.chunks(20).enumerate() {
        let admitted = join_all(chunk.iter().enumerate().map(|(i, intent)| {
            let key = race_key(c * 20 + i);
            async move { f.backend.admissions.admit(&key, intent).await.unwrap() }
        }))
        .await;
        assert!(admitted.iter().all(|a| matches!(a, Admission::Accepted(_))));
    }
    intents
}

fn racer(n: usize) -> BuyerId {
    BuyerId::parse(&format!("racer-{n}")).unwrap()
}

fn race_key(n: usize) -> IdempotencyKey {
    IdempotencyKey::parse(&format!("race-{n}")).unwrap()
}

fn crowd_intent(f: &Fixture, event: &EventId, n: usize, request: SeatRequest) -> Intent {
    Intent {
        access: None,
        job_id: f.backend.admissions.new_job_id(&racer(n), &race_key(n)),
        event_id: event.clone(),
        buyer_id: racer(n),
        request,
        accepted_at: f.backend.clock.now(),
        opens_at: None,
    }
}

/// Deals the intents, shuffled by the printed test seed, to [`LOOPS`] loops that each claim
/// their share in batches of [`BATCH`], all loops at once; returns each job's outcome.
pub(crate) async fn claim_from_loops(
    f: &Fixture,
    mut intents: Vec<Intent>,
) -> HashMap<JobId, ClaimOutcome> {
    seeded_rng().shuffle(&mut intents);
    let shares: Vec<Vec<Intent>> = (0..LOOPS)
        .map(|l| intents.iter().skip(l).step_by(LOOPS).cloned().collect())
        .collect();
    let loops = shares.iter().map(|share| async move {
        let mut outcomes = Vec::new();
        for batch in share.chunks(BATCH) {
            let decided = claim_as_redelivered(f, batch).await;
            outcomes.extend(batch.iter().map(|i| i.job_id).zip(decided));
        }
        outcomes
    });
    join_all(loops).await.into_iter().flatten().collect()
}

/// The event's seats as the inventory has them.
pub(crate) async fn seats_of(f: &Fixture, event: &EventId) -> Vec<Seat> {
    f.backend.catalog.seat_map(event).await.unwrap().unwrap()
}

/// Ten buyers for each of twenty seats, claimed from four loops at once: each seat has exactly
/// one winner, the seat map shows that winner, and every other buyer is rejected.
pub async fn concurrent_claims_from_several_loops_hold_each_seat_once(f: Fixture) {
    let requests: Vec<SeatRequest> = (0..200)
        .map(|n| SeatRequest::exact(&[format!("R-1-{}", n % 20 + 1)]).unwrap())
        .collect();
    let intents = admitted_crowd(&f, "R", (1, 20), requests).await;
    let outcomes = claim_from_loops(&f, intents.clone()).await;
    let mut winners: HashMap<SeatId, Vec<JobId>> = HashMap::new();
    for (job_id, outcome) in &outcomes {
        match outcome {
            ClaimOutcome::Held { seat_ids, .. } => {
                for seat in seat_ids {
                    winners.entry(seat.clone()).or_default().push(*job_id);
                }
            }
            ClaimOutcome::Rejected { .. } => {}
            other => panic!("a fresh intent was {other:?}"),
        }
    }
    assert_eq!(winners.len(), 20, "every seat has a winner: {winners:?}");
    assert!(
        winners.values().all(|jobs| jobs.len() == 1),
        "a seat held twice: {winners:?}"
    );
    let seats = seats_of(&f, &intents[0].event_id).await;
    for seat in seats {
        let SeatState::Held { job_id, .. } = seat.state else {
            panic!("{} is not held", seat.seat_id);
        };
        assert_eq!(
            winners[&seat.seat_id],
            [job_id],
            "the inventory names the winner"
        );
    }
}

/// 160 buyers each asking for any one seat of a 100-seat section, from four loops at once: all
/// 100 seats are held and exactly the 60 buyers too many are rejected. A section request is
/// rejected only when the section cannot satisfy it, never because a race was lost.
pub async fn racing_section_claims_fill_the_section_before_rejecting(f: Fixture) {
    let requests = (0..160)
        .map(|_| SeatRequest::in_section("S", 1).unwrap())
        .collect();
    let intents = admitted_crowd(&f, "S", (1, 100), requests).await;
    let outcomes = claim_from_loops(&f, intents.clone()).await;
    let held = outcomes
        .values()
        .filter(|o| matches!(o, ClaimOutcome::Held { .. }))
        .count();
    let rejected = outcomes
        .values()
        .filter(|o| matches!(o, ClaimOutcome::Rejected { .. }))
        .count();
    assert_eq!((held, rejected), (100, 60), "held and rejected of 160");
    let seats = seats_of(&f, &intents[0].event_id).await;
    let free: Vec<&SeatId> = seats
        .iter()
        .filter(|s| s.state == SeatState::Available)
        .map(|s| &s.seat_id)
        .collect();
    assert!(
        free.is_empty(),
        "seats left free while buyers were rejected: {free:?}"
    );
}
