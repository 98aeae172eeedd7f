//! The waitlist in the port contract: a section request that finds too few seats waits in its
//! section's line; while the line exists nobody passes it (section requests join its end, exact
//! requests for its seats are refused); seats that come free (a cancel, the sweeper) go to it
//! in order; a place may be given up; closing the waitlist ends every place. Backends that do
//! not build waitlists refuse the event instead.

use jiff::SignedDuration;
use seatclaim_core::domain::{
    EventId, EventSpec, Intent, Job, JobAction, JobStatus, NewEvent, REASON_RESERVED,
    REASON_WAITLIST_CLOSED, SeatRequest, SeatState, SectionSpec, Tender,
};
use seatclaim_core::ports::{ClaimOutcome, EventCreation, Settled};

use crate::contract::{Fixture, admitted, claim};

const HOLD_SECONDS: i64 = 60;

/// Admits `request` for `buyer` and claims it; returns the intent and the claim's outcome.
async fn claimed(
    f: &Fixture,
    event: &EventId,
    buyer: &str,
    request: SeatRequest,
) -> (Intent, ClaimOutcome) {
    let intent = admitted(f, event, buyer, request).await;
    let outcome = claim(f, &intent).await;
    (intent, outcome)
}

fn section(quantity: i64) -> SeatRequest {
    SeatRequest::in_section("W", quantity).unwrap()
}

async fn job(f: &Fixture, intent: &Intent) -> Job {
    f.backend.jobs.job(intent.job_id).await.unwrap().unwrap()
}

async fn position(f: &Fixture, intent: &Intent) -> Option<u64> {
    f.backend
        .jobs
        .waitlist_position(&job(f, intent).await)
        .await
        .unwrap()
}

async fn settle(f: &Fixture, intent: &Intent, action: JobAction) -> Settled {
    f.backend
        .inventory
        .settle(intent.job_id, action, &Tender::Nothing)
        .await
        .unwrap()
}

/// Creates event `wl`: section W of three seats, a waitlist; `None` where the backend refuses.
async fn with_waitlist(f: &Fixture) -> EventId {
    let event = NewEvent::parse(EventSpec {
        event_id: "wl".into(),
        name: "waitlist".into(),
        hold_seconds: Some(60),
        max_seats_per_buyer: Some(4),
        sections: Some(vec![SectionSpec {
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

/// The line forms, holds its seats against everyone behind it, is served in order by a cancel
/// and by the sweeper, lets a place be given up, and ends when the waitlist closes.
pub async fn a_sections_line_is_served_in_order_and_nobody_passes_it(f: Fixture) {
    let event = with_waitlist(&f).await;
    let (first, held) = claimed(&f, &event, "b1", section(2)).await;
    assert!(matches!(held, ClaimOutcome::Held { .. }), "{held:?}");
    let (pair, waits) = claimed(&f, &event, "b2", section(2)).await;
    assert_eq!(waits, ClaimOutcome::Waitlisted, "one seat is left for two");
    let (single, behind) = claimed(&f, &event, "b3", section(1)).await;
    assert_eq!(
        behind,
        ClaimOutcome::Waitlisted,
        "the free seat is the line's"
    );
    assert_eq!(
        (position(&f, &pair).await, position(&f, &single).await),
        (Some(1), Some(2))
    );
    // The one free seat (which one depends on the backend's order of preference).
    let seats = f.backend.catalog.seat_map(&event).await.unwrap().unwrap();
    let free = seats
        .iter()
        .find(|seat| seat.state == SeatState::Available)
        .expect("one seat is free");
    let (_, around) = claimed(
        &f,
        &event,
        "b4",
        SeatRequest::exact(&[free.seat_id.to_string()]).unwrap(),
    )
    .await;
    assert_eq!(
        around,
        ClaimOutcome::Rejected {
            reason: REASON_RESERVED.to_owned()
        }
    );

    // A cancel frees two seats: with the third, the line is served in order.
    assert!(matches!(
        settle(&f, &first, JobAction::Cancel).await,
        Settled::Done(_)
    ));
    for served in [&pair, &single] {
        let job = job(&f, served).await;
        assert_eq!(job.status, JobStatus::Held, "{job:?}");
        assert_eq!(position(&f, served).await, None);
    }
    let history: Vec<JobStatus> = f
        .backend
        .jobs
        .history(pair.job_id)
        .await
        .unwrap()
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(history, [JobStatus::Waitlisted, JobStatus::Held]);

    // The sweeper's releases go to the line too; a place may be given up.
    let (late, _) = claimed(&f, &event, "b5", section(2)).await;
    let (quitter, _) = claimed(&f, &event, "b6", section(1)).await;
    assert_eq!(position(&f, &quitter).await, Some(2));
    assert!(
        matches!(settle(&f, &quitter, JobAction::Cancel).await, Settled::Done(job) if job.status == JobStatus::Cancelled)
    );
    f.clock.advance(SignedDuration::from_secs(HOLD_SECONDS + 1));
    let now = f.backend.clock.now();
    assert_eq!(
        f.backend
            .inventory
            .release_lapsed_holds(now, 100)
            .await
            .unwrap(),
        2
    );
    assert_eq!(job(&f, &late).await.status, JobStatus::Held);

    // Closing ends every place; the event then rejects as one without a waitlist.
    let (last, waits) = claimed(&f, &event, "b7", section(2)).await;
    assert_eq!(waits, ClaimOutcome::Waitlisted);
    assert_eq!(
        f.backend.inventory.close_waitlist(&event).await.unwrap(),
        Some(1)
    );
    let closed = job(&f, &last).await;
    assert_eq!(
        (closed.status, closed.reason.as_deref()),
        (JobStatus::Rejected, Some(REASON_WAITLIST_CLOSED))
    );
    let (_, after) = claimed(&f, &event, "b8", section(2)).await;
    assert!(matches!(after, ClaimOutcome::Rejected { .. }), "{after:?}");
    assert_eq!(
        f.backend
            .inventory
            .close_waitlist(&EventId::parse("nope").unwrap())
            .await
            .unwrap(),
        None
    );
}
