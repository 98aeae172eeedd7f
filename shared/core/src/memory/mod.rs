//! The memory backend: every port on plain maps behind one lock, for the deterministic
//! simulation (`tests/src/sim`) and for tests that want a backend without a file. It keeps the
//! embedded backend's semantics (idempotency records, conditional transitions recorded with
//! their events, a queue with visibility timeouts, receive counts and a dead-letter queue) and
//! is held to the same port contract (`shared/core/tests/contract.rs`). Nothing here sleeps, spawns
//! or reads the wall clock: time is the [`Clock`] it is given, and every call completes at once,
//! so a simulator decides the order of everything.
//!
//! Each port is implemented for [`MemoryStore`] in a file of its own; reservation events go to a
//! [`MemoryPublisher`], which keeps what it was given. Compiled only with the core's `testkit` feature.

mod admissions;
mod catalog;
mod codes;
mod dead_letters;
mod inventory;
mod jobs;
mod opening;
mod optimistic;
mod outbox;
mod plans;
mod queue;
mod state;
mod step;
mod waitlist;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub use optimistic::Optimistic;
pub use outbox::MemoryPublisher;
pub use plans::MemoryPlans;
pub use queue::{Lane, Queue, StoredMessage};
pub use state::{Recorded, State};

use jiff::Timestamp;

use crate::domain::JobId;
use crate::ports::{Backend, BackendError, Clock, Redelivery};
use crate::step::StepStore;

/// Every port's tables in one place.
pub struct MemoryStore {
    state: Mutex<State>,
    clock: Arc<dyn Clock>,
    settings: Redelivery,
    /// The last job id handed out: ids are a counter, so a simulation's ids repeat run after run.
    last_job: AtomicU64,
}

impl MemoryStore {
    /// An empty store reading "now" from `clock`.
    #[must_use]
    pub fn new(clock: Arc<dyn Clock>, settings: Redelivery) -> Self {
        Self {
            state: Mutex::default(),
            clock,
            settings,
            last_job: AtomicU64::new(0),
        }
    }

    /// Runs `look` on the tables as they stand, for checks from outside the ports.
    pub fn inspect<T>(&self, look: impl FnOnce(&State) -> T) -> T {
        look(&self.lock())
    }

    /// Runs `work` as one atomic step on the tables as the core's step sees them
    /// ([`crate::step`]), at the store's own "now": the seam through which a test wraps the
    /// step's reads and writes (the simulation's mutants, `tests/src/sim/mutants.rs`, break the
    /// line's hand-out through it to show that its invariants catch the break).
    pub fn step<T>(
        &self,
        work: impl FnOnce(&mut dyn StepStore, Timestamp) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.lock().atomically(|state| {
            let now = self.clock.now();
            work(&mut step::MemoryStep { state }, now)
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every write is applied whole before the lock is let go, so a panic elsewhere cannot
        // have left the tables half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_job_id(&self) -> JobId {
        let n = self.last_job.fetch_add(1, Ordering::Relaxed) + 1;
        let text = format!("00000000-0000-7000-8000-{n:012x}");
        JobId::parse(&text).unwrap_or_else(JobId::time_ordered)
    }
}

/// A memory store and its publisher, with the [`Backend`] bundle over them.
#[derive(Clone)]
pub struct Memory {
    /// The store behind every port but the publisher.
    pub store: Arc<MemoryStore>,
    /// Where the relay publishes.
    pub publisher: Arc<MemoryPublisher>,
    /// The ports.
    pub backend: Backend,
}

/// Opens an empty memory backend on `clock`.
#[must_use]
pub fn open(clock: Arc<dyn Clock>, settings: Redelivery) -> Memory {
    let store = Arc::new(MemoryStore::new(Arc::clone(&clock), settings));
    let publisher = Arc::new(MemoryPublisher::default());
    let backend = Backend {
        catalog: store.clone(),
        admissions: store.clone(),
        jobs: store.clone(),
        inventory: store.clone(),
        outbox: store.clone(),
        queue: store.clone(),
        publisher: publisher.clone(),
        clock,
    };
    Memory {
        store,
        publisher,
        backend,
    }
}
