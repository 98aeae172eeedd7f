//! Seats together in the port contract: a `together` section request holds the best block of
//! adjacent seats in one row (front and centre), never one that strands a single free seat when
//! another does not, or none (REJECTED, `no N adjacent seats in section S`); a section request
//! without it takes the best seats one by one. Raced from several loops, every hold is a block
//! and no seat is held twice.

use std::collections::{BTreeMap, HashMap};

use crate::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, NewEvent, SeatRequest, SeatState,
    SectionSpec, no_block_reason,
};
use crate::ports::{Admission, ClaimOutcome};

use super::races::{admitted_crowd, claim_from_loops, seats_of};
use crate::contract::{Fixture, claim};
use crate::testkit::seeded_rng;

/// Admits `request` for a buyer of its own.
async fn admit(f: &Fixture, event: &EventId, n: usize, request: SeatRequest) -> Intent {
    let buyer = BuyerId::parse(&format!("t{n}")).unwrap();
    let key = IdempotencyKey::parse(&format!("together-{n}")).unwrap();
    let intent = Intent {
        access: None,
        job_id: f.backend.admissions.new_job_id(&buyer, &key),
        event_id: event.clone(),
        buyer_id: buyer,
        request,
        accepted_at: f.backend.clock.now(),
        opens_at: None,
    };
    match f.backend.admissions.admit(&key, &intent).await.unwrap() {
        Admission::Accepted(_) => intent,
        other => panic!("not admitted: {other:?}"),
    }
}

fn held(outcome: &ClaimOutcome) -> Vec<String> {
    match outcome {
        ClaimOutcome::Held { seat_ids, .. } => {
            let mut ids: Vec<String> = seat_ids.iter().map(|s| s.as_str().to_owned()).collect();
            ids.sort_by_key(|id| seat_number(id));
            ids
        }
        other => panic!("not held: {other:?}"),
    }
}

/// `(row, number)` of a generated seat id `S-r-n`.
fn seat_number(id: &str) -> (u32, u32) {
    let mut parts = id.rsplitn(3, '-');
    let number = parts.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    let row = parts.next().and_then(|r| r.parse().ok()).unwrap_or(0);
    (row, number)
}

/// On three rows of six: the first block is row 1's middle; the next passes over the blocks that
/// would strand a seat; one seat alone is the best one left; a block longer than any row is
/// rejected.
pub async fn a_block_is_the_best_adjacent_seats_and_strands_none_when_it_can(f: Fixture) {
    let event = NewEvent::parse(EventSpec {
        event_id: "tg".into(),
        name: "together".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "S".into(),
            rows: 3,
            seats_per_row: 6,
            price: None,
        }]),
        ..EventSpec::default()
    })
    .unwrap();
    f.backend.catalog.create_event(&event).await.unwrap();
    let together = |q| SeatRequest::together_in("S", q).unwrap();
    let pair = admit(&f, &event.event_id, 0, together(2)).await;
    assert_eq!(held(&claim(&f, &pair).await), ["S-1-3", "S-1-4"]);
    // Row 1 has 1-2 and 5-6 left: no three there. In row 2, 2-4 and 3-5 are closest to the
    // middle but each strands a seat at the row's end; 1-3 and 4-6 strand none, 1-3 is lower.
    let three = admit(&f, &event.event_id, 1, together(3)).await;
    assert_eq!(held(&claim(&f, &three).await), ["S-2-1", "S-2-2", "S-2-3"]);
    // One seat, not together: the best one left, row 1, as close to the middle as is free.
    let single = admit(
        &f,
        &event.event_id,
        2,
        SeatRequest::in_section("S", 1).unwrap(),
    )
    .await;
    assert_eq!(held(&claim(&f, &single).await), ["S-1-2"]);
    // Row 3 is whole: six together there; then no row has six adjacent seats left.
    let six = admit(&f, &event.event_id, 3, together(6)).await;
    assert_eq!(held(&claim(&f, &six).await).len(), 6);
    let another = admit(&f, &event.event_id, 4, together(6)).await;
    assert_eq!(
        claim(&f, &another).await,
        ClaimOutcome::Rejected {
            reason: no_block_reason(6, "S")
        }
    );
    // Seven together is longer than any row: refused before it becomes a job.
    let buyer = BuyerId::parse("t5").unwrap();
    let key = IdempotencyKey::parse("together-5").unwrap();
    let seven = Intent {
        access: None,
        job_id: f.backend.admissions.new_job_id(&buyer, &key),
        event_id: event.event_id.clone(),
        buyer_id: buyer,
        request: together(7),
        accepted_at: f.backend.clock.now(),
        opens_at: None,
    };
    let refused = f.backend.admissions.admit(&key, &seven).await.unwrap();
    assert!(matches!(refused, Admission::Unservable(_)), "{refused:?}");
}

/// 300 buyers, each asking for 1 to 4 seats together in one 20x20 section, from several loops at
/// once: every hold is a block in one row, no seat is held twice, the first buyer got row 1's
/// middle, and whatever is left free at the end is too short for every request rejected.
pub async fn racing_blocks_fill_a_section_with_adjacent_holds(f: Fixture) {
    let mut rng = seeded_rng();
    let requests: Vec<SeatRequest> = (0..300)
        .map(|_| SeatRequest::together_in("T", rng.i64(1..=4)).unwrap())
        .collect();
    let intents = admitted_crowd(&f, "T", (20, 20), requests).await;
    let first = claim_from_loops(&f, intents[..1].to_vec()).await;
    let first_seats = held(&first[&intents[0].job_id]);
    assert!(
        first_seats.iter().all(|id| seat_number(id).0 == 1)
            && first_seats
                .iter()
                .any(|id| matches!(seat_number(id).1, 10 | 11)),
        "the first buyer gets row 1's middle: {first_seats:?}"
    );
    let mut outcomes = claim_from_loops(&f, intents[1..].to_vec()).await;
    outcomes.extend(first);
    let wanted: HashMap<_, _> = intents
        .iter()
        .map(|i| (i.job_id, i.request.quantity()))
        .collect();
    let mut holders: BTreeMap<String, usize> = BTreeMap::new();
    let mut rejected_quantities = Vec::new();
    for (job_id, outcome) in &outcomes {
        if let ClaimOutcome::Rejected { reason } = outcome {
            assert_eq!(reason, &no_block_reason(wanted[job_id], "T"));
            rejected_quantities.push(wanted[job_id]);
            continue;
        }
        let seats = held(outcome);
        let places: Vec<(u32, u32)> = seats.iter().map(|id| seat_number(id)).collect();
        assert!(
            places
                .windows(2)
                .all(|p| p[0].0 == p[1].0 && p[1].1 == p[0].1 + 1),
            "not a block in one row: {seats:?}"
        );
        for seat in seats {
            *holders.entry(seat).or_default() += 1;
        }
    }
    assert!(holders.values().all(|n| *n == 1), "a seat held twice");
    let free = free_runs(&f, &intents[0].event_id).await;
    let longest = free.iter().copied().max().unwrap_or(0);
    let smallest_rejected = rejected_quantities.iter().copied().min();
    eprintln!(
        "together race: {} held jobs, {} seats held, {} free seats in {} runs (longest {longest}), \
         {} rejected (smallest {smallest_rejected:?})",
        outcomes.len() - rejected_quantities.len(),
        holders.len(),
        free.iter().sum::<usize>(),
        free.len(),
        rejected_quantities.len(),
    );
    if let Some(smallest) = smallest_rejected {
        assert!(
            longest < smallest,
            "a run of {longest} free seats was left while a request for {smallest} was rejected"
        );
    }
}

/// The lengths of the runs of adjacent free seats left in each row.
async fn free_runs(f: &Fixture, event: &EventId) -> Vec<usize> {
    let mut rows: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for seat in seats_of(f, event).await {
        if seat.state == SeatState::Available {
            let (row, number) = seat_number(seat.seat_id.as_str());
            rows.entry(row).or_default().push(number);
        }
    }
    let mut runs = Vec::new();
    for numbers in rows.values_mut() {
        numbers.sort_unstable();
        let mut run = 1;
        for pair in numbers.windows(2) {
            if pair[1] == pair[0] + 1 {
                run += 1;
            } else {
                runs.push(run);
                run = 1;
            }
        }
        if !numbers.is_empty() {
            runs.push(run);
        }
    }
    runs
}
