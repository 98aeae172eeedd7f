//! The wrappers around the ports that fail as configured: the inventory's writes (throttled or
//! timed out, and one buyer's claims always), the admissions (duplicated, delayed delivery) and
//! the event bus (down).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use jiff::Timestamp;

use seatclaim_core::domain::{
    BuyerId, EventId, IdempotencyKey, Intent, JobAction, JobId, Notice, ReservationEvent, Tender,
};
use seatclaim_core::ports::{
    Admission, Admissions, Backend, BackendError, Claims, EventPublisher, IntentQueue, Inventory,
    Settled,
};

use super::FaultSettings;

/// `backend` with the ports the faults touch wrapped, drawing from one generator seeded `seed`.
pub(super) fn around(backend: Backend, settings: FaultSettings, seed: u64) -> Backend {
    let faults = Arc::new(Faults {
        settings,
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
