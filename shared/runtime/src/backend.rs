//! The one place that picks the adapters for a process's ports, from its settings, and the
//! operator work that depends on which backend it is (provisioning, migration, backups).

use std::sync::Arc;

use crate::config::{BackendKind, BackendSettings};
use seatclaim_core::ports::{Backend, BackendError, Clock, SystemClock};
use seatclaim_core::reports::{BackedUp, Restored};

/// Opens the backend the settings describe, on the wall clock.
pub async fn open(settings: &BackendSettings) -> Result<Backend, BackendError> {
    open_with_clock(settings, Arc::new(SystemClock)).await
}

/// Opens the backend with `clock` as "now" for every decision: tests pass a clock they move,
/// so that hold deadlines and request ages pass without sleeping.
pub async fn open_with_clock(
    settings: &BackendSettings,
    clock: Arc<dyn Clock>,
) -> Result<Backend, BackendError> {
    let backend = match settings.backend {
        #[cfg(feature = "embedded")]
        BackendKind::Embedded => seatclaim_embedded::open(
            &settings.data_dir,
            clock,
            seatclaim_core::ports::Redelivery {
                visibility_timeout: settings.visibility_timeout(),
                max_receive_count: settings.max_receive_count(),
            },
        )?,
        #[cfg(feature = "aws")]
        BackendKind::Aws => {
            let aws = crate::config::AwsSettings {
                retention: settings.retention,
                ..settings.aws.clone()
            };
            seatclaim_aws::open(&aws, settings.visibility_timeout(), clock).await?
        }
        #[allow(
            unreachable_patterns,
            reason = "reached only when a backend is compiled out"
        )]
        missing => return Err(not_built(missing)),
    };
    Ok(backend)
}

/// Creates what the backend needs before first use (the queues, tables, indexes and bus on
/// AWS; the folder and the migrated database on the embedded backend), leaving what exists
/// in place, and says what is ready.
pub async fn provision(settings: &BackendSettings) -> Result<Ready, BackendError> {
    match settings.backend {
        #[cfg(feature = "aws")]
        BackendKind::Aws => seatclaim_aws::provision_for(
            &settings.aws,
            settings.visibility_timeout(),
            settings.max_receive_count(),
        )
        .await
        .map(Ready::Aws),
        #[cfg(feature = "embedded")]
        BackendKind::Embedded => {
            open(settings).await?;
            Ok(Ready::Embedded(settings.data_dir.clone()))
        }
        #[allow(
            unreachable_patterns,
            reason = "reached only when a backend is compiled out"
        )]
        missing => Err(not_built(missing)),
    }
}

/// Migrates the stored data to this version's schema (see `seatclaimctl migrate`) and says
/// what it did. The embedded file migrates itself whenever it is opened, so there this is
/// [`provision`].
pub async fn migrate(settings: &BackendSettings) -> Result<Migration, BackendError> {
    #[cfg(feature = "aws")]
    if settings.backend == BackendKind::Aws {
        return seatclaim_aws::migrate_for(
            &settings.aws,
            settings.visibility_timeout(),
            settings.max_receive_count(),
        )
        .await
        .map(Migration::Aws);
    }
    provision(settings).await.map(Migration::Opened)
}

/// What `seatclaimctl init` made ready.
#[derive(Debug, Clone)]
pub enum Ready {
    /// The AWS resources of these names.
    #[cfg(feature = "aws")]
    Aws(seatclaim_aws::AwsNames),
    /// The embedded backend in this data folder, its database migrated.
    #[cfg(feature = "embedded")]
    Embedded(std::path::PathBuf),
}

impl std::fmt::Display for Ready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            #[cfg(feature = "aws")]
            Self::Aws(names) => write!(f, "{names}"),
            #[cfg(feature = "embedded")]
            Self::Embedded(folder) => {
                write!(f, "ready: embedded backend in {}", folder.display())
            }
            #[allow(
                unreachable_patterns,
                reason = "reached only when every backend is compiled out"
            )]
            _ => Ok(()),
        }
    }
}

/// What `seatclaimctl migrate` did.
#[derive(Debug, Clone)]
pub enum Migration {
    /// The AWS resources brought to this build's schema, and what was copied.
    #[cfg(feature = "aws")]
    Aws(seatclaim_aws::Migration),
    /// A backend that migrates itself when it opens: it was opened.
    Opened(Ready),
}

impl std::fmt::Display for Migration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            #[cfg(feature = "aws")]
            Self::Aws(migration) => write!(f, "{migration}"),
            Self::Opened(ready) => write!(f, "{ready}"),
        }
    }
}

/// What the AWS backend says to `backup` and `restore`: its tables restore from DynamoDB's
/// point-in-time recovery, which the stack turns on.
#[cfg(feature = "aws")]
const AWS_BACKUPS: &str = "the AWS backend is backed up by DynamoDB point-in-time recovery \
     (on in the stack); see \"Restoring the AWS backend\" in docs/aws-operations.md";

/// Writes a consistent copy of the embedded database to `destination` while the services
/// run (`seatclaimctl backup`), and says what it wrote.
pub fn backup(
    settings: &BackendSettings,
    destination: &std::path::Path,
) -> Result<BackedUp, BackendError> {
    let _ = destination; // read by the embedded arm only
    match settings.backend {
        #[cfg(feature = "embedded")]
        BackendKind::Embedded => seatclaim_embedded::backup(&settings.data_dir, destination),
        #[allow(
            unreachable_patterns,
            reason = "reached only when the embedded backend is compiled in"
        )]
        other => Err(no_data_folder(other)),
    }
}

/// Replaces the embedded database with the backup at `source` (`seatclaimctl restore`),
/// refusing while a seatclaim process has the data folder open, and re-applies the
/// reservation events published after the backup's moment, so that no sale is lost.
pub fn restore(
    settings: &BackendSettings,
    source: &std::path::Path,
) -> Result<Restored, BackendError> {
    let _ = source; // read by the embedded arm only
    match settings.backend {
        #[cfg(feature = "embedded")]
        BackendKind::Embedded => seatclaim_embedded::restore(&settings.data_dir, source),
        #[allow(
            unreachable_patterns,
            reason = "reached only when the embedded backend is compiled in"
        )]
        other => Err(no_data_folder(other)),
    }
}

/// Why a command on the embedded backend's data folder cannot run on `kind`.
fn no_data_folder(kind: BackendKind) -> BackendError {
    match kind {
        #[cfg(feature = "aws")]
        BackendKind::Aws => BackendError::permanent(AWS_BACKUPS),
        #[allow(
            unreachable_patterns,
            reason = "reached only when a backend is compiled out"
        )]
        missing => not_built(missing),
    }
}

fn not_built(kind: BackendKind) -> BackendError {
    BackendError::permanent(format!(
        "this build has no {} backend: build it with the Cargo feature `{}`",
        kind.as_str(),
        kind.as_str()
    ))
}
