//! Waiting seats in the per-buyer limit, in the port contract: a WAITLISTED job counts the
//! seats it waits for from the step that puts it in line, so a buyer cannot queue past the
//! limit; a hold from the line replaces the wait it counted (never counted twice); a wait given
//! up, or ended by the waitlist's closing, gives its seats back.

use crate::domain::{
    EventId, EventSpec, Intent, Job, JobAction, JobStatus, NewEvent, REASON_WAITLIST_CLOSED,
    SeatRequest, SectionSpec, Tender,
};
use crate::ports::{EventCreation, Settled};

use crate::contract::Fixture;
use crate::contract::{admitted, claim};

const LIMIT: u32 = 4;

/// Creates event `wlimit`: section W of three seats, a waitlist, [`LIMIT`] seats per buyer.
async fn limited_line(f: &Fixture) -> EventId {
    let event = NewEvent::parse(EventSpec {
        event_id: "wlimit".into(),
        name: "waiting seats count".into(),
        hold_seconds: Some(60),
        max_seats_per_buyer: Some(LIMIT),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "W".into(),
            rows: 1,
            seats_per_row: 3,
            price: None,
        }]),
        waitlist: Some(true),
        ..EventSpec::default()
    })
    .expect("a valid event");
    match f.backend.catalog.create_event(&event).await.unwrap() {
        EventCreation::Created(3) => event.event_id,
        other => panic!("the event was not created: {other:?}"),
    }
}

/// Admits and claims `buyer`'s request for `quantity` seats of W.
async fn claimed(f: &Fixture, event: &EventId, buyer: &str, quantity: i64) -> (Intent, Job) {
    let request = SeatRequest::in_section("W", quantity).unwrap();
    let intent = admitted(f, event, buyer, request).await;
    claim(f, &intent).await;
    let job = job(f, &intent).await;
    (intent, job)
}

async fn job(f: &Fixture, intent: &Intent) -> Job {
    f.backend.jobs.job(intent.job_id).await.unwrap().unwrap()
}

async fn cancel(f: &Fixture, intent: &Intent) {
    let settled = f
        .backend
        .inventory
        .settle(intent.job_id, JobAction::Cancel, &Tender::Nothing)
        .await
        .unwrap();
    assert!(matches!(settled, Settled::Done(_)), "{settled:?}");
}

fn is_limited(job: &Job) -> bool {
    job.status == JobStatus::Rejected && job.reason.as_deref().is_some_and(|r| r.contains("limit"))
}

/// A buyer waiting for four seats is refused a fifth; served two of them from the line, it
/// still counts four (not six); its other wait given up, it may wait for two again; the
/// waitlist closed, its wait gives its seats back and it holds a seat as a claim would.
pub async fn waiting_seats_count_against_the_buyers_limit(f: Fixture) {
    let event = limited_line(&f).await;
    let (first, full) = claimed(&f, &event, "b1", 3).await;
    assert_eq!(full.status, JobStatus::Held, "{full:?}");
    let (served, waits) = claimed(&f, &event, "waiter", 2).await;
    assert_eq!(waits.status, JobStatus::Waitlisted);
    let (behind, waits) = claimed(&f, &event, "waiter", 2).await;
    assert_eq!(waits.status, JobStatus::Waitlisted);
    let (_, over) = claimed(&f, &event, "waiter", 1).await;
    assert!(
        is_limited(&over),
        "four seats waited for, a fifth: {over:?}"
    );

    // Three seats come free: the head's own wait does not count against it.
    cancel(&f, &first).await;
    let head = job(&f, &served).await;
    assert_eq!(
        (head.status, head.seat_ids.len()),
        (JobStatus::Held, 2),
        "{head:?}"
    );
    assert_eq!(job(&f, &behind).await.status, JobStatus::Waitlisted);
    // One seat is free and nobody ahead fits it, but the waiter still counts 2 held + 2 waiting.
    let (_, still) = claimed(&f, &event, "waiter", 1).await;
    assert!(
        is_limited(&still),
        "the hold from the line counts once: {still:?}"
    );

    // The wait given up gives its two seats back: 2 held + 2 waiting again fit the limit.
    cancel(&f, &behind).await;
    let (again, waits) = claimed(&f, &event, "waiter", 2).await;
    assert_eq!(waits.status, JobStatus::Waitlisted, "{waits:?}");

    // Closing the waitlist ends the wait and gives its seats back: 2 held + 1 fits.
    let closed = f.backend.inventory.close_waitlist(&event).await.unwrap();
    assert_eq!(closed, Some(1));
    let ended = job(&f, &again).await;
    assert_eq!(ended.reason.as_deref(), Some(REASON_WAITLIST_CLOSED));
    let (_, held) = claimed(&f, &event, "waiter", 1).await;
    assert_eq!(held.status, JobStatus::Held, "{held:?}");
}
