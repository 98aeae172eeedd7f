//! The port contract, written once: every check takes a fresh [`Fixture`] and must pass for every
//! backend. A new adapter is done when each check passes for it.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use jiff::SignedDuration;
use seatclaim_core::domain::{
    BuyerId, Closure, EventId, EventSpec, IdempotencyKey, Intent, JobAction, JobId, JobStatus,
    NewEvent, SeatId, SeatRequest, SectionSpec,
};
use seatclaim_core::ports::{
    Admission, ClaimOutcome, Delivery, EventCreation, Message, OutboxEntry, Settled,
};
use seatclaim_core::{Backend, app};

pub use crate::extensions::a_hold_is_extended_from_its_deadline_no_more_than_allowed;
pub use crate::openings::{
    a_pre_queued_intent_ages_from_the_opening, a_sale_opens_in_the_order_its_seed_draws,
    arriving_first_buys_no_advantage_at_the_opening,
};
pub use crate::queue_positions::a_pending_jobs_line_is_the_undecided_intents_admitted_before_it;
pub use crate::races::{
    concurrent_claims_from_several_loops_hold_each_seat_once,
    racing_section_claims_fill_the_section_before_rejecting,
};
pub use crate::seat_limits::a_buyer_racing_claims_gets_no_more_seats_than_the_limit;
pub use crate::together::{
    a_block_is_the_best_adjacent_seats_and_strands_none_when_it_can,
    racing_blocks_fill_a_section_with_adjacent_holds,
};
pub use crate::waitlist_races::racing_cancels_serve_a_line_in_order;
pub use crate::waitlists::a_sections_line_is_served_in_order_and_nobody_passes_it;
use crate::{JumpClock, eventually};

/// A backend on fresh storage, with the clock it reads "now" from.
pub struct Fixture {
    /// The ports under test.
    pub backend: Backend,
    /// The backend's clock, for jumping past deadlines.
    pub clock: Arc<JumpClock>,
    /// The queue's visibility timeout, as the fixture configured it.
    pub visibility_timeout: Duration,
    /// The queue's redrive limit, as the fixture configured it.
    pub max_receive_count: u32,
    /// Local storage to remove when the check ends, for backends that have some.
    pub storage: Option<tempfile::TempDir>,
}

const HOLD_SECONDS: u32 = 60;

/// Creates event `e1` with seats A-1-1 .. A-1-4 and B-1-1 .. B-1-2.
async fn with_event(f: &Fixture) -> EventId {
    let event = NewEvent::parse(EventSpec {
        event_id: "e1".into(),
        name: "contract".into(),
        hold_seconds: Some(HOLD_SECONDS),
        sections: Some(vec![
            SectionSpec {
                section: "A".into(),
                rows: 1,
                seats_per_row: 4,
                price: None,
            },
            SectionSpec {
                section: "B".into(),
                rows: 1,
                seats_per_row: 2,
                price: None,
            },
        ]),
        ..EventSpec::default()
    })
    .expect("a valid event");
    assert_eq!(
        f.backend.catalog.create_event(&event).await.unwrap(),
        EventCreation::Created(6)
    );
    assert_eq!(
        f.backend.catalog.create_event(&event).await.unwrap(),
        EventCreation::AlreadyExists
    );
    event.event_id
}

/// An intent of `buyer` with a fresh key of its own.
fn intent(f: &Fixture, event: &EventId, buyer: &str, request: SeatRequest) -> Intent {
    keyed(f, event, buyer, &fresh_key(), request)
}

/// An intent of `buyer` sent with `key`: its job id is the one the store gives that key.
fn keyed(
    f: &Fixture,
    event: &EventId,
    buyer: &str,
    key: &IdempotencyKey,
    request: SeatRequest,
) -> Intent {
    let buyer_id = BuyerId::parse(buyer).unwrap();
    Intent {
        job_id: f.backend.admissions.new_job_id(&buyer_id, key),
        event_id: event.clone(),
        buyer_id,
        request,
        accepted_at: f.backend.clock.now(),
        opens_at: None,
    }
}

fn fresh_key() -> IdempotencyKey {
    IdempotencyKey::parse(&format!("key-{}", uuid::Uuid::new_v4())).unwrap()
}

fn exact(ids: &[&str]) -> SeatRequest {
    SeatRequest::exact(&ids.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>()).unwrap()
}

/// Admits an intent (creating its PENDING job) and returns it.
pub(crate) async fn admitted(
    f: &Fixture,
    event: &EventId,
    buyer: &str,
    request: SeatRequest,
) -> Intent {
    let key = fresh_key();
    let intent = keyed(f, event, buyer, &key, request);
    assert_eq!(
        f.backend.admissions.admit(&key, &intent).await.unwrap(),
        Admission::Accepted(intent.job_id)
    );
    intent
}

/// Claims `intent` alone, as the worker would, and returns its outcome.
pub(crate) async fn claim(f: &Fixture, intent: &Intent) -> ClaimOutcome {
    let mut outcomes = app::claim(
        &f.backend,
        std::slice::from_ref(intent),
        f.backend.clock.now(),
    )
    .await
    .unwrap();
    assert_eq!(outcomes.len(), 1);
    outcomes.remove(0)
}

async fn status(f: &Fixture, intent: &Intent) -> JobStatus {
    f.backend
        .jobs
        .job(intent.job_id)
        .await
        .unwrap()
        .expect("the job exists")
        .status
}

/// Admission is idempotent per buyer and key, and refuses what the event does not have.
pub async fn admission_is_idempotent_and_checks_the_event(f: Fixture) {
    let event = with_event(&f).await;
    let key = IdempotencyKey::parse("k").unwrap();
    let first = keyed(&f, &event, "b1", &key, exact(&["A-1-1"]));
    let admissions = &f.backend.admissions;
    assert_eq!(
        admissions.admit(&key, &first).await.unwrap(),
        Admission::Accepted(first.job_id)
    );
    // A retry is a new request to the API, which asks the store for its job id again.
    let retry = keyed(&f, &event, "b1", &key, exact(&["A-1-1"]));
    assert_eq!(
        admissions.admit(&key, &retry).await.unwrap(),
        Admission::Duplicate(first.job_id)
    );
    let other = keyed(&f, &event, "b1", &key, exact(&["A-1-2"]));
    assert_eq!(
        admissions.admit(&key, &other).await.unwrap(),
        Admission::KeyReused
    );
    let other_buyer = keyed(&f, &event, "b2", &key, exact(&["A-1-1"]));
    assert_eq!(
        admissions.admit(&key, &other_buyer).await.unwrap(),
        Admission::Accepted(other_buyer.job_id)
    );

    let fresh = IdempotencyKey::parse("fresh").unwrap();
    let unknown_event = keyed(
        &f,
        &EventId::parse("nope").unwrap(),
        "b3",
        &fresh,
        exact(&["A-1-1"]),
    );
    assert_eq!(
        admissions.admit(&fresh, &unknown_event).await.unwrap(),
        Admission::UnknownEvent
    );
    let unknown_seat = keyed(&f, &event, "b3", &fresh, exact(&["A-1-1", "Z-1"]));
    assert_eq!(
        admissions.admit(&fresh, &unknown_seat).await.unwrap(),
        Admission::UnknownSeats(vec![SeatId::parse("Z-1").unwrap()])
    );
    let section = SeatRequest::in_section("Z", 1).unwrap();
    let unknown_section = keyed(&f, &event, "b3", &fresh, section);
    assert!(matches!(
        admissions.admit(&fresh, &unknown_section).await.unwrap(),
        Admission::UnknownSection(_)
    ));
    assert_eq!(status(&f, &first).await, JobStatus::Pending);
}

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
            reason: "seat no longer available".into()
        }
    );
    assert_eq!(status(&f, &winner).await, JobStatus::Held);
    let job = f.backend.jobs.job(loser.job_id).await.unwrap().unwrap();
    assert_eq!(
        (job.status, job.reason.as_deref()),
        (JobStatus::Rejected, Some("seat no longer available"))
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
        .settle(sold.job_id, JobAction::Confirm, None)
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
        .settle(lapsing.job_id, JobAction::Confirm, None)
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
        .settle(sold.job_id, JobAction::Cancel, None)
        .await
        .unwrap();
    assert!(matches!(cancel, Settled::Conflict(_)));
}

/// Each decided transition is in the job's history, and in the outbox until it is marked
/// published, except a rejection the worker published as it was decided (DynamoDB's).
pub async fn every_transition_is_in_the_outbox_until_published(f: Fixture) {
    let event = with_event(&f).await;
    let held = admitted(&f, &event, "b1", exact(&["A-1-1"])).await;
    let rejected = admitted(&f, &event, "b2", exact(&["A-1-1"])).await;
    let failed = admitted(&f, &event, "b3", exact(&["A-1-4"])).await;
    // One at a time: within one batch the order of decisions is not defined.
    claim(&f, &held).await;
    claim(&f, &rejected).await;
    assert!(
        f.backend
            .jobs
            .close(
                failed.job_id,
                &Closure::Failed {
                    reason: "broken".into()
                },
                f.backend.clock.now()
            )
            .await
            .unwrap()
    );
    assert!(
        !f.backend
            .jobs
            .close(
                held.job_id,
                &Closure::Failed {
                    reason: "too late".into()
                },
                f.backend.clock.now()
            )
            .await
            .unwrap(),
        "a decided job is not failed"
    );
    f.backend
        .inventory
        .settle(held.job_id, JobAction::Cancel, None)
        .await
        .unwrap();

    let rejection = f.backend.jobs.history(rejected.job_id).await.unwrap();
    assert!(
        matches!(&rejection[..], [event] if event.status == JobStatus::Rejected),
        "{rejection:?}"
    );
    let entries = f.backend.outbox.unpublished(100).await.unwrap();
    let seen: Vec<(String, JobStatus)> = entries
        .iter()
        .map(|e| (e.event.job_id.to_string(), e.event.status))
        .filter(|(job, _)| *job != rejected.job_id.to_string())
        .collect();
    assert_eq!(
        seen,
        [
            (held.job_id.to_string(), JobStatus::Held),
            (failed.job_id.to_string(), JobStatus::Failed),
            (held.job_id.to_string(), JobStatus::Cancelled),
        ]
    );
    let waiting = entries.len();
    assert!(
        waiting == 3 || entries[1].event.job_id == rejected.job_id,
        "a waiting rejection waits in its turn"
    );
    // A page published but for one entry the publisher refused: that entry, and only it,
    // waits; the entries after it are not handed out again.
    let outbox = &f.backend.outbox;
    let marked = [entries[0].clone(), entries[2].clone()];
    outbox.mark_published(&marked).await.unwrap();
    let left = outbox.unpublished(100).await.unwrap();
    let events =
        |entries: &[OutboxEntry]| -> Vec<_> { entries.iter().map(|e| e.event.clone()).collect() };
    assert_eq!(left.len(), waiting - 2, "{left:?}");
    assert_eq!(
        left[0].event, entries[1].event,
        "the refused entry waits, first"
    );
    assert!(
        !events(&left).contains(&entries[2].event),
        "published past it: not again"
    );
    outbox.mark_published(&left[..1]).await.unwrap();
    let after = outbox.unpublished(100).await.unwrap();
    assert_eq!(events(&after), events(&left[1..]));
}

/// `admit_and_decide`: a store may decide the claim in the admission's own write (the job
/// decided, its event in the outbox, nothing queued) or admit and queue as `admit` does; a retry
/// is the same job; and an admission never decides ahead of an intent already queued.
pub async fn an_admission_may_decide_but_never_ahead_of_the_queue(f: Fixture) {
    let event = with_event(&f).await;
    let admissions = &f.backend.admissions;
    let key = fresh_key();
    let first = keyed(&f, &event, "b1", &key, exact(&["A-1-1"]));
    match admissions.admit_and_decide(&key, &first).await.unwrap() {
        Admission::Decided(job) => {
            assert_eq!((job.job_id, job.status), (first.job_id, JobStatus::Held));
            assert_eq!(status(&f, &first).await, JobStatus::Held);
            let depth = f.backend.queue.depth().await.unwrap();
            assert_eq!(
                depth.ready + depth.in_flight,
                0,
                "a decided admission queues nothing"
            );
            let events = f.backend.outbox.unpublished(100).await.unwrap();
            assert!(
                events
                    .iter()
                    .any(|e| e.event.job_id == first.job_id && e.event.status == JobStatus::Held),
                "the decision's event is in the outbox: {events:?}"
            );
        }
        other => assert_eq!(other, Admission::Accepted(first.job_id)),
    }
    assert_eq!(
        admissions.admit_and_decide(&key, &first).await.unwrap(),
        Admission::Duplicate(first.job_id)
    );
    let queued = admitted(&f, &event, "b2", exact(&["A-1-2"])).await;
    let next_key = fresh_key();
    let next = keyed(&f, &event, "b3", &next_key, exact(&["A-1-2"]));
    assert_eq!(
        admissions.admit_and_decide(&next_key, &next).await.unwrap(),
        Admission::Accepted(next.job_id),
        "an intent queued first is decided first"
    );
    assert_eq!(status(&f, &queued).await, JobStatus::Pending);
}

/// A received message is hidden for the visibility timeout, then delivered again with a higher
/// receive count; a deleted message never comes back.
pub async fn unacknowledged_messages_come_back_after_the_visibility_timeout(f: Fixture) {
    let event = with_event(&f).await;
    let kept = intent(&f, &event, "b1", exact(&["A-1-1"]));
    let acked = intent(&f, &event, "b2", exact(&["A-1-2"]));
    f.backend
        .queue
        .send(&[kept.clone(), acked.clone()])
        .await
        .unwrap();
    let first = receive_all(&f, 2).await;
    assert_eq!(first.len(), 2);
    assert!(first.iter().all(|d| d.receive_count == 1));
    let acked_delivery = first
        .iter()
        .find(|d| d.job_id == Some(acked.job_id))
        .expect("the job id travels with the message");
    f.backend
        .queue
        .delete(std::slice::from_ref(&acked_delivery.receipt))
        .await
        .unwrap();
    assert!(
        f.backend
            .queue
            .receive(10, Duration::ZERO)
            .await
            .unwrap()
            .is_empty(),
        "hidden while in flight"
    );

    // Both were received together: when the kept one is back, so would the deleted one be.
    let again = after_the_visibility_timeout(&f, 1).await;
    assert_eq!(again.len(), 1, "only the unacknowledged message returns");
    assert_eq!(again[0].job_id, Some(kept.job_id));
    assert_eq!(again[0].receive_count, 2);
    assert_eq!(again[0].message, Message::Intent(kept));
    assert_nothing_more(&f, "the deleted message stays deleted").await;
}

/// The worker loop's turn: the acknowledgements passed with a receive are made (the message never
/// comes back), and the receive still returns what is waiting.
pub async fn acknowledging_with_the_next_receive_deletes_the_message(f: Fixture) {
    let event = with_event(&f).await;
    let first = intent(&f, &event, "b1", exact(&["A-1-1"]));
    let second = intent(&f, &event, "b2", exact(&["A-1-2"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&first))
        .await
        .unwrap();
    let got = receive_all(&f, 1).await;
    assert_eq!(got.len(), 1);
    f.backend
        .queue
        .send(std::slice::from_ref(&second))
        .await
        .unwrap();
    // Passed with the first receive only; later ones acknowledge nothing.
    let done = RefCell::new(vec![got[0].receipt.clone()]);
    let next = eventually(QUEUE_WITHIN, "the receive that acknowledges", || async {
        let done = done.take();
        let next = f
            .backend
            .queue
            .acknowledge_and_receive(&done, 10, Duration::from_millis(500))
            .await
            .unwrap();
        (!next.is_empty()).then_some(next)
    })
    .await;
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].job_id, Some(second.job_id));
    f.backend
        .queue
        .delete(&[next[0].receipt.clone()])
        .await
        .unwrap();

    assert_stays_away(&f, &event, "both were acknowledged, neither comes back").await;
}

/// `retry_after` brings a message back after the given delay instead of the visibility timeout.
pub async fn a_retried_message_comes_back_after_its_delay(f: Fixture) {
    let event = with_event(&f).await;
    f.backend
        .queue
        .send(&[intent(&f, &event, "b1", exact(&["A-1-1"]))])
        .await
        .unwrap();
    let first = receive_all(&f, 1).await;
    f.backend
        .queue
        .retry_after(&first[0].receipt, Duration::ZERO)
        .await
        .unwrap();
    let again = receive_all(&f, 1).await;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].receive_count, 2);
}

/// A heartbeat keeps a slow batch's messages hidden past the visibility timeout.
pub async fn extending_visibility_keeps_a_slow_batch_hidden(f: Fixture) {
    let event = with_event(&f).await;
    let slow = intent(&f, &event, "b1", exact(&["A-1-1"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&slow))
        .await
        .unwrap();
    let got = receive_all(&f, 1).await;
    // Long enough that the control below, sent, received and let go after it, is back first
    // even on a loaded machine: SQS times this in real time.
    let hidden_for = f.visibility_timeout * 10;
    f.backend
        .queue
        .extend_visibility(&[got[0].receipt.clone()], hidden_for)
        .await
        .unwrap();
    // The control, received after the slow one and not extended, comes back first.
    let control = received_control(&f, &event).await;
    let back = after_the_visibility_timeout(&f, 1).await;
    assert_eq!(
        job_ids(&back),
        [Some(control)],
        "the extended one is still hidden"
    );
    f.backend
        .queue
        .delete(&[back[0].receipt.clone()])
        .await
        .unwrap();
    assert_nothing_more(&f, "the extended one is still hidden").await;

    f.clock.advance(signed(hidden_for));
    let again = receive_all(&f, 1).await;
    assert_eq!(
        job_ids(&again),
        [Some(slow.job_id)],
        "visible again once the extension ran out"
    );
}

/// A message received more than the redrive limit goes to the dead-letter queue, and an explicitly
/// dead-lettered one is never delivered again.
pub async fn messages_received_too_often_are_dead_lettered(f: Fixture) {
    let event = with_event(&f).await;
    f.backend
        .queue
        .send(&[intent(&f, &event, "b1", exact(&["A-1-1"]))])
        .await
        .unwrap();
    for attempt in 1..=f.max_receive_count {
        let got = receive_all(&f, 1).await;
        assert_eq!(got.len(), 1, "receive {attempt}");
        assert_eq!(got[0].receive_count, attempt);
        f.backend
            .queue
            .retry_after(&got[0].receipt, Duration::ZERO)
            .await
            .unwrap();
    }
    assert!(
        f.backend
            .queue
            .receive(10, Duration::from_millis(1_500))
            .await
            .unwrap()
            .is_empty(),
        "redriven to the DLQ"
    );
    let dead = eventually(QUEUE_WITHIN, "the redriven message in the DLQ", || async {
        let depth = f.backend.queue.depth().await.unwrap();
        (depth.dead > 0).then_some(depth.dead)
    })
    .await;
    assert_eq!(dead, 1);

    f.backend
        .queue
        .send(&[intent(&f, &event, "b2", exact(&["A-1-2"]))])
        .await
        .unwrap();
    let poison = receive_all(&f, 1).await;
    f.backend
        .queue
        .dead_letter(&poison[0], "cannot be processed")
        .await
        .unwrap();
    assert_stays_away(&f, &event, "the dead letter is not delivered").await;
}

/// Dead letters can be listed with their reason, replayed to the main queue, or purged; a failed
/// job reopens for a replay, and its history shows every transition.
pub async fn dead_letters_are_listed_replayed_and_purged(f: Fixture) {
    let event = with_event(&f).await;
    let (replayed, purged, untouched) = three_dead_letters(&f, &event).await;

    let letters = f
        .backend
        .queue
        .dead_letters(10, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(letters.len(), 3);
    let (replay, others): (Vec<_>, Vec<_>) = letters
        .into_iter()
        .partition(|l| l.job_id == Some(replayed.job_id));
    let (purge, left): (Vec<_>, Vec<_>) = others
        .into_iter()
        .partition(|l| l.job_id == Some(purged.job_id));
    assert_eq!((replay.len(), purge.len(), left.len()), (1, 1, 1));
    assert_eq!(replay[0].reason.as_deref(), Some("broken once"));
    assert_eq!(replay[0].receive_count, 1);
    assert!(
        f.backend
            .jobs
            .reopen(replayed.job_id, f.backend.clock.now())
            .await
            .unwrap()
    );
    assert!(
        !f.backend
            .jobs
            .reopen(replayed.job_id, f.backend.clock.now())
            .await
            .unwrap(),
        "already pending"
    );
    f.backend.queue.redrive(&replay).await.unwrap();
    f.backend.queue.purge(&purge).await.unwrap();
    let back = receive_all(&f, 1).await;
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].job_id, Some(replayed.job_id));
    let Message::Intent(decoded) = back[0].message.clone() else {
        panic!("the replayed message decodes");
    };
    assert!(matches!(
        claim(&f, &decoded).await,
        ClaimOutcome::Held { .. }
    ));
    assert_only_untouched_left(&f, untouched.job_id).await;
    assert_replayed_history_and_jobs(&f, &event, &replayed, &purged).await;
}

/// Dead-letters three messages: two of jobs that failed (`replayed` with reason "broken once"
/// after a first failure), and a third, `untouched`, with no job, that the check leaves alone.
async fn three_dead_letters(f: &Fixture, event: &EventId) -> (Intent, Intent, Intent) {
    let replayed = admitted(f, event, "b1", exact(&["A-1-1"])).await;
    let purged = admitted(f, event, "b2", exact(&["A-1-2"])).await;
    let untouched = intent(f, event, "b3", exact(&["A-1-3"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&untouched))
        .await
        .unwrap();
    let mut deliveries = receive_all(f, 3).await;
    let order = [replayed.job_id, purged.job_id, untouched.job_id].map(Some);
    deliveries.sort_by_key(|d| order.iter().position(|id| *id == d.job_id));
    assert_eq!(job_ids(&deliveries), order);
    for (delivery, reason) in deliveries
        .iter()
        .zip(["broken once", "broken twice", "left"])
    {
        let job_id = delivery.job_id.expect("a job id");
        if job_id != untouched.job_id {
            fail_job(f, job_id, reason).await;
        }
        f.backend.queue.dead_letter(delivery, reason).await.unwrap();
    }
    let job = f.backend.jobs.job(replayed.job_id).await.unwrap().unwrap();
    assert_eq!(
        (job.first_error.as_deref(), job.last_error.as_deref()),
        (Some("first trouble"), Some("broken once"))
    );
    let depth = f.backend.queue.depth().await.unwrap();
    assert_eq!((depth.dead, depth.ready), (3, 0), "{depth:?}");
    (replayed, purged, untouched)
}

/// The listing hid all three letters for its hold (on SQS). Once the untouched letter is listed
/// again the hold is over for the other two as well: they must be gone from the DLQ.
async fn assert_only_untouched_left(f: &Fixture, untouched: JobId) {
    let listed = eventually(
        QUEUE_WITHIN,
        "the untouched dead letter, listed again once the hold is over",
        || async {
            let listed = f
                .backend
                .queue
                .dead_letters(10, Duration::ZERO)
                .await
                .unwrap();
            (!listed.is_empty()).then_some(listed)
        },
    )
    .await;
    let listed: Vec<_> = listed.iter().map(|l| l.job_id).collect();
    assert_eq!(
        listed,
        [Some(untouched)],
        "the replayed and the purged letter are gone from the DLQ"
    );
}

/// Records two failures of the job (the first one kept as its first error) and fails it.
async fn fail_job(f: &Fixture, job_id: JobId, reason: &str) {
    f.backend
        .jobs
        .note_failure(job_id, "first trouble")
        .await
        .unwrap();
    f.backend.jobs.note_failure(job_id, reason).await.unwrap();
    assert!(
        f.backend
            .jobs
            .close(
                job_id,
                &Closure::Failed {
                    reason: reason.into()
                },
                f.backend.clock.now()
            )
            .await
            .unwrap()
    );
}

/// The replayed job's history is FAILED, PENDING, HELD, and the event lists both jobs as they ended.
async fn assert_replayed_history_and_jobs(
    f: &Fixture,
    event: &EventId,
    replayed: &Intent,
    purged: &Intent,
) {
    let history: Vec<JobStatus> = f
        .backend
        .jobs
        .history(replayed.job_id)
        .await
        .unwrap()
        .iter()
        .map(|e| e.status)
        .collect();
    assert_eq!(
        history,
        [JobStatus::Failed, JobStatus::Pending, JobStatus::Held]
    );
    let mut of_event: Vec<_> = f
        .backend
        .jobs
        .of_event(event)
        .await
        .unwrap()
        .into_iter()
        .map(|j| (j.job_id, j.status))
        .collect();
    of_event.sort_by_key(|(id, _)| *id);
    let mut expected = vec![
        (replayed.job_id, JobStatus::Held),
        (purged.job_id, JobStatus::Failed),
    ];
    expected.sort_by_key(|(id, _)| *id);
    assert_eq!(of_event, expected);
}

/// How long a queue check waits for a message before it fails: SQS on the emulator is slow, and
/// visibility there runs on its own clock, so a wait may last a visibility timeout or a hold.
const QUEUE_WITHIN: Duration = Duration::from_secs(30);

/// Receives until at least `want` messages arrived (queues may return fewer than are available
/// per call), failing the check if they do not within [`QUEUE_WITHIN`].
async fn receive_all(f: &Fixture, want: usize) -> Vec<Delivery> {
    let got = RefCell::new(Vec::new());
    eventually(
        QUEUE_WITHIN,
        &format!("{want} message(s) to be delivered"),
        || async {
            let more = f
                .backend
                .queue
                .receive(10, Duration::from_millis(500))
                .await
                .unwrap();
            let mut got = got.borrow_mut();
            got.extend(more);
            (got.len() >= want).then_some(())
        },
    )
    .await;
    got.into_inner()
}

/// Lets the visibility timeout pass and receives the `want` messages it brings back. The
/// fixture's clock jumps past it (the embedded queue times visibility with it); SQS times
/// visibility itself, so there the receive waits for the timeout to pass in real time.
async fn after_the_visibility_timeout(f: &Fixture, want: usize) -> Vec<Delivery> {
    f.clock.advance(signed(f.visibility_timeout));
    receive_all(f, want).await
}

/// Shows that what the test just acknowledged, extended or dead-lettered does not come back: a
/// control message received after it comes back alone, and nothing follows.
async fn assert_stays_away(f: &Fixture, event: &EventId, why: &str) {
    let control = received_control(f, event).await;
    let back = after_the_visibility_timeout(f, 1).await;
    assert_eq!(job_ids(&back), [Some(control)], "{why}");
    assert_nothing_more(f, why).await;
}

/// Sends a control message, with no job, and receives it without acknowledging it; returns its
/// job id. A check that something does NOT come back waits for the control to come back instead
/// of sleeping: a message received no later than the control would be back by then too.
async fn received_control(f: &Fixture, event: &EventId) -> JobId {
    let control = intent(f, event, "control", exact(&["B-1-1"]));
    f.backend
        .queue
        .send(std::slice::from_ref(&control))
        .await
        .unwrap();
    let got = receive_all(f, 1).await;
    assert_eq!(
        job_ids(&got),
        [Some(control.job_id)],
        "only the control was visible"
    );
    control.job_id
}

/// Asserts that no other message is waiting (one more receive, for queues that return fewer
/// messages per call than are available).
async fn assert_nothing_more(f: &Fixture, why: &str) {
    let more = f
        .backend
        .queue
        .receive(10, Duration::from_millis(500))
        .await
        .unwrap();
    assert_eq!(job_ids(&more), [], "{why}");
}

fn job_ids(deliveries: &[Delivery]) -> Vec<Option<JobId>> {
    deliveries.iter().map(|d| d.job_id).collect()
}

fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).expect("a test duration fits")
}

/// Runs every check of the contract, each on a fresh fixture from `fixture`.
#[macro_export]
macro_rules! port_contract {
    ($fixture:expr) => {
        $crate::port_contract!(@each $fixture;
            admission_is_idempotent_and_checks_the_event,
            a_seat_is_held_by_the_first_claim_only,
            one_batch_racing_for_a_seat_has_exactly_one_winner,
            a_multi_seat_claim_is_all_or_none,
            a_redelivered_intent_never_holds_twice,
            holds_end_by_confirm_or_by_expiry,
            every_transition_is_in_the_outbox_until_published,
            an_admission_may_decide_but_never_ahead_of_the_queue,
            unacknowledged_messages_come_back_after_the_visibility_timeout,
            acknowledging_with_the_next_receive_deletes_the_message,
            a_retried_message_comes_back_after_its_delay,
            extending_visibility_keeps_a_slow_batch_hidden,
            messages_received_too_often_are_dead_lettered,
            dead_letters_are_listed_replayed_and_purged,
            concurrent_claims_from_several_loops_hold_each_seat_once,
            racing_section_claims_fill_the_section_before_rejecting,
            a_buyer_racing_claims_gets_no_more_seats_than_the_limit,
            a_hold_is_extended_from_its_deadline_no_more_than_allowed,
            a_pending_jobs_line_is_the_undecided_intents_admitted_before_it,
            a_sections_line_is_served_in_order_and_nobody_passes_it,
            racing_cancels_serve_a_line_in_order,
            a_sale_opens_in_the_order_its_seed_draws,
            arriving_first_buys_no_advantage_at_the_opening,
            a_pre_queued_intent_ages_from_the_opening,
            a_block_is_the_best_adjacent_seats_and_strands_none_when_it_can,
            racing_blocks_fill_a_section_with_adjacent_holds,
        );
    };
    (@each $fixture:expr; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                $crate::contract::$check($fixture.await).await;
            }
        )+
    };
}
