//! The waitlist under racing writers: a crowd claimed from several worker loops at once forms a
//! line, then cancels from several tasks at once hand their seats to it, each cancel serving
//! the line while the others do. On DynamoDB this runs against DynamoDB Local with nothing
//! serialising its requests.

use std::collections::HashMap;

use crate::domain::{
    BuyerId, EventSpec, IdempotencyKey, Intent, Job, JobAction, JobId, JobStatus, NewEvent, SeatId,
    SeatRequest, SeatState, SectionSpec, Tender,
};
use crate::ports::{Admission, ClaimOutcome};
use futures_util::future::join_all;
use jiff::SignedDuration;

use super::races::{claim_from_loops, seats_of};
use crate::contract::Fixture;

const SEATS: u32 = 20;
const BUYERS: usize = 60;
/// Tasks cancelling at once.
const CANCELLERS: usize = 4;

/// Buyer `n`'s intent: one seat, or two for every fifth buyer (a head that may have to wait).
/// Each is admitted a millisecond after the one before, so admission order is `n` on every
/// backend.
async fn admitted_in_order(f: &Fixture, event: &NewEvent) -> Vec<Intent> {
    let mut intents = Vec::with_capacity(BUYERS);
    for n in 0..BUYERS {
        f.clock.advance(SignedDuration::from_millis(1));
        let buyer = BuyerId::parse(&format!("liner-{n}")).unwrap();
        let key = IdempotencyKey::parse(&format!("line-{n}")).unwrap();
        let quantity = if n % 5 == 4 { 2 } else { 1 };
        let intent = Intent {
            access: None,
            job_id: f.backend.admissions.new_job_id(&buyer, &key),
            event_id: event.event_id.clone(),
            buyer_id: buyer,
            request: SeatRequest::in_section("L", quantity).unwrap(),
            accepted_at: f.backend.clock.now(),
            opens_at: None,
        };
        let admitted = f.backend.admissions.admit(&key, &intent).await.unwrap();
        assert!(matches!(admitted, Admission::Accepted(_)), "{admitted:?}");
        intents.push(intent);
    }
    intents
}

async fn job(f: &Fixture, job_id: JobId) -> Job {
    f.backend.jobs.job(job_id).await.unwrap().unwrap()
}

/// Sixty buyers for twenty seats form a line; every hold is then cancelled from four tasks at
/// once. The line is served first fit in admission order (a job served from it that wanted as
/// many seats as one still waiting was admitted before it), no seat is left free that a waiter
/// fits, no seat is held twice, the seat map names each seat's holder, and
/// closing the waitlist ends every wait.
pub async fn racing_cancels_serve_a_line_in_order(f: Fixture) {
    let event = NewEvent::parse(EventSpec {
        event_id: "race-line".into(),
        name: "race".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "L".into(),
            rows: 1,
            seats_per_row: SEATS,
            price: None,
        }]),
        waitlist: Some(true),
        ..EventSpec::default()
    })
    .expect("a valid event");
    f.backend.catalog.create_event(&event).await.unwrap();
    let intents = admitted_in_order(&f, &event).await;
    let order: HashMap<JobId, usize> = intents.iter().map(|i| i.job_id).zip(0..).collect();
    let outcomes = claim_from_loops(&f, intents.clone()).await;
    let held: Vec<JobId> = outcomes
        .iter()
        .filter(|(_, o)| matches!(o, ClaimOutcome::Held { .. }))
        .map(|(job, _)| *job)
        .collect();
    assert!(
        outcomes
            .values()
            .all(|o| matches!(o, ClaimOutcome::Held { .. } | ClaimOutcome::Waitlisted)),
        "a section request on an event with a waitlist is held or waits: {outcomes:?}"
    );

    let shares: Vec<Vec<JobId>> = (0..CANCELLERS)
        .map(|c| held.iter().skip(c).step_by(CANCELLERS).copied().collect())
        .collect();
    let f = &f;
    join_all(shares.iter().map(|share| async move {
        for job_id in share {
            let settled = f
                .backend
                .inventory
                .settle(*job_id, JobAction::Cancel, &Tender::Nothing);
            settled.await.unwrap();
        }
    }))
    .await;

    let mut served = Vec::new();
    let mut waiting = Vec::new();
    let mut holders: HashMap<SeatId, JobId> = HashMap::new();
    for intent in &intents {
        let job = job(f, intent.job_id).await;
        match job.status {
            JobStatus::Held => served.push(order[&job.job_id]),
            JobStatus::Waitlisted => waiting.push(order[&job.job_id]),
            JobStatus::Cancelled => continue,
            other => panic!("job {} is {other:?}", job.job_id),
        }
        for seat in &job.seat_ids {
            let twice = holders.insert(seat.clone(), job.job_id);
            assert!(twice.is_none(), "{seat} is held by two jobs");
        }
    }
    // First fit in line order: a job served from the line that wanted at least as many seats
    // as one still waiting was admitted before it (else the waiting one would have fit first).
    let wanted = |n: &usize| intents[*n].request.quantity();
    for w in &waiting {
        let passed: Vec<&usize> = served
            .iter()
            .filter(|s| *s > w && wanted(s) >= wanted(w))
            .collect();
        assert!(
            passed.is_empty(),
            "jobs {passed:?} passed job {w} in line (served {served:?}, waiting {waiting:?})"
        );
    }
    let free = SEATS as usize - holders.len();
    let fewest = waiting.iter().map(wanted).min().unwrap_or(usize::MAX);
    assert!(
        !waiting.is_empty() && free < fewest,
        "{free} seats left free while a waiter of {fewest} waits"
    );
    for seat in seats_of(f, &event.event_id).await {
        if let SeatState::Held { job_id, .. } = seat.state {
            assert_eq!(
                holders.get(&seat.seat_id),
                Some(&job_id),
                "{}",
                seat.seat_id
            );
        }
    }
    let closed = f.backend.inventory.close_waitlist(&event.event_id).await;
    assert_eq!(closed.unwrap(), Some(waiting.len()));
}
