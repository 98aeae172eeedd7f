//! The seat item: how a new event's seats are written, how an item reads back as a seat, and how
//! an event's seats are visited block by block through the `by-block` index.

use std::time::Duration;

use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use futures_util::{StreamExt, TryStreamExt};

use crate::DynamoStore;
use crate::dynamo::error::{build_error, classify};
use crate::dynamo::item::{Item, all_pages, get_s, n, opt_n, opt_s, s};
use crate::dynamo::keys::{
    block_count, block_key, dealt_block, free_key, free_shard_count, free_shard_of, seat_key,
};
use crate::setup::names::SEATS_BY_BLOCK_INDEX;
use seatclaim_core::codec::SeatRecord;
use seatclaim_core::domain::{EventId, NewEvent, Seat};
use seatclaim_core::ports::BackendError;

/// DynamoDB's limit on one BatchWriteItem.
const WRITE_BATCH: usize = 25;
/// Blocks of an event read at once.
const BLOCK_READS: usize = 8;

/// Reads a seat item into the domain's seat.
pub(crate) fn seat_from_item(item: &Item) -> Result<Seat, BackendError> {
    SeatRecord {
        seat_id: get_s(item, "seat_id")?.to_owned(),
        section: get_s(item, "section")?.to_owned(),
        state: get_s(item, "state")?.to_owned(),
        job_id: opt_s(item, "job_id").map(str::to_owned),
        hold_until: opt_n(item, "hold_until")?,
        place: opt_s(item, "place").map(str::to_owned),
    }
    .into_seat()
}

/// How many free-list shards each section of a new event gets.
pub(crate) fn section_shards(event: &NewEvent) -> std::collections::BTreeMap<String, u32> {
    let mut sizes = std::collections::BTreeMap::<String, usize>::new();
    for (_, section) in &event.seats {
        *sizes.entry(section.as_str().to_owned()).or_default() += 1;
    }
    sizes
        .into_iter()
        .map(|(section, size)| (section, free_shard_count(size)))
        .collect()
}

/// A new event's seat item: AVAILABLE, with its place, in its free-list shard (`free_home`, where
/// a release puts it back) ranked by the event's order of preference, so a shard's free list
/// reads best first, and in its block.
fn new_seat_item(
    event: &NewEvent,
    position: usize,
    shards: &std::collections::BTreeMap<String, u32>,
) -> Item {
    let (seat_id, section) = &event.seats[position];
    let place = event.places.get(position);
    let count = shards.get(section.as_str()).copied().unwrap_or(1);
    let shard = free_shard_of(place.and_then(|p| p.row), position, count);
    let home = free_key(&event.event_id, section.as_str(), shard, count);
    let rank = place.map_or(position, |p| p.preference as usize);
    let mut item = seat_key(&event.event_id, seat_id);
    item.extend([
        ("event_id".to_owned(), s(event.event_id.as_str())),
        ("seat_id".to_owned(), s(seat_id.as_str())),
        ("section".to_owned(), s(section.as_str())),
        (
            "position".to_owned(),
            n(i64::try_from(position).unwrap_or(i64::MAX)),
        ),
        ("state".to_owned(), s(SeatRecord::AVAILABLE)),
        (
            "free_rank".to_owned(),
            n(i64::try_from(rank).unwrap_or(i64::MAX)),
        ),
        ("free_key".to_owned(), s(home.clone())),
        ("free_home".to_owned(), s(home)),
        (
            "block".to_owned(),
            s(block_key(
                &event.event_id,
                dealt_block(position, event.seats.len()),
            )),
        ),
    ]);
    if let Some(place) = place.and_then(|p| serde_json::to_string(p).ok()) {
        item.insert("place".to_owned(), s(place));
    }
    item
}

impl DynamoStore {
    /// Writes a new event's seats, 25 to a `BatchWriteItem`, retrying what DynamoDB leaves
    /// unprocessed.
    pub(crate) async fn write_seats(
        &self,
        event: &NewEvent,
        shards: &std::collections::BTreeMap<String, u32>,
    ) -> Result<(), BackendError> {
        let requests = (0..event.seats.len())
            .map(|position| {
                let put = PutRequest::builder()
                    .set_item(Some(new_seat_item(event, position, shards)))
                    .build()
                    .map_err(build_error)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, BackendError>>()?;
        for chunk in requests.chunks(WRITE_BATCH) {
            self.batch_write(&self.names.seats_table, chunk.to_vec())
                .await?;
        }
        Ok(())
    }

    /// One `BatchWriteItem` to `table`, retried with a growing pause until nothing is left
    /// unprocessed.
    pub(crate) async fn batch_write(
        &self,
        table: &str,
        mut pending: Vec<WriteRequest>,
    ) -> Result<(), BackendError> {
        let mut attempt = 0_u32;
        while !pending.is_empty() {
            let output = self
                .db
                .batch_write_item()
                .request_items(table, pending)
                .send()
                .await
                .map_err(|e| classify("BatchWriteItem", e))?;
            pending = output
                .unprocessed_items()
                .and_then(|left| left.get(table))
                .cloned()
                .unwrap_or_default();
            attempt += 1;
            if !pending.is_empty() {
                tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt.min(20)))).await;
            }
        }
        Ok(())
    }

    /// Every seat item of an event (only `projection`'s attributes, when given), read block by
    /// block from the `by-block` index, a few blocks at once: eventually consistent, for reads
    /// the inventory does not decide on.
    pub(crate) async fn event_seat_items(
        &self,
        event_id: &EventId,
        seats: usize,
        projection: Option<&str>,
    ) -> Result<Vec<Item>, BackendError> {
        let blocks = futures_util::stream::iter(0..block_count(seats))
            .map(|block| self.block_items(block_key(event_id, block), projection))
            .buffered(BLOCK_READS)
            .try_collect::<Vec<_>>()
            .await?;
        // A block holds positions dealt over the blocks (or a thousand in a row, for older
        // events): in the event's order again. Items read without `position` keep theirs.
        let mut items: Vec<Item> = blocks.into_iter().flatten().collect();
        items.sort_by_key(|item| opt_n(item, "position").ok().flatten());
        Ok(items)
    }

    async fn block_items(
        &self,
        block: String,
        projection: Option<&str>,
    ) -> Result<Vec<Item>, BackendError> {
        all_pages(|start| async {
            let page = self
                .db
                .query()
                .table_name(&self.names.seats_table)
                .index_name(SEATS_BY_BLOCK_INDEX)
                .key_condition_expression("#block = :block")
                .expression_attribute_names("#block", "block")
                .expression_attribute_values(":block", s(block.clone()))
                .set_projection_expression(projection.map(str::to_owned))
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify("Query seats by block", e))?;
            Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
        })
        .await
    }
}
