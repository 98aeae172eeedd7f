//! Wake-ups for `?wait=` long polls: a decision made in this process is handed to the polls
//! waiting for that job and to no others, so a batch of decisions costs one map lookup per job
//! (not one wake-up per waiting poll), and a woken poll answers without reading its job again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use crate::domain::{Job, JobId};

/// The jobs somebody is waiting on, each with the channel its decision arrives on.
#[derive(Default)]
pub(super) struct Decisions {
    waiting: Mutex<HashMap<JobId, watch::Sender<Option<Job>>>>,
}

impl Decisions {
    /// Registers interest in `job_id` until the returned guard is dropped. Register before reading
    /// the job, so that a decision made between the read and the wait is not missed.
    pub(super) fn watch(self: &Arc<Self>, job_id: JobId) -> Watch {
        let decided = self
            .lock()
            .entry(job_id)
            .or_insert_with(|| watch::channel(None).0)
            .subscribe();
        Watch {
            decisions: Arc::clone(self),
            job_id,
            decided,
        }
    }

    /// Hands `job`, just decided, to the polls waiting for it, if any.
    pub(super) fn announce(&self, job: &Job) {
        if let Some(waiting) = self.lock().get(&job.job_id) {
            waiting.send_replace(Some(job.clone()));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<JobId, watch::Sender<Option<Job>>>> {
        // The map holds no invariant a panic could break half-way.
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One poll's interest in one job.
pub(super) struct Watch {
    decisions: Arc<Decisions>,
    job_id: JobId,
    decided: watch::Receiver<Option<Job>>,
}

impl Watch {
    /// The job once this process has decided it.
    pub(super) async fn decided(&mut self) -> Option<Job> {
        let job = self.decided.wait_for(Option::is_some).await.ok()?;
        job.clone()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let mut waiting = self.decisions.lock();
        // Ours is the last receiver: nobody else is waiting for this job.
        if waiting
            .get(&self.job_id)
            .is_some_and(|sender| sender.receiver_count() == 1)
        {
            waiting.remove(&self.job_id);
        }
    }
}
