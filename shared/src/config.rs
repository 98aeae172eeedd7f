//! Typed configuration, read once at start-up from `SEATCLAIM_*` environment variables (or the
//! matching command-line flags). Every default makes a local embedded run work with nothing set.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

/// Which adapters serve the ports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendKind {
    /// One SQLite file in `SEATCLAIM_DATA_DIR`: no cloud account needed.
    Embedded,
    /// SQS, DynamoDB and EventBridge, reached through the standard AWS configuration chain.
    Aws,
}

/// Where the backend lives and how its queue behaves; needed by every process.
#[derive(Debug, Clone, Args)]
pub struct BackendSettings {
    /// Which backend to use.
    #[arg(long, env = "SEATCLAIM_BACKEND", value_enum, default_value_t = BackendKind::Embedded)]
    pub backend: BackendKind,

    /// Folder for the embedded backend's database and event log.
    #[arg(long, env = "SEATCLAIM_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Seconds a received intent stays invisible before it is delivered again; must exceed the
    /// longest claim, or a slow claim is processed twice (harmlessly, but wastefully).
    #[arg(long, env = "SEATCLAIM_VISIBILITY_TIMEOUT_SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..=43_200))]
    pub visibility_timeout_secs: u64,

    /// Attempts at an intent before it is dead-lettered and its job FAILED.
    #[arg(long, env = "SEATCLAIM_MAX_ATTEMPTS", default_value_t = 5,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_attempts: u32,

    /// AWS resource names, used when `backend` is `aws`.
    #[command(flatten)]
    pub aws: AwsSettings,

    /// Fault injection, for the fault tests only.
    #[command(flatten)]
    pub faults: crate::adapters::faults::FaultSettings,
}

/// Names of the AWS resources. Each derives from the prefix unless set on its own; credentials,
/// region and endpoint come from the standard AWS chain (`AWS_REGION`, `AWS_ENDPOINT_URL`, ...).
#[derive(Debug, Clone, Default, Args)]
pub struct AwsSettings {
    /// Prefix of every resource name (`<prefix>-intents`, `<prefix>-jobs`, ...).
    #[arg(long, env = "SEATCLAIM_AWS_PREFIX", default_value = "seatclaim")]
    pub aws_prefix: String,
    /// The intent queue's URL (default: looked up by the name `<prefix>-intents`).
    #[arg(long, env = "SEATCLAIM_QUEUE_URL")]
    pub queue_url: Option<String>,
    /// The dead-letter queue's URL (default: looked up by the name `<prefix>-intents-dlq`).
    #[arg(long, env = "SEATCLAIM_DLQ_URL")]
    pub dlq_url: Option<String>,
    /// Events table (default `<prefix>-events`).
    #[arg(long, env = "SEATCLAIM_EVENTS_TABLE")]
    pub events_table: Option<String>,
    /// Seats (inventory) table (default `<prefix>-seats`).
    #[arg(long, env = "SEATCLAIM_SEATS_TABLE")]
    pub seats_table: Option<String>,
    /// Jobs table (default `<prefix>-jobs`).
    #[arg(long, env = "SEATCLAIM_JOBS_TABLE")]
    pub jobs_table: Option<String>,
    /// Idempotency-key table (default `<prefix>-idempotency`).
    #[arg(long, env = "SEATCLAIM_IDEMPOTENCY_TABLE")]
    pub idempotency_table: Option<String>,
    /// Outbox table (default `<prefix>-outbox`).
    #[arg(long, env = "SEATCLAIM_OUTBOX_TABLE")]
    pub outbox_table: Option<String>,
    /// EventBridge bus for reservation events (default `<prefix>-reservations`).
    #[arg(long, env = "SEATCLAIM_EVENT_BUS")]
    pub event_bus: Option<String>,
    /// How long an admission's SQS message waits for others to fill a `SendMessageBatch`, in
    /// milliseconds (default 10): the admission latency paid for up to ten times fewer send calls.
    #[arg(long, env = "SEATCLAIM_SQS_SEND_LINGER_MS")]
    pub sqs_send_linger_ms: Option<u64>,
}

impl AwsSettings {
    /// See [`AwsSettings::sqs_send_linger_ms`].
    #[must_use]
    pub fn send_linger(&self) -> std::time::Duration {
        const DEFAULT_MS: u64 = 10;
        std::time::Duration::from_millis(self.sqs_send_linger_ms.unwrap_or(DEFAULT_MS))
    }
}

impl BackendSettings {
    /// Settings for a data folder with every other value at its default.
    #[must_use]
    pub fn in_folder(data_dir: PathBuf) -> Self {
        Self {
            backend: BackendKind::Embedded,
            data_dir,
            visibility_timeout_secs: 30,
            max_attempts: 5,
            aws: AwsSettings::default(),
            faults: crate::adapters::faults::FaultSettings::default(),
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
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable, for a terminal.
    Text,
    /// One JSON object per line, for CloudWatch and other collectors.
    Json,
}

/// Logging settings shared by every binary.
#[derive(Debug, Clone, Args)]
pub struct TelemetrySettings {
    /// Log line format. The filter comes from `RUST_LOG` (default `info`).
    #[arg(long, env = "SEATCLAIM_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}
