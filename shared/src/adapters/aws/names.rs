use super::AwsSettings;

/// The names of every AWS resource the backend uses, resolved from the prefix and the overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsNames {
    /// The intent queue's name.
    pub queue: String,
    /// The dead-letter queue's name.
    pub dlq: String,
    /// Events: `event_id` -> name, hold, sections, status.
    pub events_table: String,
    /// The inventory: (`event_id`, `seat_id`) -> state, holder, deadline.
    pub seats_table: String,
    /// Jobs: `job_id` -> the buyer-visible record.
    pub jobs_table: String,
    /// Idempotency: `buyer_id#key` -> job and request fingerprint.
    pub idempotency_table: String,
    /// Outbox: recorded reservation events awaiting publication.
    pub outbox_table: String,
    /// The EventBridge bus.
    pub event_bus: String,
}

/// Index of AVAILABLE seats by `event#section`, ordered by position (sparse: only free seats).
pub const FREE_SEATS_INDEX: &str = "free-by-section";
/// Index of HELD jobs by deadline (sparse: only HELD jobs carry its key); the sweeper's work list.
pub const HELD_JOBS_INDEX: &str = "held-by-deadline";
/// Index of unpublished outbox entries in order (sparse: published entries drop out).
pub const UNPUBLISHED_INDEX: &str = "unpublished";
/// Index of an event's jobs, for the audit.
pub const JOBS_BY_EVENT_INDEX: &str = "by-event";
/// Index of a job's recorded events in order, for its history.
pub const EVENTS_BY_JOB_INDEX: &str = "by-job";

impl AwsNames {
    /// Resolves every name: the override if set, else `<prefix>-<resource>`.
    #[must_use]
    pub fn from_settings(settings: &AwsSettings) -> Self {
        let prefix = &settings.aws_prefix;
        let name = |over: &Option<String>, suffix: &str| {
            over.clone().unwrap_or_else(|| format!("{prefix}-{suffix}"))
        };
        Self {
            queue: format!("{prefix}-intents"),
            dlq: format!("{prefix}-intents-dlq"),
            events_table: name(&settings.events_table, "events"),
            seats_table: name(&settings.seats_table, "seats"),
            jobs_table: name(&settings.jobs_table, "jobs"),
            idempotency_table: name(&settings.idempotency_table, "idempotency"),
            outbox_table: name(&settings.outbox_table, "outbox"),
            event_bus: name(&settings.event_bus, "reservations"),
        }
    }
}
