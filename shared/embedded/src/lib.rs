//! The embedded backend: every port on one SQLite file, so seatclaim runs on a fresh machine with
//! no cloud account, and so the API and a separate worker process can share one data folder.
//!
//! Each port is implemented for [`EmbeddedStore`] in a file of its own; reservation events go to
//! a JSON-lines file through [`EventLog`]. The composition opens it through [`EmbeddedDriver`].

mod admissions;
mod backup;
mod candidates;
mod catalog;
mod checkpointer;
mod codes;
mod db;
mod dead_letter_queue;
mod decisions;
mod driver;
mod durable;
mod error;
mod event_log;
mod event_shapes;
mod folder_lock;
mod hold;
mod intent_queue;
mod inventory;
mod job_rows;
mod jobs;
mod line_place;
mod migrations;
mod newer_events;
mod opening;
mod opening_draw;
mod outbox;
mod queue_depth;
mod reapply;
mod receive;
mod retention;
mod settle;
mod step;
mod tallies;
mod terms;
mod waitlist;
mod writer;

use std::path::Path;
use std::sync::Arc;

use tokio::sync::Notify;

pub use backup::{backup, restore};
pub use driver::{EmbeddedDriver, EmbeddedSettings, Ready};
pub use event_log::EventLog;
pub use folder_lock::LOCK_FILE;

use db::Db;
use seatclaim_core::ports::Backend;
use seatclaim_core::ports::{BackendError, Clock, Redelivery};

/// The file that holds the database inside the data folder.
pub const DATABASE_FILE: &str = "seatclaim.sqlite3";
/// The file that receives published reservation events inside the data folder.
pub const EVENT_LOG_FILE: &str = "events.jsonl";

/// All ports on one SQLite database.
pub struct EmbeddedStore {
    db: Arc<Db>,
    clock: Arc<dyn Clock>,
    queue: Redelivery,
    /// Wakes long-polling receivers in this process as soon as an intent is enqueued.
    enqueued: Arc<Notify>,
    /// Wakes `?wait=` long polls when their job is decided.
    decisions: Arc<decisions::Decisions>,
    /// Set once [`decisions::follow`] runs (started by the first long poll: it needs the runtime).
    following: tokio::sync::OnceCell<()>,
    /// The events admissions have checked requests against, read once.
    shapes: Arc<event_shapes::EventShapes>,
}

impl EmbeddedStore {
    /// Opens (or creates) the database at `path`.
    pub fn open(
        path: &Path,
        clock: Arc<dyn Clock>,
        queue: Redelivery,
    ) -> Result<Self, BackendError> {
        Ok(Self {
            db: Arc::new(Db::open(path)?),
            clock,
            queue,
            enqueued: Arc::new(Notify::new()),
            decisions: Arc::default(),
            following: tokio::sync::OnceCell::new(),
            shapes: Arc::default(),
        })
    }
}

/// Opens the embedded backend in `data_dir`, creating the folder, the database and the event log.
pub fn open(
    data_dir: &Path,
    clock: Arc<dyn Clock>,
    queue: Redelivery,
) -> Result<Backend, BackendError> {
    std::fs::create_dir_all(data_dir).map_err(|e| {
        BackendError::permanent(format!(
            "cannot create data folder {}: {e}",
            data_dir.display()
        ))
    })?;
    let store = Arc::new(EmbeddedStore::open(
        &data_dir.join(DATABASE_FILE),
        Arc::clone(&clock),
        queue,
    )?);
    let publisher = Arc::new(EventLog::open(&data_dir.join(EVENT_LOG_FILE))?);
    Ok(Backend {
        catalog: store.clone(),
        admissions: store.clone(),
        jobs: store.clone(),
        inventory: store.clone(),
        outbox: store.clone(),
        queue: store,
        publisher,
        clock,
    })
}
