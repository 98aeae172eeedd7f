//! Typed configuration of the backend and of logging, as plain values: the binaries read them
//! from `SEATCLAIM_*` variables and flags (with clap, at their edge) and hand them here, so no
//! adapter depends on how settings are parsed. Every default makes a local embedded run work.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

#[cfg(feature = "aws")]
pub use seatclaim_aws::{AwsSettings, Settlements};

/// Which adapters serve the ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// One SQLite file in `SEATCLAIM_DATA_DIR`: no cloud account needed.
    Embedded,
    /// SQS, DynamoDB and EventBridge, reached through the standard AWS configuration chain.
    Aws,
}

impl BackendKind {
    /// The spelling `SEATCLAIM_BACKEND` takes.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Embedded => "embedded",
            Self::Aws => "aws",
        }
    }
}

impl FromStr for BackendKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [Self::Embedded, Self::Aws]
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .ok_or_else(|| format!("{text:?} is not a backend: use embedded or aws"))
    }
}

/// Where the backend lives and how its queue behaves; needed by every process.
#[derive(Debug, Clone)]
pub struct BackendSettings {
    /// Which backend to use.
    pub backend: BackendKind,
    /// Folder for the embedded backend's database and event log.
    pub data_dir: PathBuf,
    /// Seconds a received intent stays invisible before it is delivered again; must exceed the
    /// longest claim, or a slow claim is processed twice (harmlessly, but wastefully).
    pub visibility_timeout_secs: u64,
    /// Attempts at an intent before it is dead-lettered and its job FAILED.
    pub max_attempts: u32,
    /// How long decided jobs, their keys and their history are kept.
    pub retention: seatclaim_core::domain::Retention,
    /// AWS resource names, used when `backend` is `aws`.
    #[cfg(feature = "aws")]
    pub aws: AwsSettings,
}

/// How long a received intent stays hidden before it is delivered again, unless configured.
pub const DEFAULT_VISIBILITY_TIMEOUT_SECS: u64 = 30;
/// Attempts at an intent before it is dead-lettered, unless configured.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

impl BackendSettings {
    /// Settings for a data folder with every other value at its default.
    #[must_use]
    pub fn in_folder(data_dir: PathBuf) -> Self {
        Self {
            backend: BackendKind::Embedded,
            data_dir,
            visibility_timeout_secs: DEFAULT_VISIBILITY_TIMEOUT_SECS,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            retention: seatclaim_core::domain::Retention::default(),
            #[cfg(feature = "aws")]
            aws: AwsSettings::default(),
        }
    }

    /// The visibility timeout as a duration.
    #[must_use]
    pub fn visibility_timeout(&self) -> Duration {
        Duration::from_secs(self.visibility_timeout_secs)
    }

    /// The queue's redrive limit: one receive more than the worker's attempts, so the worker sees
    /// the message once past its limit and fails the job itself (a crash on every attempt would
    /// otherwise leave it PENDING); the queue's own redrive is the backstop behind that.
    #[must_use]
    pub fn max_receive_count(&self) -> u32 {
        self.max_attempts.saturating_add(1)
    }

    /// How the backend's intent queue redelivers: what every driver opens and provisions with.
    #[must_use]
    pub fn redelivery(&self) -> seatclaim_core::ports::Redelivery {
        seatclaim_core::ports::Redelivery {
            visibility_timeout: self.visibility_timeout(),
            max_receive_count: self.max_receive_count(),
        }
    }
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable, for a terminal.
    Text,
    /// One JSON object per line, for CloudWatch and other collectors.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            _ => Err(format!("{text:?} is not a log format: use text or json")),
        }
    }
}
