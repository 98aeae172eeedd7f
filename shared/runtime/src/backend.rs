//! The one place that picks a process's backend from its settings, and the operator work that
//! depends on which backend it is (provisioning, migration, backups). Each [`BackendKind`] names
//! a driver (`drivers.rs`, the core's `ports::Driver`), and every call goes through it: each
//! match below has one complete arm per kind, in every build.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::config::{BackendKind, BackendSettings};
use crate::drivers::{Aws, Embedded, Linked};
use seatclaim_core::ports::{BackendError, Clock, Driver, Opened, SystemClock};
use seatclaim_core::reports::{BackedUp, Restored};

/// Opens the backend the settings describe, on the wall clock. Its background tasks are
/// returned, not started: the process runs them (`loops::BackendTasks`) while it uses the
/// backend.
pub async fn open(settings: &BackendSettings) -> Result<Opened, BackendError> {
    open_with_clock(settings, Arc::new(SystemClock)).await
}

/// Opens the backend with `clock` as "now" for every decision: tests pass a clock they move,
/// so that hold deadlines and request ages pass without sleeping.
pub async fn open_with_clock(
    settings: &BackendSettings,
    clock: Arc<dyn Clock>,
) -> Result<Opened, BackendError> {
    match settings.backend {
        BackendKind::Embedded => open_on::<Embedded>(settings, clock).await,
        BackendKind::Aws => open_on::<Aws>(settings, clock).await,
    }
}

async fn open_on<D: Linked>(
    settings: &BackendSettings,
    clock: Arc<dyn Clock>,
) -> Result<Opened, BackendError> {
    let driver = D::open(&D::settings_of(settings), settings.redelivery(), clock).await?;
    Ok(Opened::of(&driver))
}

/// Creates what the backend needs before first use (the queues, tables, indexes and bus on
/// AWS; the folder and the migrated database on the embedded backend), leaving what exists
/// in place, and says what is ready.
pub async fn provision(settings: &BackendSettings) -> Result<Report, BackendError> {
    match settings.backend {
        BackendKind::Embedded => provision_on::<Embedded>(settings).await,
        BackendKind::Aws => provision_on::<Aws>(settings).await,
    }
}

async fn provision_on<D: Linked>(settings: &BackendSettings) -> Result<Report, BackendError> {
    let ready = D::provision(&D::settings_of(settings), settings.redelivery()).await?;
    Ok(Report(Box::new(ready)))
}

/// Migrates the stored data to this version's schema (see `seatclaimctl migrate`) and says
/// what it did. The embedded file migrates itself whenever it is opened, so there this opens it.
pub async fn migrate(settings: &BackendSettings) -> Result<Report, BackendError> {
    match settings.backend {
        BackendKind::Embedded => migrate_on::<Embedded>(settings).await,
        BackendKind::Aws => migrate_on::<Aws>(settings).await,
    }
}

async fn migrate_on<D: Linked>(settings: &BackendSettings) -> Result<Report, BackendError> {
    let migration = D::migrate(&D::settings_of(settings), settings.redelivery()).await?;
    Ok(Report(Box::new(migration)))
}

/// Writes a consistent copy of the stored data to `destination` while the services run
/// (`seatclaimctl backup`), and says what it wrote; on AWS, says how it is backed up instead.
pub fn backup(settings: &BackendSettings, destination: &Path) -> Result<BackedUp, BackendError> {
    match settings.backend {
        BackendKind::Embedded => Embedded::backup(&Embedded::settings_of(settings), destination),
        BackendKind::Aws => Aws::backup(&Aws::settings_of(settings), destination),
    }
}

/// Replaces the stored data with the backup at `source` (`seatclaimctl restore`): on the
/// embedded backend, refusing while a seatclaim process has the data folder open, and
/// re-applying the reservation events published after the backup's moment, so that no sale is
/// lost; on AWS, says how it is restored instead.
pub fn restore(settings: &BackendSettings, source: &Path) -> Result<Restored, BackendError> {
    match settings.backend {
        BackendKind::Embedded => Embedded::restore(&Embedded::settings_of(settings), source),
        BackendKind::Aws => Aws::restore(&Aws::settings_of(settings), source),
    }
}

/// What `seatclaimctl init` made ready or `seatclaimctl migrate` did, as the driver says it:
/// its `Display` is the line the command prints.
pub struct Report(Box<dyn fmt::Display + Send + Sync>);

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Report({self})")
    }
}
