//! The AWS backend's own settings: resource names and the send linger.

use std::time::Duration;

/// Names of the AWS resources. Each derives from the prefix unless set on its own; credentials,
/// region and endpoint come from the standard AWS chain (`AWS_REGION`, `AWS_ENDPOINT_URL`, ...).
#[derive(Debug, Clone)]
pub struct AwsSettings {
    /// Prefix of every resource name (`<prefix>-intents`, `<prefix>-jobs`, ...).
    pub aws_prefix: String,
    /// The intent queue's URL (default: looked up by the name `<prefix>-intents`).
    pub queue_url: Option<String>,
    /// The dead-letter queue's URL (default: looked up by the name `<prefix>-intents-dlq`).
    pub dlq_url: Option<String>,
    /// Events table (default `<prefix>-events`).
    pub events_table: Option<String>,
    /// Seats (inventory) table (default `<prefix>-inventory`).
    pub seats_table: Option<String>,
    /// Jobs table (default `<prefix>-reservation-jobs`).
    pub jobs_table: Option<String>,
    /// Schema version 2's idempotency-key table, which `migrate` copies keys from (default
    /// `<prefix>-idempotency`).
    pub idempotency_table: Option<String>,
    /// Outbox table (default `<prefix>-event-outbox`).
    pub outbox_table: Option<String>,
    /// EventBridge bus for reservation events (default `<prefix>-reservations`).
    pub event_bus: Option<String>,
    /// How long an admission's SQS message waits for others to fill a `SendMessageBatch`, in
    /// milliseconds (default 10): the admission latency paid for up to ten times fewer send calls.
    pub sqs_send_linger_ms: Option<u64>,
    /// Shards of the `held-by-deadline` index (default 128): new holds spread over them and the
    /// sweeper reads them all. Raise it for more holds per second; never lower it while holds
    /// are live (the sweeper would no longer see those in the shards above the new count).
    pub held_shards: Option<u32>,
    /// How long decided jobs and published events are kept: the TTL (`expires_at`) their
    /// writes carry. `backend::open` sets it from `BackendSettings::retention`.
    pub retention: seatclaim_core::domain::Retention,
    /// Where this process's confirms, cancels and extensions are written: the binary that opens
    /// the backend says (the API sends them to the workers, whose role alone writes seats).
    pub settlements: Settlements,
}

/// Where a process settles holds (confirm, cancel, extend) on AWS.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Settlements {
    /// Here, with this process's credentials (`seatclaimctl`, tools).
    #[default]
    Here,
    /// On a worker: sent on the settlements queue, the answer awaited (the API, whose task role
    /// may not write seat items).
    SentToWorkers,
    /// Here, and this process also serves the settlements the API sends (the worker).
    ServedHere,
}

/// The prefix every resource name starts with unless configured.
pub const DEFAULT_PREFIX: &str = "seatclaim";

impl Default for AwsSettings {
    fn default() -> Self {
        Self {
            aws_prefix: DEFAULT_PREFIX.to_owned(),
            queue_url: None,
            dlq_url: None,
            events_table: None,
            seats_table: None,
            jobs_table: None,
            idempotency_table: None,
            outbox_table: None,
            event_bus: None,
            sqs_send_linger_ms: None,
            held_shards: None,
            retention: seatclaim_core::domain::Retention::default(),
            settlements: Settlements::Here,
        }
    }
}

impl AwsSettings {
    /// See [`AwsSettings::sqs_send_linger_ms`].
    #[must_use]
    pub fn send_linger(&self) -> Duration {
        const DEFAULT_MS: u64 = 10;
        Duration::from_millis(self.sqs_send_linger_ms.unwrap_or(DEFAULT_MS))
    }

    /// See [`AwsSettings::held_shards`].
    #[must_use]
    pub fn held_shards(&self) -> u32 {
        self.held_shards
            .unwrap_or(crate::dynamo::keys::DEFAULT_HELD_SHARDS)
            .clamp(1, 1_024)
    }
}
