//! The one trait a backend crate implements for the composition: how the backend opens, how its
//! resources are made and migrated, how it is backed up and restored, and which background work
//! it needs while it is open. The runtime picks a driver per backend kind and calls nothing else,
//! so a backend that lacks one of these parts does not compile, and none of them can be skipped
//! by a catch-all arm.

use std::fmt;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{Backend, BackendError, Clock, Redelivery};
use crate::reports::{BackedUp, Restored};

/// A backend: opened, it gives the ports and its background tasks; closed, it provisions,
/// migrates, backs up and restores what its settings name. `Self` is the opened backend.
///
/// Every method is required: a new backend is a compile error until each part exists, and one
/// that has nothing to do for a part says so in its own words (AWS's backups are DynamoDB's
/// point-in-time recovery; the embedded file migrates itself when it opens).
pub trait Driver: Sized + Send + Sync + 'static {
    /// The backend's own settings (where its data lives); the queue's redelivery, which every
    /// backend honours, comes beside them as a [`Redelivery`].
    type Settings: Send + Sync;
    /// What [`Driver::provision`] made ready: its `Display` is the line `seatclaimctl init` prints.
    type Ready: fmt::Display + Send + Sync + 'static;
    /// What [`Driver::migrate`] did: its `Display` is the line `seatclaimctl migrate` prints.
    type Migration: fmt::Display + Send + Sync + 'static;

    /// Opens the backend, with `clock` as "now" for every decision (tests pass one they move)
    /// and its intent queue redelivering as `queue` says.
    fn open(
        settings: &Self::Settings,
        queue: Redelivery,
        clock: Arc<dyn Clock>,
    ) -> impl Future<Output = Result<Self, BackendError>> + Send;

    /// The opened backend's ports.
    fn backend(&self) -> Backend;

    /// The background work the opened backend needs while its ports are in use, which the
    /// runtime's loops run beside their own and stop at shutdown (none is started by `open`).
    fn tasks(&self) -> Vec<BackgroundTask>;

    /// Creates what the backend needs before first use, leaving what exists in place
    /// (`seatclaimctl init`).
    fn provision(
        settings: &Self::Settings,
        queue: Redelivery,
    ) -> impl Future<Output = Result<Self::Ready, BackendError>> + Send;

    /// Brings the stored data to this build's schema (`seatclaimctl migrate`); safe to repeat.
    fn migrate(
        settings: &Self::Settings,
        queue: Redelivery,
    ) -> impl Future<Output = Result<Self::Migration, BackendError>> + Send;

    /// Writes a consistent copy of the stored data to `destination` while the services run
    /// (`seatclaimctl backup`), or says how this backend is backed up instead.
    ///
    /// # Errors
    /// When the copy fails, or the backend is not backed up this way.
    fn backup(settings: &Self::Settings, destination: &Path) -> Result<BackedUp, BackendError>;

    /// Replaces the stored data with the backup at `source` (`seatclaimctl restore`), or says
    /// how this backend is restored instead.
    ///
    /// # Errors
    /// When the restore fails or is refused, or the backend is not restored this way.
    fn restore(settings: &Self::Settings, source: &Path) -> Result<Restored, BackendError>;
}

/// A backend as a process opened it: its ports, and the background tasks the process runs
/// while it uses them.
pub struct Opened {
    /// The ports.
    pub backend: Backend,
    /// The backend's own background work, not started yet.
    pub tasks: Vec<BackgroundTask>,
}

impl Opened {
    /// The ports and tasks of an opened `driver`.
    pub fn of(driver: &impl Driver) -> Self {
        Self {
            backend: driver.backend(),
            tasks: driver.tasks(),
        }
    }
}

/// The future a background task runs.
type TaskFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// One named piece of a backend's background work (a queue it serves, counts it flushes): a
/// future that runs until the token it is given is cancelled, then finishes what it holds and
/// returns. Named, so that a task that ends abnormally is logged by what it was.
pub struct BackgroundTask {
    name: &'static str,
    run: Box<dyn FnOnce(CancellationToken) -> TaskFuture + Send>,
}

impl BackgroundTask {
    /// The task `name` that `run` starts, given the token that stops it.
    pub fn new<F, Fut>(name: &'static str, run: F) -> Self
    where
        F: FnOnce(CancellationToken) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Self {
            name,
            run: Box::new(move |stop| Box::pin(run(stop))),
        }
    }

    /// What the task does, for logs.
    #[must_use]
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The task's work, ending once `stop` is cancelled and what it holds is done.
    pub fn run(self, stop: CancellationToken) -> impl Future<Output = ()> + Send {
        (self.run)(stop)
    }
}

impl fmt::Debug for BackgroundTask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BackgroundTask")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}
