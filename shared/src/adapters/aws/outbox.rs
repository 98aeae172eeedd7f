use async_trait::async_trait;
use futures_util::StreamExt;

use super::DynamoStore;
use super::error::classify;
use super::item::{get_s, s};
use super::names::UNPUBLISHED_INDEX;
use crate::codec::decode_event;
use crate::ports::{BackendError, Outbox, OutboxEntry, OutboxId};

/// Outbox entries marked published at once.
const MARKING_CONCURRENCY: usize = 16;

#[async_trait]
impl Outbox for DynamoStore {
    async fn unpublished(&self, limit: usize) -> Result<Vec<OutboxEntry>, BackendError> {
        let output = self
            .db
            .query()
            .table_name(&self.names.outbox_table)
            .index_name(UNPUBLISHED_INDEX)
            .key_condition_expression("pending = :pending")
            .expression_attribute_values(":pending", s("pending"))
            .limit(i32::try_from(limit).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(|e| classify("Query outbox", e))?;
        output
            .items()
            .iter()
            .map(|item| {
                Ok(OutboxEntry {
                    id: OutboxId::Dynamo(get_s(item, "id")?.to_owned()),
                    event: decode_event(get_s(item, "body")?)?,
                })
            })
            .collect()
    }

    /// Removing `pending` takes the entry out of the sparse index; the entry stays as history.
    /// DynamoDB has no batch update, so the updates of a page run [`MARKING_CONCURRENCY`] at a
    /// time rather than one after another.
    async fn mark_published(&self, ids: &[OutboxId]) -> Result<(), BackendError> {
        let keys = ids
            .iter()
            .map(|id| match id {
                OutboxId::Dynamo(key) => Ok(key.clone()),
                OutboxId::Embedded(_) => Err(BackendError::permanent(
                    "an embedded outbox id was handed to DynamoDB",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let marks = keys.into_iter().map(|key| async move {
            self.db
                .update_item()
                .table_name(&self.names.outbox_table)
                .key("id", s(key))
                .update_expression("REMOVE pending")
                .send()
                .await
                .map(|_| ())
                .map_err(|e| classify("UpdateItem outbox", e))
        });
        futures_util::stream::iter(marks)
            .buffer_unordered(MARKING_CONCURRENCY)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }
}
