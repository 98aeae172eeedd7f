use crate::AwsSettings;

/// The names of every AWS resource the backend uses, resolved from the prefix and the overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwsNames {
    /// The intent queue's name.
    pub queue: String,
    /// The dead-letter queue's name.
    pub dlq: String,
    /// The queue of settlements the API sends to the workers (`queue/settlements.rs`).
    pub settlements_queue: String,
    /// Events: `event_id` -> name, hold, sections, status.
    pub events_table: String,
    /// The inventory: `seat_key` (`event_id#seat_id`) -> state, holder, deadline.
    pub seats_table: String,
    /// Jobs: `job_id` -> the buyer-visible record (`<prefix>-reservation-jobs`).
    pub jobs_table: String,
    /// Schema version 2's idempotency keys (`buyer_id#key` -> job and request fingerprint),
    /// which `seatclaimctl migrate` copies into the jobs table as aliases; version 3 keeps a
    /// key's record in its job item.
    pub idempotency_table: String,
    /// Outbox: (`job_id`, `id`) -> a recorded reservation event, and the relay's shard leases.
    pub outbox_table: String,
    /// The EventBridge bus.
    pub event_bus: String,
}

/// Index of AVAILABLE seats by `event#section` (or `event#section#shard` in a large section),
/// in scrambled order (`free_rank`; sparse: only free seats).
pub const FREE_SEATS_INDEX: &str = "free-by-section";
/// Index of an event's seats by block (`event#block`, a thousand positions each), ordered by
/// position: the seat map, the audit and the admission cache read it block by block.
pub const SEATS_BY_BLOCK_INDEX: &str = "by-block";
/// Index of HELD jobs by deadline over `held#shard` keys (sparse: only HELD jobs carry its key);
/// the sweeper's work list.
pub const HELD_JOBS_INDEX: &str = "held-by-deadline";
/// Index of unpublished outbox entries in order over `pending#shard` keys (sparse: published
/// entries drop out); each shard is the unit a relay leases.
pub const UNPUBLISHED_INDEX: &str = "unpublished";
/// Schema version 2's index of an event's jobs, which version 3 no longer writes or reads: every
/// job write paid for its entry, for the audit alone, which now scans the jobs table.
/// `seatclaimctl migrate` reports it if it is still there.
pub const UNUSED_JOBS_BY_EVENT_INDEX: &str = "by-event-shard";

/// The tables of schema version 1 that version 2 replaced, by the prefix: what
/// `seatclaimctl migrate` copies from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyNames {
    /// Seats keyed by (`event_id`, `seat_id`).
    pub seats_table: String,
    /// Outbox entries keyed by `id`.
    pub outbox_table: String,
    /// Jobs indexed by `event_id` alone.
    pub jobs_table: String,
}

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
            settlements_queue: format!("{prefix}-settlements"),
            events_table: name(&settings.events_table, "events"),
            seats_table: name(&settings.seats_table, "inventory"),
            jobs_table: name(&settings.jobs_table, "reservation-jobs"),
            idempotency_table: name(&settings.idempotency_table, "idempotency"),
            outbox_table: name(&settings.outbox_table, "event-outbox"),
            event_bus: name(&settings.event_bus, "reservations"),
        }
    }
}

impl LegacyNames {
    /// The version 1 names of `prefix`.
    #[must_use]
    pub fn for_prefix(prefix: &str) -> Self {
        Self {
            seats_table: format!("{prefix}-seats"),
            outbox_table: format!("{prefix}-outbox"),
            jobs_table: format!("{prefix}-jobs"),
        }
    }
}

/// What `seatclaimctl init` says it made ready.
impl std::fmt::Display for AwsNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ready: queues {} and {}, tables {}, {}, {}, {}, bus {}",
            self.queue,
            self.dlq,
            self.events_table,
            self.seats_table,
            self.jobs_table,
            self.outbox_table,
            self.event_bus
        )
    }
}
