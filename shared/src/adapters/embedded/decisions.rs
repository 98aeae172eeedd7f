//! Wake-ups for `?wait=` long polls: a decision made in this process wakes the polls waiting for
//! that job and no others, so a batch of decisions costs one map lookup per job, not one wake-up
//! per waiting poll.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use crate::domain::JobId;

/// The jobs somebody is waiting on, each with the signal its waiters share.
#[derive(Default)]
pub(super) struct Decisions {
    waiting: Mutex<HashMap<JobId, Arc<Notify>>>,
}

impl Decisions {
    /// Registers interest in `job_id` until the returned guard is dropped.
    pub(super) fn watch(self: &Arc<Self>, job_id: JobId) -> Watch {
        let signal = Arc::clone(self.lock().entry(job_id).or_default());
        Watch {
            decisions: Arc::clone(self),
            job_id,
            signal,
        }
    }

    /// Wakes the polls waiting for `job_id`, if any.
    pub(super) fn announce(&self, job_id: JobId) {
        if let Some(signal) = self.lock().get(&job_id) {
            signal.notify_waiters();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<JobId, Arc<Notify>>> {
        // The map holds no invariant a panic could break half-way.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One poll's interest in one job.
pub(super) struct Watch {
    decisions: Arc<Decisions>,
    job_id: JobId,
    signal: Arc<Notify>,
}

impl Watch {
    /// The signal to wait on; enable the `Notified` before reading the job so that a decision
    /// made between the read and the wait is not missed.
    pub(super) fn signal(&self) -> &Notify {
        &self.signal
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut waiting = self.decisions.lock();
        // The map's own reference and ours: nobody else is waiting for this job.
        if Arc::strong_count(&self.signal) == 2 {
            waiting.remove(&self.job_id);
        }
    }
}
