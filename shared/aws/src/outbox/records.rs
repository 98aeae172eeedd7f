//! The outbox on DynamoDB. Each transition's transaction puts its reservation event under the
//! job (`job_id` + time-ordered `id`), marked `pending#<shard>`: the job's shard of the sparse
//! `unpublished` index. Relays lease shards (`leases.rs`) so that each unpublished entry has one
//! publisher at a time; a published entry loses its mark and gets `expires_at`, so DynamoDB's
//! TTL removes it once the configured retention has passed (`domain::Retention`).

use std::collections::HashSet;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{KeysAndAttributes, PutRequest, TransactWriteItem, WriteRequest};
use futures_util::{StreamExt, TryStreamExt};
use jiff::Timestamp;
use uuid::Uuid;

use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::dynamo::item::{Item, get_n, get_s, n, put_new, s};
use crate::dynamo::keys::{OUTBOX_SHARDS, outbox_shard, pending_key};
use crate::outbox::rejections::record_id;
use crate::setup::names::UNPUBLISHED_INDEX;
use seatclaim_core::codec::{decode_event, encode_event, from_ms};
use seatclaim_core::domain::ReservationEvent;
use seatclaim_core::ports::{BackendError, Outbox, OutboxEntry, OutboxId};

/// Shards read at once (peeks, the audit's oldest entry).
const SHARD_READS: usize = 16;
/// Shards a relay leases per round: a round's page comes from at most this many, so relays
/// running side by side take different shards.
pub(crate) const LEASES_PER_ROUND: usize = 4;
/// DynamoDB's limits on one BatchWriteItem and one BatchGetItem.
const WRITE_BATCH: usize = 25;
const READ_BATCH: usize = 100;

/// An outbox item: the entry of `event`, with its `pending` mark while unpublished.
fn outbox_item(event: &ReservationEvent, id: String, pending: bool) -> Result<Item, BackendError> {
    let mut item = Item::from([
        ("job_id".to_owned(), s(event.job_id.to_string())),
        ("id".to_owned(), s(id)),
        ("body".to_owned(), s(encode_event(event)?)),
        (
            "created_at".to_owned(),
            n(event.occurred_at.as_millisecond()),
        ),
    ]);
    if pending {
        item.insert(
            "pending".to_owned(),
            s(pending_key(outbox_shard(event.job_id))),
        );
    }
    Ok(item)
}

impl DynamoStore {
    /// The write that records one reservation event in the outbox, marked unpublished.
    pub(crate) fn outbox_put(
        &self,
        event: &ReservationEvent,
        now: Timestamp,
    ) -> Result<TransactWriteItem, BackendError> {
        // Ids sort by time, then by this process's sequence (events of one batch share an instant),
        // so a shard returns events oldest first; the uuid keeps processes apart.
        let sequence = self
            .process
            .outbox_sequence
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!(
            "{:013}-{sequence:012}-{}",
            now.as_millisecond(),
            Uuid::new_v4().simple()
        );
        put_new(
            &self.names.outbox_table,
            outbox_item(event, id, true)?,
            "id",
        )
    }

    /// Puts outbox items, 25 to a `BatchWriteItem`, from `(event, id, pending)`: marked pending
    /// for the relay, or published, with `expires_at` (the TTL of history).
    async fn put_entries<'a>(
        &self,
        entries: impl Iterator<Item = (&'a ReservationEvent, String, bool)>,
    ) -> Result<(), BackendError> {
        let expires = n(self.clock.now().as_second() + self.settings.retention.period().as_secs());
        let requests = entries
            .map(|(event, id, pending)| {
                let mut item = outbox_item(event, id, pending)?;
                if !pending {
                    item.insert("expires_at".to_owned(), expires.clone());
                }
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(build_error)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        let writes = requests
            .chunks(WRITE_BATCH)
            .map(|chunk| self.batch_write(&self.names.outbox_table, chunk.to_vec()));
        futures_util::future::try_join_all(writes).await?;
        Ok(())
    }

    /// Up to `limit` entries of one shard, oldest first, from the index (eventually consistent).
    async fn shard_page(&self, shard: u32, limit: usize) -> Result<Vec<Item>, BackendError> {
        let output = self
            .db
            .query()
            .table_name(&self.names.outbox_table)
            .index_name(UNPUBLISHED_INDEX)
            .key_condition_expression("pending = :pending")
            .expression_attribute_values(":pending", s(pending_key(shard)))
            .limit(i32::try_from(limit.max(1)).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| classify("Query outbox", e))?;
        Ok(output.items().to_vec())
    }

    /// Shards with something unpublished, with a first page of each, starting at a random
    /// shard so relays do not all queue for the same ones; the reads stop once twice the
    /// round's leases are found.
    async fn busy_shards(&self, limit: usize) -> Result<Vec<(u32, Vec<Item>)>, BackendError> {
        let first = fastrand::u32(..OUTBOX_SHARDS);
        let page = limit.div_ceil(LEASES_PER_ROUND);
        futures_util::stream::iter(0..OUTBOX_SHARDS)
            .map(|step| {
                let shard = (first + step) % OUTBOX_SHARDS;
                async move { Ok::<_, BackendError>((shard, self.shard_page(shard, page).await?)) }
            })
            .buffered(SHARD_READS)
            .try_filter(|(_, items)| std::future::ready(!items.is_empty()))
            .take(2 * LEASES_PER_ROUND)
            .try_collect()
            .await
    }

    /// Keeps the items the table (strongly consistent) still marks pending: the index may show
    /// an entry the previous lease holder published a moment ago.
    async fn still_pending(&self, items: Vec<Item>) -> Result<Vec<Item>, BackendError> {
        let mut kept = Vec::with_capacity(items.len());
        for chunk in items.chunks(READ_BATCH) {
            let keys = chunk
                .iter()
                .map(|item| {
                    Ok(Item::from([
                        ("job_id".to_owned(), s(get_s(item, "job_id")?)),
                        ("id".to_owned(), s(get_s(item, "id")?)),
                    ]))
                })
                .collect::<Result<Vec<_>, BackendError>>()?;
            let request = KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .consistent_read(true)
                .projection_expression("id, pending")
                .build()
                .map_err(build_error)?;
            let output = self
                .db
                .batch_get_item()
                .request_items(&self.names.outbox_table, request)
                .send()
                .await
                .map_err(|e| classify("BatchGetItem outbox", e))?;
            if output
                .unprocessed_keys()
                .is_some_and(|left| !left.is_empty())
            {
                return Err(BackendError::transient(
                    "BatchGetItem left outbox keys unprocessed",
                ));
            }
            let pending: std::collections::HashSet<String> = output
                .responses()
                .and_then(|r| r.get(&self.names.outbox_table))
                .into_iter()
                .flatten()
                .filter(|item| item.contains_key("pending"))
                .filter_map(|item| get_s(item, "id").ok().map(str::to_owned))
                .collect();
            kept.extend(
                chunk
                    .iter()
                    .filter(|item| get_s(item, "id").is_ok_and(|id| pending.contains(id)))
                    .cloned(),
            );
        }
        Ok(kept)
    }
}

/// The `unpublished` shard an item is in.
fn item_shard(item: &Item) -> Option<u32> {
    seatclaim_core::domain::JobId::parse(get_s(item, "job_id").ok()?).map(outbox_shard)
}

fn entry_of(item: &Item) -> Result<OutboxEntry, BackendError> {
    Ok(OutboxEntry {
        id: OutboxId(get_s(item, "id")?.to_owned()),
        event: decode_event(get_s(item, "body")?)?,
    })
}

#[async_trait]
impl Outbox for DynamoStore {
    /// Leases up to [`LEASES_PER_ROUND`] shards that have work and returns up to `limit` of
    /// their entries (a page of `limit / LEASES_PER_ROUND` from each); the leases end when the
    /// page is marked (or lapse if this process dies).
    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError> {
        let (mut items, mut leased) = (Vec::new(), Vec::new());
        for (shard, page) in self.busy_shards(limit).await? {
            if leased.len() == LEASES_PER_ROUND {
                break;
            }
            if self.lease(shard).await? {
                leased.push(shard);
                items.extend(page);
            }
        }
        // Read before the lease was taken: what the previous holder published meanwhile goes.
        let mut items = self.still_pending(items).await?;
        let busy: HashSet<u32> = items.iter().filter_map(item_shard).collect();
        self.release(leased.into_iter().filter(|shard| !busy.contains(shard)))
            .await?;
        items.sort_by(|a, b| get_s(a, "id").ok().cmp(&get_s(b, "id").ok()));
        items.truncate(limit);
        items.iter().map(entry_of).collect()
    }

    /// Re-puts each entry without its mark and with `expires_at`, 25 to a `BatchWriteItem`
    /// (an entry never changes once written, so the re-put loses nothing), then ends the leases
    /// of the entries' shards.
    async fn mark_published(&self, entries: &[OutboxEntry]) -> Result<(), BackendError> {
        // An entry's handle is its item's key (another backend's names no item of this table).
        let items = entries
            .iter()
            .map(|entry| (&entry.event, entry.id.0.clone(), false));
        self.put_entries(items).await?;
        self.release(entries.iter().map(|entry| outbox_shard(entry.event.job_id)))
            .await
    }

    /// Puts each event's record under its transition's instant (`rejections.rs`), refused ones
    /// marked pending.
    async fn record(
        &self,
        events: &[ReservationEvent],
        refused: &[usize],
    ) -> Result<(), BackendError> {
        let items = events
            .iter()
            .enumerate()
            .map(|(i, event)| (event, record_id(event.occurred_at), refused.contains(&i)));
        self.put_entries(items).await
    }

    async fn oldest_unpublished(&self) -> Result<Option<Timestamp>, BackendError> {
        let oldest = futures_util::stream::iter(0..OUTBOX_SHARDS)
            .map(|shard| self.shard_page(shard, 1))
            .buffer_unordered(SHARD_READS)
            .try_collect::<Vec<_>>()
            .await?
            .iter()
            .flatten()
            .map(|item| get_n(item, "created_at"))
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .min();
        oldest.map(from_ms).transpose()
    }
}
