//! The port contract, written once: every check takes a fresh [`Fixture`] and must pass for every
//! backend. A new adapter is done when each check passes for it. One module per port or concern;
//! this one holds the fixture, the helpers they share and [`port_contract!`](crate::port_contract).
//!
//! It lives in the core, beside the ports it holds a backend to, so that each backend crate runs
//! it from its own `cargo test -p` (`shared/embedded/tests/contract.rs`,
//! `shared/aws/tests/contract.rs`, and the memory store's in `shared/core/tests/contract.rs`),
//! and a backend is tested by the crate that builds it, as apalis's backends run its core's
//! storage suite. Compiled only with the core's `testkit` feature.

#![allow(
    clippy::unwrap_used,
    reason = "test support: a failed unwrap is a failed check"
)]

mod access;
mod admissions;
mod channel_openings;
mod claims;
mod dead_letters;
mod extensions;
mod openings;
mod outbox;
mod payment_refs;
mod queue;
mod queue_positions;
mod races;
mod receiving;
mod seat_limits;
mod together;
mod waiting_limits;
mod waitlist_races;
mod waitlists;

use std::any::Any;
use std::cell::RefCell;
use std::sync::Arc;
use std::time::Duration;

use crate::domain::{
    BuyerId, Closure, EventId, EventSpec, IdempotencyKey, Intent, JobAction, JobId, JobStatus,
    NewEvent, SeatId, SeatRequest, SectionSpec, Tender,
};
use crate::ports::{Admission, ClaimOutcome, EventCreation, Message, OutboxEntry, Settled};
use crate::{Backend, app};
use jiff::SignedDuration;

pub use access::{
    a_channels_seats_go_to_its_intents_until_its_release,
    an_events_tallies_count_its_codes_lines_and_lapsing_holds,
    codes_that_do_not_admit_are_rejected_naming_why,
    racing_claims_on_one_code_hold_no_more_than_its_seats,
};
pub use admissions::{
    admission_is_idempotent_and_checks_the_event,
    an_admission_may_decide_but_never_ahead_of_the_queue,
};
pub use channel_openings::a_channel_opens_its_own_pre_queue_before_the_public;
pub use claims::{
    a_multi_seat_claim_is_all_or_none, a_redelivered_intent_never_holds_twice,
    a_seat_is_held_by_the_first_claim_only, holds_end_by_confirm_or_by_expiry,
    one_batch_racing_for_a_seat_has_exactly_one_winner,
};
pub use dead_letters::{
    dead_letters_are_listed_replayed_and_purged, messages_received_too_often_are_dead_lettered,
};
pub use extensions::a_hold_is_extended_from_its_deadline_no_more_than_allowed;
pub use openings::{
    a_pre_queued_intent_ages_from_the_opening, a_sale_opens_in_the_order_its_seed_draws,
    arriving_first_buys_no_advantage_at_the_opening, the_pre_queues_losers_wait_in_drawn_order,
};
pub use outbox::every_transition_is_in_the_outbox_until_published;
pub use payment_refs::a_sale_is_found_by_its_payment;
pub use queue::{
    a_retried_message_comes_back_after_its_delay,
    acknowledging_with_the_next_receive_deletes_the_message,
    extending_visibility_keeps_a_slow_batch_hidden,
    unacknowledged_messages_come_back_after_the_visibility_timeout,
};
pub use queue_positions::a_pending_jobs_line_is_the_undecided_intents_admitted_before_it;
pub use races::{
    concurrent_claims_from_several_loops_hold_each_seat_once,
    racing_section_claims_fill_the_section_before_rejecting,
};
pub use seat_limits::a_buyer_racing_claims_gets_no_more_seats_than_the_limit;
pub use together::{
    a_block_is_the_best_adjacent_seats_and_strands_none_when_it_can,
    racing_blocks_fill_a_section_with_adjacent_holds,
};
pub use waiting_limits::waiting_seats_count_against_the_buyers_limit;
pub use waitlist_races::racing_cancels_serve_a_line_in_order;
pub use waitlists::a_sections_line_is_served_first_fit_in_order;

use crate::testkit::JumpClock;
use receiving::{
    QUEUE_WITHIN, after_the_visibility_timeout, assert_nothing_more, assert_stays_away, eventually,
    job_ids, receive_all, received_control, signed,
};

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
    /// Whatever must live as long as the check and go with it, such as the temporary folder of a
    /// backend on local files: boxed, so the core needs no file-system crate to hold it.
    pub storage: Option<Box<dyn Any + Send + Sync>>,
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
                channel: None,
                section: "A".into(),
                rows: 1,
                seats_per_row: 4,
                price: None,
            },
            SectionSpec {
                channel: None,
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
        access: None,
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

/// How often a batch whose claim failed transiently is claimed again before the check fails.
const REDELIVERIES: usize = 50;

/// Claims `batch` as the worker's queue delivers it: a transient failure (racing transactions on
/// a buyer's count, or a section claim that kept losing its seats to other loops while the
/// emulator was slow, on DynamoDB) leaves the intents to be delivered again, and the batch is
/// claimed again; what an earlier attempt decided stays decided. Returns the batch's outcomes.
pub(crate) async fn claim_as_redelivered(f: &Fixture, batch: &[Intent]) -> Vec<ClaimOutcome> {
    let mut redelivered = 0;
    loop {
        match app::claim(&f.backend, batch, f.backend.clock.now()).await {
            Ok(outcomes) => return outcomes,
            Err(error) if error.is_transient() && redelivered < REDELIVERIES => {
                redelivered += 1;
                eprintln!("claimed again after a transient failure ({redelivered}): {error}");
            }
            Err(error) => panic!("the claim failed after {redelivered} redeliveries: {error}"),
        }
    }
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

/// Runs every check of the contract as a test of its own, each on a fresh fixture from `fixture`:
/// a future of a [`Fixture`], or of an `Option<Fixture>` that is `None` when the backend cannot
/// run here (its fixture says why), in which case the test passes without checking anything.
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
            waiting_seats_count_against_the_buyers_limit,
            a_hold_is_extended_from_its_deadline_no_more_than_allowed,
            a_pending_jobs_line_is_the_undecided_intents_admitted_before_it,
            a_sections_line_is_served_first_fit_in_order,
            racing_cancels_serve_a_line_in_order,
            a_sale_opens_in_the_order_its_seed_draws,
            arriving_first_buys_no_advantage_at_the_opening,
            the_pre_queues_losers_wait_in_drawn_order,
            a_pre_queued_intent_ages_from_the_opening,
            a_block_is_the_best_adjacent_seats_and_strands_none_when_it_can,
            racing_blocks_fill_a_section_with_adjacent_holds,
            a_sale_is_found_by_its_payment,
            racing_claims_on_one_code_hold_no_more_than_its_seats,
            a_channels_seats_go_to_its_intents_until_its_release,
            codes_that_do_not_admit_are_rejected_naming_why,
            an_events_tallies_count_its_codes_lines_and_lapsing_holds,
            a_channel_opens_its_own_pre_queue_before_the_public,
        );
    };
    (@each $fixture:expr; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let fixture: ::core::option::Option<$crate::contract::Fixture> =
                    ::core::convert::Into::into($fixture.await);
                if let ::core::option::Option::Some(fixture) = fixture {
                    $crate::contract::$check(fixture).await;
                }
            }
        )+
    };
}
