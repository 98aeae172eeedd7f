//! Receiving in the contract's checks: waiting for messages (SQS on the emulator delivers late
//! and a few at a time), letting the visibility timeout pass, and showing that a message does
//! not come back without sleeping for a guess.

use std::cell::RefCell;
use std::time::Duration;

use jiff::SignedDuration;

use super::{Fixture, exact, intent};
use crate::domain::{EventId, JobId};
use crate::ports::Delivery;
use crate::testkit::poll_until;

/// How long a queue check waits for a message before it fails: SQS on the emulator is slow, and
/// visibility there runs on its own clock, so a wait may last a visibility timeout or a hold.
pub(super) const QUEUE_WITHIN: Duration = Duration::from_secs(30);

/// Receives until at least `want` messages arrived (queues may return fewer than are available
/// per call), failing the check if they do not within [`QUEUE_WITHIN`].
pub(super) async fn receive_all(f: &Fixture, want: usize) -> Vec<Delivery> {
    let got = RefCell::new(Vec::new());
    eventually(
        QUEUE_WITHIN,
        &format!("{want} message(s) to be delivered"),
        || async {
            let more = receive_once(f).await;
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
pub(super) async fn after_the_visibility_timeout(f: &Fixture, want: usize) -> Vec<Delivery> {
    f.clock.advance(signed(f.visibility_timeout));
    receive_all(f, want).await
}

/// Shows that what the test just acknowledged, extended or dead-lettered does not come back: a
/// control message received after it comes back alone, and nothing follows.
pub(super) async fn assert_stays_away(f: &Fixture, event: &EventId, why: &str) {
    let control = received_control(f, event).await;
    let back = after_the_visibility_timeout(f, 1).await;
    assert_eq!(job_ids(&back), [Some(control)], "{why}");
    assert_nothing_more(f, why).await;
}

/// Sends a control message, with no job, and receives it without acknowledging it; returns its
/// job id. A check that something does NOT come back waits for the control to come back instead
/// of sleeping: a message received no later than the control would be back by then too.
pub(super) async fn received_control(f: &Fixture, event: &EventId) -> JobId {
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
pub(super) async fn assert_nothing_more(f: &Fixture, why: &str) {
    let more = receive_once(f).await;
    assert_eq!(job_ids(&more), [], "{why}");
}

/// One receive of up to ten messages, waiting half a second for the first.
async fn receive_once(f: &Fixture) -> Vec<Delivery> {
    f.backend
        .queue
        .receive(10, Duration::from_millis(500))
        .await
        .unwrap()
}

/// How often a check's wait looks again.
pub(super) const POLL: Duration = Duration::from_millis(20);

/// Polls `check` every [`POLL`] until it returns `Some`, failing the check after `within`.
pub(super) async fn eventually<T, Fut: Future<Output = Option<T>>>(
    within: Duration,
    what: &str,
    check: impl FnMut() -> Fut,
) -> T {
    poll_until(POLL, within, what, check).await
}

pub(super) fn job_ids(deliveries: &[Delivery]) -> Vec<Option<JobId>> {
    deliveries.iter().map(|d| d.job_id).collect()
}

pub(super) fn signed(duration: Duration) -> SignedDuration {
    SignedDuration::try_from(duration).expect("a test duration fits")
}
