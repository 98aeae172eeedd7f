//! Queue positions in the port contract: a PENDING job's line is the undecided intents of its
//! event admitted before it, and the event's decisions are counted as they are made. Exact on
//! the stores that order their jobs; on DynamoDB the decisions reach the count within a second
//! or two, which the check waits for.

use std::time::Duration;

use crate::app;
use crate::domain::{EventId, EventSpec, Intent, Job, Line, NewEvent, SeatRequest, SectionSpec};

use super::eventually;
use crate::contract::Fixture;

/// Creates `event_id` with one section `Q` of ten seats.
async fn event(f: &Fixture, event_id: &str) -> EventId {
    let event = NewEvent::parse(EventSpec {
        event_id: event_id.into(),
        name: "line".into(),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "Q".into(),
            rows: 1,
            seats_per_row: 10,
            price: None,
        }]),
        ..EventSpec::default()
    })
    .expect("a valid event");
    f.backend.catalog.create_event(&event).await.unwrap();
    event.event_id
}

/// Admits a one-seat section request of `buyer` for `event`.
async fn admitted(f: &Fixture, event: &EventId, buyer: &str) -> Intent {
    let request = SeatRequest::in_section("Q", 1).unwrap();
    crate::contract::admitted(f, event, buyer, request).await
}

async fn line(f: &Fixture, intent: &Intent) -> Line {
    let job: Job = f.backend.jobs.job(intent.job_id).await.unwrap().unwrap();
    f.backend.jobs.line(&job).await.unwrap()
}

/// The undecided intents admitted before a job are its line, other events' never count, and
/// each decision shortens the line and adds to the event's count.
pub async fn a_pending_jobs_line_is_the_undecided_intents_admitted_before_it(f: Fixture) {
    let (sale, other) = (event(&f, "line").await, event(&f, "other").await);
    let first = admitted(&f, &sale, "b1").await;
    admitted(&f, &other, "b2").await;
    let second = admitted(&f, &sale, "b3").await;
    let third = admitted(&f, &sale, "b4").await;
    assert_eq!(line(&f, &first).await.ahead, 0);
    assert_eq!(line(&f, &second).await.ahead, 1);
    assert_eq!(
        line(&f, &third).await,
        Line {
            ahead: 2,
            decided: 0,
            opens_at: None,
        }
    );

    let now = f.backend.clock.now();
    app::claim(&f.backend, std::slice::from_ref(&first), now)
        .await
        .unwrap();
    let moved = eventually(
        Duration::from_secs(10),
        "the decision to reach the line",
        || async { Some(line(&f, &third).await).filter(|l| l.decided == 1) },
    )
    .await;
    assert_eq!(
        moved,
        Line {
            ahead: 1,
            decided: 1,
            opens_at: None,
        }
    );
}
