//! The bundle of ports a process works with, and the one place that picks the adapters for them.

use std::sync::Arc;

use crate::config::{BackendKind, BackendSettings};
use crate::ports::{
    Admissions, BackendError, Catalog, Clock, EventPublisher, IntentQueue, Inventory, Jobs, Outbox,
    SystemClock,
};

/// Every port, behind trait objects so the API and the worker never name a concrete backend.
/// Cloning is cheap: the ports are shared.
#[derive(Clone)]
pub struct Backend {
    /// Events and the seat map.
    pub catalog: Arc<dyn Catalog>,
    /// The API's one write per reservation.
    pub admissions: Arc<dyn Admissions>,
    /// Job reads and failures.
    pub jobs: Arc<dyn Jobs>,
    /// The seat authority.
    pub inventory: Arc<dyn Inventory>,
    /// Recorded events awaiting the relay.
    pub outbox: Arc<dyn Outbox>,
    /// The intent queue.
    pub queue: Arc<dyn IntentQueue>,
    /// Where the relay publishes events.
    pub publisher: Arc<dyn EventPublisher>,
    /// "Now", for every decision.
    pub clock: Arc<dyn Clock>,
}

impl Backend {
    /// Opens the backend the settings describe, on the wall clock.
    pub async fn open(settings: &BackendSettings) -> Result<Self, BackendError> {
        Self::open_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// Opens the backend with `clock` as "now" for every decision: tests pass a clock they move,
    /// so that hold deadlines and request ages pass without sleeping.
    pub async fn open_with_clock(
        settings: &BackendSettings,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, BackendError> {
        let backend = match settings.backend {
            #[cfg(feature = "embedded")]
            BackendKind::Embedded => crate::adapters::embedded::open(
                &settings.data_dir,
                clock,
                crate::adapters::embedded::QueueConfig {
                    visibility_timeout: settings.visibility_timeout(),
                    max_receive_count: settings.max_receive_count(),
                },
            )?,
            #[cfg(feature = "aws")]
            BackendKind::Aws => crate::adapters::aws::open(settings, clock).await?,
            #[allow(
                unreachable_patterns,
                reason = "reached only when a backend is compiled out"
            )]
            missing => return Err(not_built(missing)),
        };
        #[cfg(feature = "faults")]
        let backend = settings.faults.clone().inject(backend);
        Ok(backend)
    }

    /// Creates what the backend needs before first use (the queues, tables, indexes and bus on
    /// AWS; the folder and the migrated database on the embedded backend), leaving what exists
    /// in place. Returns a line for the operator saying what is ready.
    pub async fn provision(settings: &BackendSettings) -> Result<String, BackendError> {
        match settings.backend {
            #[cfg(feature = "aws")]
            BackendKind::Aws => crate::adapters::aws::provision_for(settings).await,
            #[cfg(feature = "embedded")]
            BackendKind::Embedded => {
                Self::open(settings).await?;
                Ok(format!(
                    "ready: embedded backend in {}",
                    settings.data_dir.display()
                ))
            }
            #[allow(
                unreachable_patterns,
                reason = "reached only when a backend is compiled out"
            )]
            missing => Err(not_built(missing)),
        }
    }
}

fn not_built(kind: BackendKind) -> BackendError {
    BackendError::permanent(format!(
        "this build has no {} backend: build it with the Cargo feature `{}`",
        kind.as_str(),
        kind.as_str()
    ))
}
