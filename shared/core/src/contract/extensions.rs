//! Hold extension in the port contract: a live hold's deadline moves later by the event's step,
//! from the deadline, as many times as the event allows and never more, even when extensions
//! race; the seats stay the job's until the new deadline; a lapsed hold is never revived.

use crate::domain::{
    EventId, EventSpec, Intent, Job, JobAction, JobConflict, JobStatus, NewEvent, SeatRequest,
    SeatState, SectionSpec, Tender,
};
use crate::ports::{ClaimOutcome, Settled};
use crate::{Backend, app};
use futures_util::future::join_all;
use jiff::{SignedDuration, Timestamp};

use crate::contract::{Fixture, admitted, claim};

const HOLD_SECONDS: u32 = 60;
const STEP_SECONDS: u32 = 30;
const MAX_EXTENSIONS: u32 = 2;

/// Creates `event_id` with seats X-1-1 .. X-1-3 and the given extension step (0: none).
async fn event(f: &Fixture, event_id: &str, step: u32) -> EventId {
    let event = NewEvent::parse(EventSpec {
        event_id: event_id.into(),
        name: "extensions".into(),
        hold_seconds: Some(HOLD_SECONDS),
        max_seats_per_buyer: Some(4),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "X".into(),
            rows: 1,
            seats_per_row: 3,
            price: None,
        }]),
        hold_extension_seconds: Some(step),
        max_hold_extensions: Some(MAX_EXTENSIONS),
        ..EventSpec::default()
    })
    .expect("a valid event");
    f.backend.catalog.create_event(&event).await.unwrap();
    event.event_id
}

/// Admits and claims `buyer`'s intent for `seats` of `event`.
async fn claimed(
    f: &Fixture,
    event: &EventId,
    buyer: &str,
    seats: &[&str],
) -> (Intent, ClaimOutcome) {
    let seats: Vec<String> = seats.iter().map(|s| (*s).to_owned()).collect();
    let intent = admitted(f, event, buyer, SeatRequest::exact(&seats).unwrap()).await;
    let outcome = claim(f, &intent).await;
    (intent, outcome)
}

async fn extend(backend: &Backend, intent: &Intent) -> Settled {
    app::settle(backend, intent.job_id, JobAction::Extend, &Tender::Nothing)
        .await
        .unwrap()
}

fn extended(settled: &Settled) -> &Job {
    match settled {
        Settled::Done(job) => job,
        other => panic!("expected an extension, got {other:?}"),
    }
}

/// What the sweeper releases now.
async fn sweep(f: &Fixture) -> usize {
    let now = f.backend.clock.now();
    f.backend
        .inventory
        .release_lapsed_holds(now, 100)
        .await
        .unwrap()
}

fn seconds(n: u32) -> SignedDuration {
    SignedDuration::from_secs(i64::from(n))
}

/// Whether each of `job`'s seats is held by it until `until` in the seat map.
async fn seats_held_until(f: &Fixture, event: &EventId, job: &Job, until: Timestamp) -> bool {
    let map = f.backend.catalog.seat_map(event).await.unwrap().unwrap();
    let seats: Vec<_> = map
        .iter()
        .filter(|seat| job.seat_ids.contains(&seat.seat_id))
        .collect();
    seats.len() == job.seat_ids.len()
        && seats.iter().all(|seat| {
            matches!(seat.state, SeatState::Held { job_id, until: at }
                if job_id == job.job_id && at == until)
        })
}

/// Extensions move the deadline from the deadline, keep the seats, stop at the most allowed
/// (racing ones included), and never revive a lapsed hold; an event without them refuses.
pub async fn a_hold_is_extended_from_its_deadline_no_more_than_allowed(f: Fixture) {
    let event = event(&f, "extendable", STEP_SECONDS).await;
    let (held, outcome) = claimed(&f, &event, "b1", &["X-1-1", "X-1-2"]).await;
    let ClaimOutcome::Held { until: first, .. } = outcome else {
        panic!("held, got {outcome:?}");
    };
    f.clock.advance(seconds(HOLD_SECONDS - 10));
    let once = extend(&f.backend, &held).await;
    let job = extended(&once);
    assert_eq!(job.status, JobStatus::Held);
    assert_eq!(job.hold_expires_at, Some(first + seconds(STEP_SECONDS)));
    assert_eq!(job.hold_extensions, 1);
    assert!(seats_held_until(&f, &event, job, first + seconds(STEP_SECONDS)).await);

    // Past the first deadline the seats are still the job's: nobody takes them, no sweep frees them.
    f.clock.advance(seconds(15));
    let (_, taker) = claimed(&f, &event, "b2", &["X-1-1"]).await;
    assert!(matches!(taker, ClaimOutcome::Rejected { .. }), "{taker:?}");
    assert_eq!(sweep(&f).await, 0);

    // Two extensions at once: one gets the last one, the other is told they are used up.
    let racing = join_all([extend(&f.backend, &held), extend(&f.backend, &held)]).await;
    let done: Vec<&Job> = racing
        .iter()
        .filter(|s| matches!(s, Settled::Done(_)))
        .map(extended)
        .collect();
    assert_eq!(done.len(), 1, "{racing:?}");
    assert_eq!(
        done[0].hold_expires_at,
        Some(first + seconds(2 * STEP_SECONDS))
    );
    assert!(racing.iter().any(|s| matches!(
        s,
        Settled::Conflict(JobConflict::ExtensionsUsedUp {
            max: MAX_EXTENSIONS
        })
    )));
    let history = f.backend.jobs.history(held.job_id).await.unwrap();
    let extensions: Vec<Option<u32>> = history
        .iter()
        .filter(|e| e.detail_type() == "Reservation HoldExtended")
        .map(|e| e.hold_extensions)
        .collect();
    assert_eq!(extensions, [Some(1), Some(2)]);

    // The longest hold is the hold and every extension; then it lapses for good.
    f.clock.advance(seconds(2 * STEP_SECONDS));
    assert!(matches!(
        extend(&f.backend, &held).await,
        Settled::Conflict(JobConflict::HoldLapsed)
    ));
    assert_eq!(sweep(&f).await, 1);
    assert!(matches!(
        extend(&f.backend, &held).await,
        Settled::Conflict(JobConflict::WrongStatus {
            status: JobStatus::Expired,
            ..
        })
    ));

    let plain = self::event(&f, "plain", 0).await;
    let (fixed, _) = claimed(&f, &plain, "b3", &["X-1-1"]).await;
    assert!(matches!(
        extend(&f.backend, &fixed).await,
        Settled::Conflict(JobConflict::NotExtendable)
    ));
}
