//! The contract of the claim: first claim wins, all or none, a batch race has one winner, a
//! redelivery never holds twice, and holds end by confirm or expiry.

use super::*;
use crate::domain::{Reason, ReasonCode};

/// The first claim on a seat holds it; the second is rejected for good.
pub async fn a_seat_is_held_by_the_first_claim_only(f: Fixture) {
    let event = with_event(&f).await;
    let winner = admitted(&f, &event, "b1", exact(&["A-1-1"])).await;
    let loser = admitted(&f, &event, "b2", exact(&["A-1-1"])).await;
    assert!(
        matches!(claim(&f, &winner).await, ClaimOutcome::Held { seat_ids, .. } if seat_ids == [SeatId::parse("A-1-1").unwrap()])
    );
    assert_eq!(
        claim(&f, &loser).await,
        ClaimOutcome::Rejected {
            reason: Reason::new(ReasonCode::SeatUnavailable, "seat no longer available")
        }
    );
    assert_eq!(status(&f, &winner).await, JobStatus::Held);
    let job = f.backend.jobs.job(loser.job_id).await.unwrap().unwrap();
    assert_eq!(
        (job.status, job.reason.as_deref(), job.reason_code),
        (
            JobStatus::Rejected,
            Some("seat no longer available"),
            Some(ReasonCode::SeatUnavailable)
        )
    );
}

/// Intents racing for one seat in the same batch (a queue batch has no order): exactly one wins.
pub async fn one_batch_racing_for_a_seat_has_exactly_one_winner(f: Fixture) {
    let event = with_event(&f).await;
    let mut racers = Vec::new();
    for buyer in ["b1", "b2", "b3", "b4", "b5"] {
        racers.push(admitted(&f, &event, buyer, exact(&["A-1-4"])).await);
    }
    let outcomes = app::claim(&f.backend, &racers, f.backend.clock.now())
        .await
        .unwrap();
    let held = outcomes
        .iter()
        .filter(|o| matches!(o, ClaimOutcome::Held { .. }))
        .count();
    let rejected = outcomes
        .iter()
        .filter(|o| matches!(o, ClaimOutcome::Rejected { .. }))
        .count();
    assert_eq!((held, rejected), (1, 4), "{outcomes:?}");
}

/// A multi-seat claim holds all its seats or none of them.
pub async fn a_multi_seat_claim_is_all_or_none(f: Fixture) {
    let event = with_event(&f).await;
    let first = admitted(&f, &event, "b1", exact(&["A-1-3"])).await;
    claim(&f, &first).await;
    let both = admitted(&f, &event, "b2", exact(&["A-1-2", "A-1-3"])).await;
    assert!(matches!(
        claim(&f, &both).await,
        ClaimOutcome::Rejected { .. }
    ));
    let map = f.backend.catalog.seat_map(&event).await.unwrap().unwrap();
    let a12 = map.iter().find(|s| s.seat_id.as_str() == "A-1-2").unwrap();
    assert!(
        a12.state.is_claimable(f.backend.clock.now()),
        "A-1-2 was left untouched"
    );
    let section = admitted(&f, &event, "b3", SeatRequest::in_section("B", 2).unwrap()).await;
    assert!(
        matches!(claim(&f, &section).await, ClaimOutcome::Held { seat_ids, .. } if seat_ids.len() == 2)
    );
    let more = admitted(&f, &event, "b4", SeatRequest::in_section("B", 1).unwrap()).await;
    assert!(matches!(
        claim(&f, &more).await,
        ClaimOutcome::Rejected { .. }
    ));
}

/// Claiming a decided job again (a redelivery) changes nothing and records nothing.
pub async fn a_redelivered_intent_never_holds_twice(f: Fixture) {
    let event = with_event(&f).await;
    let intent = admitted(&f, &event, "b1", SeatRequest::in_section("A", 1).unwrap()).await;
    let first = claim(&f, &intent).await;
    let ClaimOutcome::Held { seat_ids, .. } = first else {
        panic!("expected a hold, got {first:?}")
    };
    let events_before = f.backend.outbox.unpublished(100).await.unwrap().len();
    assert_eq!(
        claim(&f, &intent).await,
        ClaimOutcome::AlreadyDecided(JobStatus::Held)
    );
    assert_eq!(
        f.backend.outbox.unpublished(100).await.unwrap().len(),
        events_before
    );
    let job = f.backend.jobs.job(intent.job_id).await.unwrap().unwrap();
    assert_eq!(job.seat_ids, seat_ids, "still the first hold's seats");
    let held = f
        .backend
        .catalog
        .seat_map(&event)
        .await
        .unwrap()
        .unwrap()
        .iter()
        .filter(|s| !s.state.is_claimable(f.backend.clock.now()))
        .count();
    assert_eq!(held, 1);
}

/// Confirm sells a live hold; a lapsed hold cannot be confirmed, is taken over by a new claim,
/// and its release by the sweeper leaves the new holder's seat alone.
pub async fn holds_end_by_confirm_or_by_expiry(f: Fixture) {
    let event = with_event(&f).await;
    let sold = admitted(&f, &event, "b1", exact(&["A-1-1"])).await;
    claim(&f, &sold).await;
    let settled = f
        .backend
        .inventory
        .settle(sold.job_id, JobAction::Confirm, &Tender::Nothing)
        .await
        .unwrap();
    assert!(matches!(settled, Settled::Done(job) if job.status == JobStatus::Sold));

    let lapsing = admitted(&f, &event, "b2", exact(&["A-1-2", "A-1-3"])).await;
    claim(&f, &lapsing).await;
    f.clock
        .advance(SignedDuration::from_secs(i64::from(HOLD_SECONDS) + 1));
    let late = f
        .backend
        .inventory
        .settle(lapsing.job_id, JobAction::Confirm, &Tender::Nothing)
        .await
        .unwrap();
    assert!(matches!(late, Settled::Conflict(_)), "{late:?}");
    let taker = admitted(&f, &event, "b3", exact(&["A-1-2"])).await;
    assert!(matches!(claim(&f, &taker).await, ClaimOutcome::Held { .. }));

    let released = f
        .backend
        .inventory
        .release_lapsed_holds(f.backend.clock.now(), 100)
        .await
        .unwrap();
    assert_eq!(released, 1);
    assert_eq!(status(&f, &lapsing).await, JobStatus::Expired);
    assert_eq!(
        f.backend
            .inventory
            .release_lapsed_holds(f.backend.clock.now(), 100)
            .await
            .unwrap(),
        0
    );
    let now = f.backend.clock.now();
    let map = f.backend.catalog.seat_map(&event).await.unwrap().unwrap();
    let state = |id: &str| map.iter().find(|s| s.seat_id.as_str() == id).unwrap().state;
    assert!(!state("A-1-2").is_claimable(now), "the taker keeps A-1-2");
    assert!(state("A-1-3").is_claimable(now), "A-1-3 was released");
    assert!(!state("A-1-1").is_claimable(now), "A-1-1 stays sold");
    let cancel = f
        .backend
        .inventory
        .settle(sold.job_id, JobAction::Cancel, &Tender::Nothing)
        .await
        .unwrap();
    assert!(matches!(cancel, Settled::Conflict(_)));
}
