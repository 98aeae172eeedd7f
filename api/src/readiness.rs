//! The newest readiness check, shared by every probe of `/readyz` (`routes/health.rs`) and kept
//! in the app's state: one check runs at a time, and its answer serves the probes of the next
//! [`READINESS_MAX_AGE`].

use std::time::Duration;

use seatclaim_core::ports::BackendError;
use tokio::sync::Mutex;
use tokio::time::Instant;

/// How long a readiness check's answer is reused.
const READINESS_MAX_AGE: Duration = Duration::from_secs(2);
/// How long a check may wait for the backend: the probes are outside the request timeout.
const READINESS_TIMEOUT: Duration = Duration::from_secs(2);

/// The newest readiness check; one check runs at a time, and the probes that arrive meanwhile
/// take its answer.
#[derive(Default)]
pub struct Readiness {
    last: Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Readiness {
    /// Whether the backend answers, as `ping` said at most [`READINESS_MAX_AGE`] ago.
    pub(crate) async fn check<F, P>(&self, ping: F) -> Result<(), String>
    where
        F: FnOnce() -> P,
        P: Future<Output = Result<(), BackendError>>,
    {
        let mut last = self.last.lock().await;
        if let Some((at, answer)) = last.as_ref()
            && at.elapsed() < READINESS_MAX_AGE
        {
            return answer.clone();
        }
        let answer = match tokio::time::timeout(READINESS_TIMEOUT, ping()).await {
            Ok(answer) => answer.map_err(|error| error.message),
            Err(_) => Err(format!(
                "the backend did not answer within {} s",
                READINESS_TIMEOUT.as_secs()
            )),
        };
        *last = Some((Instant::now(), answer.clone()));
        answer
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// Makes the newest answer `READINESS_MAX_AGE` older, as if that much time had passed.
    async fn age(readiness: &Readiness) {
        if let Some((at, _)) = readiness.last.lock().await.as_mut() {
            *at = at.checked_sub(READINESS_MAX_AGE).unwrap_or(*at);
        }
    }

    /// Probes within the answer's age share one check; the next one after it checks again; a
    /// backend that hangs is not ready once the check's own timeout has passed.
    #[tokio::test]
    async fn probes_share_a_check_of_at_most_two_seconds_age() {
        let readiness = Readiness::default();
        let pings = AtomicUsize::new(0);
        let ping = || async {
            pings.fetch_add(1, Ordering::SeqCst);
            Ok(())
        };
        for _ in 0..5 {
            assert_eq!(readiness.check(ping).await, Ok(()));
        }
        assert_eq!(pings.load(Ordering::SeqCst), 1, "one check for five probes");
        age(&readiness).await;
        assert_eq!(readiness.check(ping).await, Ok(()));
        assert_eq!(
            pings.load(Ordering::SeqCst),
            2,
            "an answer that old is checked again"
        );
        age(&readiness).await;
        let hanging = readiness.check(std::future::pending).await;
        assert!(hanging.is_err_and(|why| why.contains("did not answer")));
    }
}
