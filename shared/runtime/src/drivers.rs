//! The driver each backend kind names in this build: the backend crate's own when its Cargo
//! feature is on, or [`NotBuilt`], which answers every call with the feature to build it with.
//! So `backend.rs` matches every [`BackendKind`](crate::config::BackendKind) with a complete arm in every build, and a new
//! kind or a driver missing a part is a compile error, not a catch-all arm.

use crate::config::BackendSettings;
use seatclaim_core::ports::Driver;

/// A driver this build can be asked for, and how its settings come from the process's.
pub(crate) trait Linked: Driver {
    /// The driver's own settings, taken from the process's.
    fn settings_of(settings: &BackendSettings) -> Self::Settings;
}

/// The embedded backend's driver in this build.
#[cfg(feature = "embedded")]
pub(crate) type Embedded = seatclaim_embedded::EmbeddedDriver;
/// The embedded backend's driver in this build: not built.
#[cfg(not(feature = "embedded"))]
pub(crate) type Embedded = NotBuilt;

/// The AWS backend's driver in this build.
#[cfg(feature = "aws")]
pub(crate) type Aws = seatclaim_aws::AwsDriver;
/// The AWS backend's driver in this build: not built.
#[cfg(not(feature = "aws"))]
pub(crate) type Aws = NotBuilt;

#[cfg(feature = "embedded")]
impl Linked for seatclaim_embedded::EmbeddedDriver {
    fn settings_of(settings: &BackendSettings) -> Self::Settings {
        seatclaim_embedded::EmbeddedSettings {
            data_dir: settings.data_dir.clone(),
        }
    }
}

#[cfg(feature = "aws")]
impl Linked for seatclaim_aws::AwsDriver {
    /// The AWS settings, with the retention the process configured (the `expires_at` its writes
    /// carry).
    fn settings_of(settings: &BackendSettings) -> Self::Settings {
        seatclaim_aws::AwsSettings {
            retention: settings.retention,
            ..settings.aws.clone()
        }
    }
}

#[cfg(not(all(feature = "embedded", feature = "aws")))]
pub(crate) use not_built::NotBuilt;

/// The stand-in for a backend compiled out of this build.
#[cfg(not(all(feature = "embedded", feature = "aws")))]
mod not_built {
    use std::convert::Infallible;
    use std::path::Path;
    use std::sync::Arc;

    use super::Linked;
    use crate::config::{BackendKind, BackendSettings};
    use seatclaim_core::ports::{Backend, BackendError, BackgroundTask, Clock, Driver, Redelivery};
    use seatclaim_core::reports::{BackedUp, Restored};

    /// A backend this build does not have: it never opens (so it has no value), and every
    /// command on it fails with the Cargo feature that builds it. Its settings are its kind.
    pub(crate) struct NotBuilt(Infallible);

    impl Driver for NotBuilt {
        type Settings = BackendKind;
        type Ready = Infallible;
        type Migration = Infallible;

        async fn open(
            kind: &BackendKind,
            _: Redelivery,
            _: Arc<dyn Clock>,
        ) -> Result<Self, BackendError> {
            Err(not_built(*kind))
        }

        fn backend(&self) -> Backend {
            match self.0 {}
        }

        fn tasks(&self) -> Vec<BackgroundTask> {
            match self.0 {}
        }

        async fn provision(kind: &BackendKind, _: Redelivery) -> Result<Infallible, BackendError> {
            Err(not_built(*kind))
        }

        async fn migrate(kind: &BackendKind, _: Redelivery) -> Result<Infallible, BackendError> {
            Err(not_built(*kind))
        }

        fn backup(kind: &BackendKind, _: &Path) -> Result<BackedUp, BackendError> {
            Err(not_built(*kind))
        }

        fn restore(kind: &BackendKind, _: &Path) -> Result<Restored, BackendError> {
            Err(not_built(*kind))
        }
    }

    impl Linked for NotBuilt {
        fn settings_of(settings: &BackendSettings) -> BackendKind {
            settings.backend
        }
    }

    /// Why `kind` cannot be used: this build was made without its feature.
    fn not_built(kind: BackendKind) -> BackendError {
        BackendError::permanent(format!(
            "this build has no {} backend: build it with the Cargo feature `{}`",
            kind.as_str(),
            kind.as_str()
        ))
    }
}
