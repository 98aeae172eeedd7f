//! The embedded backend's driver: what the composition calls to open, provision, migrate, back
//! up and restore one data folder.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seatclaim_core::ports::{
    Backend, BackendError, BackgroundTask, Clock, Driver, Redelivery, SystemClock,
};
use seatclaim_core::reports::{BackedUp, Restored};

/// Where the embedded backend lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedSettings {
    /// The folder of the database and the event log (`SEATCLAIM_DATA_DIR`).
    pub data_dir: PathBuf,
}

/// The embedded backend, opened on one data folder.
pub struct EmbeddedDriver {
    backend: Backend,
}

/// A data folder whose database is open and migrated: what `seatclaimctl init` and `migrate`
/// report on this backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ready(pub PathBuf);

impl fmt::Display for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ready: embedded backend in {}", self.0.display())
    }
}

impl Driver for EmbeddedDriver {
    type Settings = EmbeddedSettings;
    type Ready = Ready;
    type Migration = Ready;

    async fn open(
        settings: &EmbeddedSettings,
        queue: Redelivery,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, BackendError> {
        let backend = super::open(&settings.data_dir, clock, queue)?;
        Ok(Self { backend })
    }

    fn backend(&self) -> Backend {
        self.backend.clone()
    }

    /// None: the writer is a thread the store owns (it stops when the store is dropped), and the
    /// follower that wakes `?wait=` polls starts with the first poll, which must not miss a
    /// decision made between its start and the poll's read (`decisions.rs`).
    fn tasks(&self) -> Vec<BackgroundTask> {
        Vec::new()
    }

    /// Creates the folder and the database, migrated, by opening them.
    async fn provision(
        settings: &EmbeddedSettings,
        queue: Redelivery,
    ) -> Result<Ready, BackendError> {
        Self::open(settings, queue, Arc::new(SystemClock)).await?;
        Ok(Ready(settings.data_dir.clone()))
    }

    /// The database migrates itself whenever it is opened, so this opens it, as `provision` does.
    async fn migrate(
        settings: &EmbeddedSettings,
        queue: Redelivery,
    ) -> Result<Ready, BackendError> {
        Self::provision(settings, queue).await
    }

    fn backup(settings: &EmbeddedSettings, destination: &Path) -> Result<BackedUp, BackendError> {
        super::backup(&settings.data_dir, destination)
    }

    fn restore(settings: &EmbeddedSettings, source: &Path) -> Result<Restored, BackendError> {
        super::restore(&settings.data_dir, source)
    }
}
