//! Schema version 4: an access code's item carries the `by-block` index's keys (`block`, the
//! event's code shard; `position`), so the operator's summary reads an event's codes without a
//! scan (`events/tallies.rs`). Version 3 wrote code items without them: the migration finds
//! those (a scan of the seats table for items with `max_seats` and no `block`) and adds the
//! keys, each on condition that the item is still there. Idempotent: a second run finds none.

use futures_util::{StreamExt, TryStreamExt};

use crate::AwsNames;
use crate::dynamo::error::classify;
use crate::dynamo::item::{all_pages, get_s, n, s};
use crate::dynamo::keys::code_block;
use seatclaim_core::domain::{CodeHash, EventId};
use seatclaim_core::ports::BackendError;

/// Items updated at once.
const UPDATES: usize = 16;

/// Adds the index keys to every code item without them; returns how many it updated.
pub(super) async fn index_codes(
    db: &aws_sdk_dynamodb::Client,
    names: &AwsNames,
) -> Result<usize, BackendError> {
    let table = &names.seats_table;
    let unindexed = all_pages(|start| async {
        let page = (db.scan())
            .table_name(table)
            .filter_expression("attribute_exists(max_seats) AND attribute_not_exists(#block)")
            .expression_attribute_names("#block", "block")
            .projection_expression("seat_key")
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| classify("Scan code items", e))?;
        Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
    })
    .await?;
    let keys = (unindexed.iter())
        .map(|item| get_s(item, "seat_key").map(str::to_owned))
        .collect::<Result<Vec<_>, _>>()?;
    let updated = futures_util::stream::iter(keys)
        .map(|key| async move {
            let block = block_of_key(&key)?;
            (db.update_item())
                .table_name(table)
                .key("seat_key", s(key))
                .update_expression("SET #block = :block, #position = :position")
                .condition_expression("attribute_exists(seat_key)")
                .expression_attribute_names("#block", "block")
                .expression_attribute_names("#position", "position")
                .expression_attribute_values(":block", s(block))
                .expression_attribute_values(":position", n(0))
                .send()
                .await
                .map_err(|e| classify("UpdateItem code index keys", e))
        })
        .buffer_unordered(UPDATES)
        .try_collect::<Vec<_>>()
        .await?;
    Ok(updated.len())
}

/// The code block of a code item's key, `<event>#code#<hash>`.
fn block_of_key(key: &str) -> Result<String, BackendError> {
    let corrupt = || BackendError::permanent(format!("a code item has the key {key:?}"));
    let (event, hash) = key.split_once("#code#").ok_or_else(corrupt)?;
    let event = EventId::parse(event).map_err(|_| corrupt())?;
    let hash = CodeHash::parse(hash).map_err(|_| corrupt())?;
    Ok(code_block(&event, &hash))
}
