//! Wake-ups for `?wait=` long polls: a decision is handed to the polls waiting for that job and
//! to no others, so a batch of decisions costs one map lookup per job (not one wake-up per waiting
//! poll), and a woken poll answers without reading its job again. Decisions made in this process
//! are announced as they commit; those made by another process on the same file (a worker of its
//! own) are found by [`follow`], which reads the outbox's new entries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::OptionalExtension;
use tokio::sync::watch;

use super::db::Db;
use super::job_rows::load_job;
use crate::error::sqlite_error;
use seatclaim_core::domain::{Job, JobId, JobStatus};
use seatclaim_core::ports::BackendError;

/// How often [`follow`] looks for decisions recorded by other processes.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(5);

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

    fn is_waiting_for(&self, job_id: JobId) -> bool {
        self.lock().contains_key(&job_id)
    }

    fn anyone_waiting(&self) -> bool {
        !self.lock().is_empty()
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
    /// The job once it is announced changed after this watch began (a decision, or a move off
    /// a line); an announcement from before it is not news.
    pub(super) async fn decided(&mut self) -> Option<Job> {
        self.decided.changed().await.ok()?;
        self.decided.borrow_and_update().clone()
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

/// Follows the outbox for as long as the store lives: every [`FOLLOW_INTERVAL`], the entries
/// recorded since the last look name the jobs whose status changed; each one somebody waits for is
/// read and, once decided, handed to its polls. While nobody waits, only the newest entry's
/// number is read. Returns once the starting point is read, so a poll that registers after this
/// and then reads its job misses nothing: what its read did not see comes after the starting point.
pub(super) async fn follow(db: &Arc<Db>, decisions: &Arc<Decisions>) -> Result<(), BackendError> {
    let mut seen = newest_entry(db).await?;
    let (db, decisions) = (Arc::downgrade(db), Arc::downgrade(decisions));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(FOLLOW_INTERVAL).await;
            let (Some(db), Some(decisions)) = (db.upgrade(), decisions.upgrade()) else {
                return;
            };
            if let Err(error) = look(&db, &decisions, &mut seen).await {
                tracing::warn!(%error, "could not follow decisions; polls fall back to re-reading");
            }
        }
    });
    Ok(())
}

async fn look(db: &Arc<Db>, decisions: &Decisions, seen: &mut i64) -> Result<(), BackendError> {
    // Read before asking who waits: a poll that registers after the question reads its job after
    // this point, so skipping the entries up to it loses nothing.
    let newest = newest_entry(db).await?;
    if !decisions.anyone_waiting() {
        *seen = newest;
        return Ok(());
    }
    let after = *seen;
    let changed: Vec<(i64, String)> = db
        .read(move |tx| {
            let mut query = tx
                .prepare_cached("SELECT seq, job_id FROM outbox WHERE seq > ?1 ORDER BY seq")
                .map_err(sqlite_error)?;
            let rows = query
                .query_map([after], |row| Ok((row.get(0)?, row.get(1)?)))
                .map_err(sqlite_error)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(sqlite_error)
        })
        .await?;
    if let Some((last, _)) = changed.last() {
        *seen = *last;
    }
    for job_id in changed.iter().filter_map(|(_, id)| JobId::parse(id)) {
        if !decisions.is_waiting_for(job_id) {
            continue;
        }
        if let Some(job) = db.lookup(move |tx| load_job(tx, job_id)).await?
            && job.status != JobStatus::Pending
        {
            decisions.announce(&job);
        }
    }
    Ok(())
}

async fn newest_entry(db: &Arc<Db>) -> Result<i64, BackendError> {
    db.lookup(|tx| {
        Ok(tx
            .prepare_cached("SELECT max(seq) FROM outbox")
            .map_err(sqlite_error)?
            .query_row([], |row| row.get::<_, Option<i64>>(0))
            .optional()
            .map_err(sqlite_error)?
            .flatten()
            .unwrap_or(0))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EmbeddedStore;
    use seatclaim_core::domain::{
        BuyerId, EventId, EventSpec, IdempotencyKey, Intent, NewEvent, SeatRequest, SectionSpec,
    };
    use seatclaim_core::ports::Redelivery;
    use seatclaim_core::ports::{Admissions, Catalog, Clock, Inventory, SystemClock};

    fn store(path: &std::path::Path) -> EmbeddedStore {
        let queue = Redelivery {
            visibility_timeout: Duration::from_secs(30),
            max_receive_count: 5,
        };
        EmbeddedStore::open(path, Arc::new(SystemClock), queue).expect("open")
    }

    /// The API's store hears of a decision made through another store on the same file (another
    /// process, as a separate worker is) only by following the outbox: `decided` resolves on an
    /// announcement alone, never on a re-read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_decision_made_by_another_process_reaches_the_waiting_poll() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("seatclaim.sqlite3");
        let (api, worker) = (store(&path), store(&path));
        let event = NewEvent::parse(EventSpec {
            event_id: "e1".into(),
            name: "e1".into(),
            hold_seconds: Some(60),
            sections: Some(vec![SectionSpec {
                channel: None,
                section: "A".into(),
                rows: 1,
                seats_per_row: 2,
                price: None,
            }]),
            ..EventSpec::default()
        })
        .expect("event");
        worker.create_event(&event).await.expect("create");
        let intent = Intent {
            access: None,
            job_id: JobId::new(),
            event_id: EventId::parse("e1").expect("id"),
            buyer_id: BuyerId::parse("b1").expect("id"),
            request: SeatRequest::exact(&["A-1-1".to_owned()]).expect("request"),
            accepted_at: SystemClock.now(),
            opens_at: None,
        };
        let key = IdempotencyKey::parse("k1").expect("key");
        api.admit(&key, &intent).await.expect("admit");

        follow(&api.db, &api.decisions).await.expect("follow");
        let mut watch = api.decisions.watch(intent.job_id);
        let claims = worker
            .claim(std::slice::from_ref(&intent), SystemClock.now())
            .await
            .expect("claim");
        assert!(
            claims.unrecorded.is_empty(),
            "SQLite records every event itself"
        );
        let decided = tokio::time::timeout(Duration::from_secs(30), watch.decided())
            .await
            .expect("the follower announces the decision")
            .expect("a decided job");
        assert_eq!(decided.status, JobStatus::Held);
        assert_eq!(decided.job_id, intent.job_id);
    }
}
