//! The AWS backend: SQS for the intent queue, DynamoDB for the catalog, inventory, jobs (each
//! job item is also its idempotency key's record) and outbox, EventBridge for reservation events.
//! Table design: `docs/aws-resources.md` ("DynamoDB tables") and `setup/names.rs`.
//!
//! Every decision is a DynamoDB condition: a hold is one `TransactWriteItems` that moves the
//! seats (each conditioned on being AVAILABLE or lapsed), moves the job (conditioned on PENDING)
//! and records the outbox event, so a lost race or a redelivery can never hold a seat twice. A
//! rejection is the job's conditional update alone; its event is published by the worker and
//! recorded after it (`outbox/rejections.rs`).
//!
//! The crate by subject, one folder each (every folder's `mod.rs` lists its files):
//!
//! | folder | what it holds |
//! |---|---|
//! | `commit/` | the core's optimistic step's port: the reads a claim, a settlement and a hand-out decide on, and each decision's plan run as one transaction |
//! | `seats/` | reading seats for a claim, choosing blocks, the per-buyer seat count, the inventory port |
//! | `line/` | the waitlist: its places, reading and closing it, whether a section has one, queue positions |
//! | `opening/` | a sale's pre-queue, each process's view of the openings, the draw and release |
//! | `queue/` | SQS: the intent queue, batched sends, depth, the dead-letter queue, settlements sent to the workers |
//! | `jobs/` | admission and the job item every transition writes |
//! | `outbox/` | reservation events: the outbox records, the relay's shard leases, rejections, EventBridge |
//! | `payments.rs` | a sale found by its payment |
//! | `events/` | the catalog: events, their seat maps, the cache of their terms, section capacities |
//! | `dynamo/` | the plumbing: attribute codecs, the transaction helper, errors, keys and shard counts |
//! | `setup/` | resource names, settings, provisioning and migrations |
//! | `driver.rs` | the driver the runtime composes: opening, provisioning, migrating, backups, and the background tasks (line counts, settlements) the runtime's loops run |
//! | `emulator.rs` | test support only (feature `emulator`): the local emulators found, fresh resource names, provisioning |
//!
//! [`DynamoStore`] below is the state they share; each folder adds its part of its methods.

mod commit;
mod driver;
mod dynamo;
mod events;
mod jobs;
mod line;
mod opening;
mod outbox;
mod payments;
mod queue;
mod seats;
mod setup;

#[cfg(feature = "emulator")]
pub mod emulator;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use aws_config::BehaviorVersion;

pub use driver::{AwsDriver, open_with};
pub use dynamo::keys::{DEFAULT_HELD_SHARDS, PREQUEUE_SHARDS};
pub use opening::release::{TICKET_WRITES, WINDOW_BATCHES};
pub use setup::migrate::{Migrated, Migration, SCHEMA_VERSION, migrate, migrate_for};
pub use setup::names::{
    AwsNames, FREE_SEATS_INDEX, HELD_JOBS_INDEX, LegacyNames, SEATS_BY_BLOCK_INDEX,
    UNPUBLISHED_INDEX, UNUSED_JOBS_BY_EVENT_INDEX,
};
pub use setup::provision::{KeyAttribute, TableSpec, provision, table_specs};
pub use setup::settings::{AwsSettings, Settlements};

use jiff::SignedDuration;

use queue::sqs::SqsQueue;
use seatclaim_core::domain::{
    Best, HoldExtension, Prices, SaleTerms, SeatId, SeatLimit, SectionCapacity, Waitlist,
};
use seatclaim_core::ports::{BackendError, Clock};

/// What the store remembers of an event: events never change once created (but for the
/// waitlist's closing), so this is cached.
#[derive(Debug, Clone)]
struct EventMeta {
    hold_ms: i64,
    /// The per-buyer seat limit, if the event has one (`seat_counts.rs`).
    seat_limit: Option<SeatLimit>,
    /// What its seats cost, which fixes a hold's amount due.
    prices: Arc<Prices>,
    /// How its holds may be extended.
    extension: HoldExtension,
    /// When its sale starts, if it announced a start (`prequeue.rs`, `opening/state.rs`).
    opens_at: Option<jiff::Timestamp>,
    /// Whether its section requests wait in line (`waitlist.rs`); the one field that changes,
    /// when an operator closes the waitlist, which a process that cached it learns from the
    /// line's own closed marker.
    waitlist: Waitlist,
    sections: Vec<String>,
    /// What each section can ever serve one request (`capacity.rs`; empty for events created
    /// before it was recorded).
    capacities: HashMap<String, SectionCapacity>,
    /// Free-list shards of each section with more than one (see `keys::free_shard_count`).
    free_shards: HashMap<String, u32>,
    /// How many seats the event has, which says how many blocks its seat map reads.
    seat_count: usize,
    /// Which seats it prefers (`blocks.rs`).
    best: Best,
    /// Every seat id of the event, so admission checks named seats without reading them: an
    /// event's seats never change once it is READY (200,000 ids fit in a few MiB). Loaded on the
    /// first exact-seat admission only: claims and the seat map never need it.
    seat_ids: Arc<tokio::sync::OnceCell<HashSet<SeatId>>>,
    /// Its sales channels (`docs/presales.md`).
    channels: Arc<seatclaim_core::domain::Channels>,
}

impl EventMeta {
    /// The terms the event's claims are decided under.
    fn terms(&self) -> SaleTerms {
        SaleTerms {
            hold: SignedDuration::from_millis(self.hold_ms),
            limit: self.seat_limit,
            prices: Arc::clone(&self.prices),
            extension: self.extension,
            waitlist: self.waitlist,
            opens_at: self.opens_at,
            best: self.best,
            channels: Arc::clone(&self.channels),
        }
    }
}

/// The DynamoDB-backed ports: the clients and the tables' names, this process's cache of the
/// events' terms, the settings its writes follow, and what the process keeps of its own.
pub struct DynamoStore {
    db: aws_sdk_dynamodb::Client,
    names: AwsNames,
    queue: Arc<SqsQueue>,
    clock: Arc<dyn Clock>,
    events: events::event_cache::EventCache<EventMeta>,
    settings: Kept,
    process: Process,
}

/// The settings a store's writes follow, from [`AwsSettings`].
struct Kept {
    /// `held-by-deadline` shards new holds spread over, and the sweeper reads.
    held_shards: u32,
    /// How long decided jobs and published events are kept (the `expires_at` TTL they carry).
    retention: seatclaim_core::domain::Retention,
    /// Where this process settles holds (`queue/settlements.rs`).
    settlements: Settlements,
}

/// What one process keeps beside the tables: its identity, its shares of the outbox and the
/// lines, and the claims and openings under way in it.
#[derive(Default)]
struct Process {
    /// The owner named in the leases it takes (outbox shards, an opening). One relay loop per
    /// store (the worker runs one per process).
    id: String,
    /// The last outbox id it handed out (`outbox/records.rs`).
    outbox_sequence: AtomicU64,
    /// The outbox shards it leases now, released once their entries are marked.
    leases: Mutex<HashSet<u32>>,
    /// Its counts of each sale's line (`line/counts.rs`).
    lines: line::counts::LineCounts,
    /// The openings it knows of (`opening/state.rs`).
    openings: opening::state::Openings,
    /// The seats its section claims are writing (`seatclaim_core::step::Claiming`).
    claiming: seatclaim_core::step::Claiming,
}

/// Loads the AWS configuration from the standard chain (environment, profile, container or
/// instance role; `AWS_ENDPOINT_URL` redirects every service, e.g. to an emulator).
pub async fn sdk_config() -> aws_config::SdkConfig {
    aws_config::defaults(BehaviorVersion::latest()).load().await
}

/// `seatclaimctl init` on AWS: creates the resources the settings name, with credentials from
/// the standard chain, and returns their names.
pub async fn provision_for(
    settings: &AwsSettings,
    visibility_timeout: std::time::Duration,
    max_receive_count: u32,
) -> Result<AwsNames, BackendError> {
    let names = AwsNames::from_settings(settings);
    provision(
        &sdk_config().await,
        &names,
        visibility_timeout,
        max_receive_count,
    )
    .await?;
    Ok(names)
}
