//! Fault injection for the fault tests: wrappers around the real adapters that fail the way
//! production fails (throttled or timed-out writes, duplicated and reordered delivery, an event
//! bus that is down, an intent that always fails). Off unless a `SEATCLAIM_FAULT_*` variable is
//! set, and compiled only with the `faults` feature (the test suite's), so production binaries
//! cannot carry it; a process with faults on says so loudly in its log.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;

use seatclaim_core::domain::{
    BuyerId, EventId, IdempotencyKey, Intent, JobAction, JobId, Notice, ReservationEvent, Tender,
};
use seatclaim_core::ports::Backend;
use seatclaim_core::ports::{
    Admission, Admissions, BackendError, Claims, EventPublisher, IntentQueue, Inventory, Settled,
};

/// Which faults to inject. All are off by default.
#[derive(Debug, Clone, Default)]
pub struct FaultSettings {
    /// Faults apply only while this file exists: the test "fixes the cause" by deleting it.
    pub fault_while: Option<PathBuf>,
    /// Share (0 to 1) of inventory writes that fail with a transient error, half of them before
    /// the write and half after it committed (a timeout the caller cannot tell from a failure).
    pub store_failure_rate: f64,
    /// Extra copies of every admitted intent, sent after random delays of up to a second, so
    /// messages arrive more than once and out of order.
    pub duplicate_deliveries: u32,
    /// The event bus refuses every publication.
    pub bus_down: bool,
    /// Claims of this buyer's intents always fail (transiently): an intent that keeps failing.
    pub failing_buyer: Option<String>,
    /// Seeds every injected random choice (which writes fail, how long duplicates wait), so a
    /// failing fault test replays; random when unset.
    pub seed: Option<u64>,
}

impl FaultSettings {
    /// Whether any fault is configured.
    #[must_use]
    pub fn any(&self) -> bool {
        self.store_failure_rate > 0.0
            || self.duplicate_deliveries > 0
            || self.bus_down
            || self.failing_buyer.is_some()
    }

    fn active(&self) -> bool {
        self.fault_while.as_ref().is_none_or(|path| path.exists())
    }

    /// Wraps the ports of `backend` that the configured faults touch.
    #[must_use]
    pub fn inject(self, backend: Backend) -> Backend {
        if !self.any() {
            return backend;
        }
        let seed = self.seed.unwrap_or_else(|| fastrand::u64(..));
        tracing::warn!(faults = ?self, seed, "FAULT INJECTION IS ON: this process fails on purpose");
        let faults = Arc::new(Faults {
            settings: self,
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
        });
        Backend {
            admissions: Arc::new(Duplicating {
                inner: backend.admissions,
                queue: Arc::clone(&backend.queue),
                faults: Arc::clone(&faults),
            }),
            inventory: Arc::new(Unreliable {
                inner: backend.inventory,
                faults: Arc::clone(&faults),
            }),
            publisher: Arc::new(Unreachable {
                inner: backend.publisher,
                faults,
            }),
            ..backend
        }
    }
}

/// The settings in force, with the one source of their randomness.
struct Faults {
    settings: FaultSettings,
    rng: Mutex<fastrand::Rng>,
}

impl Faults {
    fn active(&self) -> bool {
        self.settings.active()
    }

    /// Draws from the seeded generator (a poisoned lock only means another draw panicked).
    fn draw<T>(&self, f: impl FnOnce(&mut fastrand::Rng) -> T) -> T {
        f(&mut self.rng.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

fn injected(what: &str) -> BackendError {
    BackendError::transient(format!("injected fault: {what}"))
}

struct Duplicating {
    inner: Arc<dyn Admissions>,
    queue: Arc<dyn IntentQueue>,
    faults: Arc<Faults>,
}

#[async_trait]
impl Admissions for Duplicating {
    async fn admit(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        let admission = self.inner.admit(key, intent).await?;
        if matches!(admission, Admission::Accepted(_)) && self.faults.active() {
            for _ in 0..self.faults.settings.duplicate_deliveries {
                let (queue, intent) = (Arc::clone(&self.queue), intent.clone());
                let delay = Duration::from_millis(self.faults.draw(|rng| rng.u64(0..1_000)));
                tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if let Err(error) = queue.send(&[intent]).await {
                        tracing::warn!(%error, "could not send an injected duplicate");
                    }
                });
            }
        }
        Ok(admission)
    }

    fn new_job_id(&self, buyer: &BuyerId, key: &IdempotencyKey) -> JobId {
        self.inner.new_job_id(buyer, key)
    }
}

struct Unreliable {
    inner: Arc<dyn Inventory>,
    faults: Arc<Faults>,
}

impl Unreliable {
    fn roll(&self) -> Option<bool> {
        let rate = self.faults.settings.store_failure_rate;
        let fails = self.faults.active() && self.faults.draw(|rng| rng.f64()) < rate;
        fails.then(|| self.faults.draw(fastrand::Rng::bool))
    }

    fn poisoned(&self, buyer: &BuyerId) -> bool {
        self.faults.active()
            && self.faults.settings.failing_buyer.as_deref() == Some(buyer.as_str())
    }
}

#[async_trait]
impl Inventory for Unreliable {
    async fn claim(&self, intents: &[Intent], now: Timestamp) -> Result<Claims, BackendError> {
        if intents.iter().any(|intent| self.poisoned(&intent.buyer_id)) {
            return Err(injected("this buyer's claims always fail"));
        }
        match self.roll() {
            Some(false) => Err(injected("throttled before the write")),
            Some(true) => {
                self.inner.claim(intents, now).await?;
                Err(injected("timed out after the write"))
            }
            None => self.inner.claim(intents, now).await,
        }
    }

    async fn settle(
        &self,
        job_id: JobId,
        action: JobAction,
        tender: &Tender,
    ) -> Result<Settled, BackendError> {
        match self.roll() {
            Some(false) => Err(injected("throttled before the write")),
            Some(true) => {
                self.inner.settle(job_id, action, tender).await?;
                Err(injected("timed out after the write"))
            }
            None => self.inner.settle(job_id, action, tender).await,
        }
    }

    async fn release_lapsed_holds(
        &self,
        now: Timestamp,
        limit: usize,
    ) -> Result<usize, BackendError> {
        self.inner.release_lapsed_holds(now, limit).await
    }

    async fn close_waitlist(&self, event_id: &EventId) -> Result<Option<usize>, BackendError> {
        self.inner.close_waitlist(event_id).await
    }
}

struct Unreachable {
    inner: Arc<dyn EventPublisher>,
    faults: Arc<Faults>,
}

#[async_trait]
impl EventPublisher for Unreachable {
    async fn publish(&self, events: &[ReservationEvent]) -> Result<Vec<usize>, BackendError> {
        if self.faults.settings.bus_down && self.faults.active() {
            return Err(injected("the event bus is down"));
        }
        self.inner.publish(events).await
    }

    async fn publish_notice(&self, notice: &Notice) -> Result<(), BackendError> {
        if self.faults.settings.bus_down && self.faults.active() {
            return Err(injected("the event bus is down"));
        }
        self.inner.publish_notice(notice).await
    }
}
