//! Waiting for a condition instead of sleeping for a guess (the core's
//! `seatclaim_core::testkit::poll_until`, at the pace the backend under test can bear). Every wait
//! in the suites polls its condition through [`eventually`].

use std::time::Duration;

use seatclaim_core::testkit::poll_until;
use seatclaim_runtime::config::BackendKind;

use crate::test_backend;

/// How often [`eventually`] looks again: the emulator serialises DynamoDB and SQS calls, so
/// hundreds of buyers polling every 20 ms would starve the worker there.
pub fn poll_interval() -> Duration {
    match test_backend() {
        BackendKind::Embedded => Duration::from_millis(20),
        BackendKind::Aws => Duration::from_millis(300),
    }
}

/// Polls `check` every [`poll_interval`] until it returns `Some`, and returns what it returned;
/// fails the test, naming `what` (the condition awaited), if it still returns `None` after
/// `within` (which only bounds a failure; see `poll_until` for why `check` returns a future).
pub async fn eventually<T, F, Fut>(within: Duration, what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll_until(poll_interval(), within, what, check).await
}
