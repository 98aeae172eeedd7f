//! The waitlist in the port contract: a section request that finds too few seats waits in its
//! section's line; seats that come free (a cancel, the sweeper) go to it first fit in line
//! order; exact requests for a free seat beside a line are refused; a place may be given up;
//! closing the waitlist ends every place. Backends that do
//! not build waitlists refuse the event instead.

use crate::domain::{
    EventId, EventSpec, Intent, Job, JobAction, JobStatus, NewEvent, REASON_WAITLIST_CLOSED,
    Reason, ReasonCode, SeatRequest, SeatState, SectionSpec, Tender,
};
use crate::ports::{ClaimOutcome, EventCreation, Settled};
use jiff::SignedDuration;

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

/// The line forms and is served first fit in line order, by a cancel and by the sweeper: seats
/// go to the earliest waiter they fit, a waiter they do not fit keeps its place, exact requests
/// for a free seat beside the line are refused, and a place may be given up; the line ends when
/// the waitlist closes.
pub async fn a_sections_line_is_served_first_fit_in_order(f: Fixture) {
    let event = with_waitlist(&f).await;
    let (first, held) = claimed(&f, &event, "b1", section(2)).await;
    assert!(matches!(held, ClaimOutcome::Held { .. }), "{held:?}");
    let (pair, waits) = claimed(&f, &event, "b2", section(2)).await;
    assert_eq!(waits, ClaimOutcome::Waitlisted, "one seat is left for two");
    let (single, fits) = claimed(&f, &event, "b3", section(1)).await;
    assert!(
        matches!(fits, ClaimOutcome::Held { .. }),
        "the free seat fits nobody ahead: the newcomer it fits takes it ({fits:?})"
    );
    let (late_single, behind) = claimed(&f, &event, "b4", section(1)).await;
    assert_eq!(behind, ClaimOutcome::Waitlisted);
    assert_eq!(
        (position(&f, &pair).await, position(&f, &late_single).await),
        (Some(1), Some(2))
    );

    // One seat comes free: it goes to the earliest waiter it fits; the head keeps its place.
    assert!(matches!(
        settle(&f, &single, JobAction::Cancel).await,
        Settled::Done(_)
    ));
    assert_eq!(job(&f, &late_single).await.status, JobStatus::Held);
    assert_eq!(position(&f, &pair).await, Some(1));
    let history: Vec<JobStatus> = f
        .backend
        .jobs
        .history(late_single.job_id)
        .await
        .unwrap()
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(history, [JobStatus::Waitlisted, JobStatus::Held]);

    // A free seat that fits nobody in line stays free, and nobody passes the line to it.
    let (late_pair, _) = claimed(&f, &event, "b5", section(2)).await;
    assert!(matches!(
        settle(&f, &late_single, JobAction::Cancel).await,
        Settled::Done(_)
    ));
    let seats = f.backend.catalog.seat_map(&event).await.unwrap().unwrap();
    let free = seats
        .iter()
        .find(|seat| seat.state == SeatState::Available)
        .expect("one seat is free");
    let (_, around) = claimed(
        &f,
        &event,
        "b9",
        SeatRequest::exact(&[free.seat_id.to_string()]).unwrap(),
    )
    .await;
    assert_eq!(
        around,
        ClaimOutcome::Rejected {
            reason: Reason::reserved_for_waitlist()
        }
    );

    // The sweeper's releases go to the line too, in order: the head's two, not the next's.
    f.clock.advance(SignedDuration::from_secs(HOLD_SECONDS + 1));
    let now = f.backend.clock.now();
    let released = f.backend.inventory.release_lapsed_holds(now, 100).await;
    assert_eq!(released.unwrap(), 1, "the first buyer's hold lapsed");
    assert_eq!(job(&f, &first).await.status, JobStatus::Expired);
    assert_eq!(job(&f, &pair).await.status, JobStatus::Held);
    assert_eq!(position(&f, &late_pair).await, Some(1));
    // A place may be given up.
    assert!(
        matches!(settle(&f, &late_pair, JobAction::Cancel).await, Settled::Done(job) if job.status == JobStatus::Cancelled)
    );

    // Closing ends every place; the event then rejects as one without a waitlist.
    let (last, waits) = claimed(&f, &event, "b7", section(2)).await;
    assert_eq!(waits, ClaimOutcome::Waitlisted);
    assert_eq!(
        f.backend.inventory.close_waitlist(&event).await.unwrap(),
        Some(1)
    );
    let closed = job(&f, &last).await;
    assert_eq!(
        (closed.status, closed.reason.as_deref(), closed.reason_code),
        (
            JobStatus::Rejected,
            Some(REASON_WAITLIST_CLOSED),
            Some(ReasonCode::WaitlistClosed)
        )
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
