//! Waiting for a condition instead of sleeping for a guess. A fixed sleep is too short on a slow
//! machine (the test flakes) and too long on a fast one (the suite crawls), and a check made after
//! it often cannot fail.

use std::time::{Duration, Instant};

/// Polls `check` every `every` until it returns `Some`, and returns what it returned; fails the
/// test, naming `what` (the condition awaited), if it still returns `None` after `within`.
///
/// `within` only bounds a failure: a passing run returns as soon as the condition holds, so the
/// limit can be generous (the emulator is slow), and no test asserts how long the wait took.
///
/// `check` is a closure returning a future (`|| async { .. }`) rather than an async closure: the
/// futures of async closures that borrow are not provably `Send` (rust-lang/rust#110338), and
/// buyers spawned as tasks wait through here. A check that keeps state between polls keeps it in
/// a `Cell` or `RefCell`.
pub async fn poll_until<T, F, Fut>(every: Duration, within: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            started.elapsed() < within,
            "waited {within:?} for {what}, in vain"
        );
        tokio::time::sleep(every).await;
    }
}
