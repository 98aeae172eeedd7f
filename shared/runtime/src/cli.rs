//! The binaries' edge: the `SEATCLAIM_*` variables and flags every process shares, parsed with
//! clap and turned into `shared`'s plain settings, and the hook through which a caller of the
//! API's or the worker's process adds settings of its own and wraps the backend it opens. The
//! adapters never see clap.

use std::path::PathBuf;

use crate::config::{BackendKind, BackendSettings, LogFormat};
use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use seatclaim_core::ports::Backend;

/// Where the backend lives and how its queue behaves; needed by every process.
#[derive(Debug, Clone, Args)]
pub struct BackendArgs {
    /// Which backend to use.
    #[arg(long, env = "SEATCLAIM_BACKEND", default_value = "embedded",
          value_parser = PossibleValuesParser::new(["embedded", "aws"]).try_map(|s| s.parse::<BackendKind>()))]
    pub backend: BackendKind,

    /// Folder for the embedded backend's database and event log.
    #[arg(long, env = "SEATCLAIM_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,

    /// Seconds a received intent stays invisible before it is delivered again; must exceed the
    /// longest claim, or a slow claim is processed twice (harmlessly, but wastefully).
    #[arg(long, env = "SEATCLAIM_VISIBILITY_TIMEOUT_SECS",
          default_value_t = crate::config::DEFAULT_VISIBILITY_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u64).range(1..=43_200))]
    pub visibility_timeout_secs: u64,

    /// Attempts at an intent before it is dead-lettered and its job FAILED.
    #[arg(long, env = "SEATCLAIM_MAX_ATTEMPTS",
          default_value_t = crate::config::DEFAULT_MAX_ATTEMPTS,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_attempts: u32,

    /// Days a decided job (REJECTED, FAILED, EXPIRED, CANCELLED), its idempotency key and its
    /// published history are kept after the decision: 14 (the dead-letter queue's retention,
    /// which a replay needs) to 3650.
    #[arg(long, env = "SEATCLAIM_RETENTION_DAYS", default_value_t = seatclaim_core::domain::DEFAULT_RETENTION_DAYS,
          value_parser = clap::value_parser!(u32).range(i64::from(seatclaim_core::domain::MIN_RETENTION_DAYS)..=3650))]
    pub retention_days: u32,

    /// AWS resource names, used when `backend` is `aws`.
    #[cfg(feature = "aws")]
    #[command(flatten)]
    pub aws: AwsArgs,
}

impl BackendArgs {
    /// The settings these arguments describe.
    #[must_use]
    pub fn settings(&self) -> BackendSettings {
        let settings = BackendSettings {
            backend: self.backend,
            visibility_timeout_secs: self.visibility_timeout_secs,
            max_attempts: self.max_attempts,
            // The parser's range is the domain's, so this never falls back.
            retention: seatclaim_core::domain::Retention::days(self.retention_days)
                .unwrap_or_default(),
            ..BackendSettings::in_folder(self.data_dir.clone())
        };
        #[cfg(feature = "aws")]
        let settings = BackendSettings {
            aws: self.aws.settings(),
            ..settings
        };
        settings
    }
}

/// The long-running services, each opening the backend in its own role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// `seatclaim-api`: on AWS its role writes no seats, so it sends settlements to the workers.
    Api,
    /// `seatclaim-worker`: on AWS it settles the holds the API is asked to settle.
    Worker,
}

impl BackendArgs {
    /// The settings `service` opens its backend with: these arguments', with settlements made
    /// where the service's role allows on AWS.
    #[must_use]
    pub fn settings_of(&self, service: Service) -> BackendSettings {
        let settings = self.settings();
        #[cfg(feature = "aws")]
        let settings = BackendSettings {
            aws: crate::config::AwsSettings {
                settlements: match service {
                    Service::Api => crate::config::Settlements::SentToWorkers,
                    Service::Worker => crate::config::Settlements::ServedHere,
                },
                ..settings.aws
            },
            ..settings
        };
        #[cfg(not(feature = "aws"))]
        let _ = service;
        settings
    }
}

/// Names of the AWS resources. Each derives from the prefix unless set on its own; credentials,
/// region and endpoint come from the standard AWS chain (`AWS_REGION`, `AWS_ENDPOINT_URL`, ...).
#[cfg(feature = "aws")]
#[derive(Debug, Clone, Args)]
pub struct AwsArgs {
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
    /// Seats (inventory) table (default `<prefix>-inventory`).
    #[arg(long, env = "SEATCLAIM_SEATS_TABLE")]
    pub seats_table: Option<String>,
    /// Jobs table (default `<prefix>-reservation-jobs`).
    #[arg(long, env = "SEATCLAIM_JOBS_TABLE")]
    pub jobs_table: Option<String>,
    /// Schema version 2's idempotency-key table, which `migrate` copies keys from (default
    /// `<prefix>-idempotency`).
    #[arg(long, env = "SEATCLAIM_IDEMPOTENCY_TABLE")]
    pub idempotency_table: Option<String>,
    /// Outbox table (default `<prefix>-event-outbox`).
    #[arg(long, env = "SEATCLAIM_OUTBOX_TABLE")]
    pub outbox_table: Option<String>,
    /// EventBridge bus for reservation events (default `<prefix>-reservations`).
    #[arg(long, env = "SEATCLAIM_EVENT_BUS")]
    pub event_bus: Option<String>,
    /// How long an admission's SQS message waits for others to fill a `SendMessageBatch`, in
    /// milliseconds (default 10): the admission latency paid for up to ten times fewer send calls.
    #[arg(long, env = "SEATCLAIM_SQS_SEND_LINGER_MS")]
    pub sqs_send_linger_ms: Option<u64>,
    /// Shards of the held-jobs index (default 128): new holds spread over them and the sweeper
    /// reads them all. Raise it for more holds per second; never lower it while holds are live.
    #[arg(long, env = "SEATCLAIM_HELD_SHARDS", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub held_shards: Option<u32>,
}

#[cfg(feature = "aws")]
impl AwsArgs {
    fn settings(&self) -> crate::config::AwsSettings {
        crate::config::AwsSettings {
            aws_prefix: self.aws_prefix.clone(),
            queue_url: self.queue_url.clone(),
            dlq_url: self.dlq_url.clone(),
            events_table: self.events_table.clone(),
            seats_table: self.seats_table.clone(),
            jobs_table: self.jobs_table.clone(),
            idempotency_table: self.idempotency_table.clone(),
            outbox_table: self.outbox_table.clone(),
            event_bus: self.event_bus.clone(),
            sqs_send_linger_ms: self.sqs_send_linger_ms,
            held_shards: self.held_shards,
            // `backend::open` puts the configured retention in.
            retention: seatclaim_core::domain::Retention::default(),
            // The binary that opens the backend says (the API and the worker set theirs).
            settlements: crate::config::Settlements::Here,
        }
    }
}

/// What an event created without terms of its own gets; read by `POST /v1/events` and by
/// `seatclaimctl events create` alike, so one body makes the same event either way.
#[derive(Debug, Clone, Copy, Args)]
pub struct EventDefaultsArgs {
    /// The per-buyer seat limit of an event created without `max_seats_per_buyer`: 1 to 100,
    /// or 0 for no limit. A sale is limited unless its organiser says otherwise.
    #[arg(long, env = "SEATCLAIM_DEFAULT_MAX_SEATS_PER_BUYER",
          default_value_t = seatclaim_core::domain::DEFAULT_SEAT_LIMIT,
          value_parser = clap::value_parser!(u32).range(0..=i64::from(seatclaim_core::domain::MAX_SEAT_LIMIT)))]
    pub default_max_seats_per_buyer: u32,
}

impl EventDefaultsArgs {
    /// The default limit (`None`: no limit). Clap's range keeps the setting valid, so a value
    /// `SeatLimit::optional` refused cannot arrive.
    #[must_use]
    pub fn seat_limit(&self) -> Option<seatclaim_core::domain::SeatLimit> {
        seatclaim_core::domain::SeatLimit::optional(self.default_max_seats_per_buyer)
            .ok()
            .flatten()
    }
}

/// Logging settings shared by every binary.
#[derive(Debug, Clone, Args)]
pub struct TelemetryArgs {
    /// Log line format. The filter comes from `RUST_LOG` (default `info`).
    #[arg(long, env = "SEATCLAIM_LOG_FORMAT", default_value = "text",
          value_parser = PossibleValuesParser::new(["text", "json"]).try_map(|s| s.parse::<LogFormat>()))]
    pub log_format: LogFormat,
}

/// Settings a process's caller adds to the shared ones, and what they do to the backend the
/// process opens. The shipped binaries run with [`AsOpened`]; the test crate's own binaries run
/// the same processes with fault injection around the backend, which is how fault injection
/// stays out of every crate a shipped binary links.
pub trait BackendHook: Args + std::fmt::Debug + Send + Sync + 'static {
    /// The backend the process runs on, made from the one its settings opened.
    fn wrap(&self, backend: Backend) -> Backend;
}

/// No settings of its own, and the backend exactly as opened: the shipped binaries' hook.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct AsOpened {}

impl BackendHook for AsOpened {
    fn wrap(&self, backend: Backend) -> Backend {
        backend
    }
}
