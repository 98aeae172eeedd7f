use async_trait::async_trait;

use super::DynamoStore;
use super::error::classify;
use super::item::{get_s, s};
use super::names::UNPUBLISHED_INDEX;
use crate::codec::decode_event;
use crate::ports::{BackendError, Outbox, OutboxEntry, OutboxId};

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
    async fn mark_published(&self, ids: &[OutboxId]) -> Result<(), BackendError> {
        for id in ids {
            let OutboxId::Dynamo(id) = id else {
                return Err(BackendError::permanent(
                    "an embedded outbox id was handed to DynamoDB",
                ));
            };
            self.db
                .update_item()
                .table_name(&self.names.outbox_table)
                .key("id", s(id.clone()))
                .update_expression("REMOVE pending")
                .send()
                .await
                .map_err(|e| classify("UpdateItem outbox", e))?;
        }
        Ok(())
    }
}
