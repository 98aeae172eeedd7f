//! Schema migrations of the AWS backend, run by `seatclaimctl migrate`. DynamoDB cannot change a
//! table's key in place, and changes an index only online (one per update, with a backfill), so
//! version 2 (keys that spread a sale) has new seat, job and outbox tables: the migration copies
//! the version 1 items into them with their new keys. Version 3 keeps a key's record in its job
//! item (version 2's idempotency records are copied into the jobs table as aliases) and no
//! longer uses the jobs table's `by-event-shard` index (the audit scans instead). The index is
//! reported, not deleted: new jobs carry no key of it, so it costs nothing, and DynamoDB Local,
//! the engine the tests run on, fails every write to a table whose index was deleted, so
//! deleting it here could not be tested; `docs/aws-operations.md` says how to delete it. Version
//! 4 gives access code items the `by-block` index's keys (`migrate_codes.rs`). It is idempotent (a copy never overwrites
//! an item the new code already wrote) and leaves the old tables in place for the operator to
//! delete after checking.

use futures_util::{StreamExt, TryStreamExt};

use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, get_n, get_s, n, opt_s, s};
use crate::dynamo::keys::{
    block_key, block_of, free_key, free_rank, held_shard, outbox_shard, pending_key,
};
use crate::setup::migrate_tables::{has_index, scan_all, table_exists};
use crate::setup::names::UNUSED_JOBS_BY_EVENT_INDEX;
use crate::setup::provision::provision;
use crate::{AwsNames, AwsSettings, LegacyNames};
use seatclaim_core::domain::{BuyerId, EventId, IdempotencyKey, JobId};
use seatclaim_core::ports::BackendError;

/// The schema version this code reads and writes.
pub const SCHEMA_VERSION: u32 = 4;
/// Items copied at once.
const COPIES: usize = 16;
/// How long a published entry that `seatclaimctl migrate` copies from schema version 1 stays
/// readable as the job's history; new entries are kept for the configured retention.
const PUBLISHED_TTL_SECONDS: i64 = 7 * 24 * 3600;

/// What a migration did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Migrated {
    /// Version 1 seats copied into the new inventory table.
    pub seats: usize,
    /// Version 1 jobs copied into the new jobs table.
    pub jobs: usize,
    /// Version 1 outbox entries copied into the new outbox table.
    pub outbox_entries: usize,
    /// Version 2 idempotency records copied into the jobs table as aliases.
    pub keys: usize,
    /// Version 3 code items given the `by-block` index's keys (`migrate_codes.rs`).
    pub codes_indexed: usize,
    /// Indexes of earlier versions still there, unused (`table/index`), for the operator to
    /// delete.
    pub unused_indexes: Vec<String>,
}

/// What `seatclaimctl migrate` did on AWS: the copies from the tables of earlier schema
/// versions, and the indexes left unused, for the operator to delete.
#[derive(Debug, Clone)]
pub struct Migration {
    /// What was copied and found.
    pub done: Migrated,
    /// The tables of schema version 1 it copied from.
    pub legacy: LegacyNames,
    /// Schema version 2's table of idempotency keys it copied from.
    pub idempotency_table: String,
}

impl std::fmt::Display for Migration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (done, legacy) = (&self.done, &self.legacy);
        let unused = if done.unused_indexes.is_empty() {
            "none".to_owned()
        } else {
            done.unused_indexes.join(", ")
        };
        write!(
            f,
            "schema version {SCHEMA_VERSION}: copied {} seats from {}, {} jobs from {}, {} outbox \
             entries from {} and {} idempotency keys from {}; indexed {} access codes; unused \
             indexes: {unused}",
            done.seats,
            legacy.seats_table,
            done.jobs,
            legacy.jobs_table,
            done.outbox_entries,
            legacy.outbox_table,
            done.keys,
            self.idempotency_table,
            done.codes_indexed
        )
    }
}

/// `seatclaimctl migrate` on AWS: brings the resources of the settings' prefix to
/// [`SCHEMA_VERSION`], and returns what it did.
pub async fn migrate_for(
    settings: &AwsSettings,
    visibility_timeout: std::time::Duration,
    max_receive_count: u32,
) -> Result<Migration, BackendError> {
    let config = crate::sdk_config().await;
    let names = AwsNames::from_settings(settings);
    provision(&config, &names, visibility_timeout, max_receive_count).await?;
    let legacy = LegacyNames::for_prefix(&settings.aws_prefix);
    let db = aws_sdk_dynamodb::Client::new(&config);
    let done = migrate(&db, &names, &legacy, settings.held_shards()).await?;
    Ok(Migration {
        done,
        legacy,
        idempotency_table: names.idempotency_table,
    })
}

/// Migrates version 1 and 2 data into the tables `names` (which must exist), and finds the
/// indexes version 3 no longer uses.
pub async fn migrate(
    db: &aws_sdk_dynamodb::Client,
    names: &AwsNames,
    legacy: &LegacyNames,
    held_shards: u32,
) -> Result<Migrated, BackendError> {
    let mut done = Migrated::default();
    if table_exists(db, &legacy.seats_table).await? {
        let items = scan_all(db, &legacy.seats_table).await?;
        done.seats = copy(db, &names.seats_table, "seat_key", items, seat_v2).await?;
    }
    if table_exists(db, &legacy.jobs_table).await? {
        let items = scan_all(db, &legacy.jobs_table).await?;
        let convert = |item: &Item| job_v2(item, held_shards);
        done.jobs = copy(db, &names.jobs_table, "job_id", items, convert).await?;
    }
    if table_exists(db, &legacy.outbox_table).await? {
        let items = scan_all(db, &legacy.outbox_table).await?;
        done.outbox_entries = copy(db, &names.outbox_table, "id", items, outbox_v2).await?;
    }
    if table_exists(db, &names.idempotency_table).await? {
        let items = scan_all(db, &names.idempotency_table).await?;
        done.keys = copy(db, &names.jobs_table, "job_id", items, key_alias).await?;
    }
    done.codes_indexed = super::migrate_codes::index_codes(db, names).await?;
    if has_index(db, &names.jobs_table, UNUSED_JOBS_BY_EVENT_INDEX).await? {
        done.unused_indexes
            .push(format!("{}/{UNUSED_JOBS_BY_EVENT_INDEX}", names.jobs_table));
    }
    Ok(done)
}

/// Puts each converted item unless the new table has it already; returns how many were new.
async fn copy(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
    key: &str,
    items: Vec<Item>,
    convert: impl Fn(&Item) -> Result<Item, BackendError>,
) -> Result<usize, BackendError> {
    let converted = items.iter().map(convert).collect::<Result<Vec<_>, _>>()?;
    let written = futures_util::stream::iter(converted)
        .map(|item| async move {
            let put = db
                .put_item()
                .table_name(table)
                .set_item(Some(item))
                .condition_expression("attribute_not_exists(#key)")
                .expression_attribute_names("#key", key)
                .send()
                .await;
            match put {
                Ok(_) => Ok(true),
                Err(error)
                    if error
                        .as_service_error()
                        .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
                {
                    Ok(false)
                }
                Err(error) => Err(classify("PutItem migration copy", error)),
            }
        })
        .buffer_unordered(COPIES)
        .try_collect::<Vec<bool>>()
        .await?;
    Ok(written.into_iter().filter(|new| *new).count())
}

fn parsed_event(item: &Item) -> Result<EventId, BackendError> {
    EventId::parse(get_s(item, "event_id")?)
        .map_err(|_| BackendError::permanent("a version 1 item has an invalid event id"))
}

fn parsed_job(item: &Item) -> Result<JobId, BackendError> {
    JobId::parse(get_s(item, "job_id")?)
        .ok_or_else(|| BackendError::permanent("a version 1 item has an invalid job id"))
}

/// A version 1 seat (keyed by event and seat) as a version 2 seat item. Version 1 sections had
/// one free list, `event#section`, which is the one-shard key of version 2.
fn seat_v2(item: &Item) -> Result<Item, BackendError> {
    let event_id = parsed_event(item)?;
    let seat_id = get_s(item, "seat_id")?;
    let section = get_s(item, "section")?;
    let position = usize::try_from(get_n(item, "position")?).unwrap_or(0);
    let mut seat = item.clone();
    seat.extend([
        ("seat_key".to_owned(), s(format!("{event_id}#{seat_id}"))),
        (
            "free_home".to_owned(),
            s(free_key(&event_id, section, 0, 1)),
        ),
        (
            "block".to_owned(),
            s(block_key(&event_id, block_of(position))),
        ),
        ("free_rank".to_owned(), n(free_rank(position))),
    ]);
    Ok(seat)
}

/// A version 1 outbox entry (keyed by `id`) as a version 2 entry under its job: still pending
/// in its job's shard, or published and given its expiry.
fn outbox_v2(item: &Item) -> Result<Item, BackendError> {
    let job_id = parsed_job(item)?;
    let mut entry = item.clone();
    if opt_s(item, "pending").is_some() {
        entry.insert("pending".to_owned(), s(pending_key(outbox_shard(job_id))));
    } else {
        let created_s = get_n(item, "created_at")? / 1_000;
        entry.insert(
            "expires_at".to_owned(),
            n(created_s + PUBLISHED_TTL_SECONDS),
        );
    }
    Ok(entry)
}

/// A version 2 idempotency record (`buyer#key` -> job) as an alias in the jobs table: under the
/// job id the key names now, holding the job it named then, its fingerprint and its expiry (the
/// jobs table's TTL removes it then, as the old table's did).
fn key_alias(item: &Item) -> Result<Item, BackendError> {
    let record = get_s(item, "id")?;
    let invalid = || BackendError::permanent(format!("idempotency record {record:?} is invalid"));
    let (buyer, key) = record.split_once('#').ok_or_else(invalid)?;
    let buyer = BuyerId::parse(buyer).map_err(|_| invalid())?;
    let key = IdempotencyKey::parse(key).map_err(|_| invalid())?;
    let mut alias = Item::from([
        (
            "job_id".to_owned(),
            s(JobId::for_key(&buyer, &key).to_string()),
        ),
        ("alias_of".to_owned(), s(get_s(item, "job_id")?)),
        ("fingerprint".to_owned(), s(get_s(item, "fingerprint")?)),
    ]);
    if let Some(expires) = item.get("expires_at") {
        alias.insert("expires_at".to_owned(), expires.clone());
    }
    Ok(alias)
}

/// A version 1 job as it is now: a HELD job gets its `held-by-deadline` key under the
/// configured shard count (version 1 had 4 shards).
fn job_v2(item: &Item, held_shards: u32) -> Result<Item, BackendError> {
    let job_id = parsed_job(item)?;
    let mut job = item.clone();
    if job.contains_key("held_shard") {
        job.insert("held_shard".to_owned(), s(held_shard(job_id, held_shards)));
    }
    Ok(job)
}
