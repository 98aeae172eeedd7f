//! Requests that wait for a job's decision: `GET /v1/jobs/{id}?wait=N` and a reservation POST
//! sent with `Prefer: wait=N`. Both take one of a bounded number of slots
//! (`SEATCLAIM_MAX_LONG_POLLS`), so that waiting requests cannot pile up without limit; with
//! none free, a request is answered at once.

use std::time::Duration;

use seatclaim_core::app;
use seatclaim_core::domain::{Job, JobId};
use seatclaim_core::ports::{Backend, BackendError};
use tokio::sync::Semaphore;

use crate::settings::ServerLimits;

/// The slots of waiting requests, and how long a `Prefer: wait` may wait.
pub struct LongPolls {
    slots: Semaphore,
    max_prefer_wait_secs: u64,
}

impl LongPolls {
    /// The slots and caps `limits` set.
    #[must_use]
    pub fn new(limits: &ServerLimits) -> Self {
        Self {
            slots: Semaphore::new(limits.max_long_polls),
            max_prefer_wait_secs: limits.max_prefer_wait_secs,
        }
    }

    /// The seconds a reservation POST that asked for `asked` waits: at most
    /// `SEATCLAIM_MAX_PREFER_WAIT_SECS`; `None` when that leaves nothing to wait for.
    #[must_use]
    pub fn prefer_wait(&self, asked: u64) -> Option<u64> {
        Some(asked.min(self.max_prefer_wait_secs)).filter(|seconds| *seconds > 0)
    }

    /// The job once it has left PENDING, or as it stands after `seconds`, waited for in a slot;
    /// `None` when every slot is taken (nothing was read).
    pub async fn wait_for_decision(
        &self,
        backend: &Backend,
        job_id: JobId,
        seconds: u64,
    ) -> Option<Result<Option<Job>, BackendError>> {
        let _slot = self.slots.try_acquire().ok()?;
        let _waiting = Waiting::start();
        let max = Duration::from_secs(seconds);
        Some(app::jobs::wait_for_decision(backend, job_id, max).await)
    }
}

/// Counts a waiting request in `seatclaim_long_polls_waiting` while it lives.
struct Waiting;

impl Waiting {
    fn start() -> Self {
        metrics::gauge!("seatclaim_long_polls_waiting").increment(1.0);
        Self
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        metrics::gauge!("seatclaim_long_polls_waiting").decrement(1.0);
    }
}
