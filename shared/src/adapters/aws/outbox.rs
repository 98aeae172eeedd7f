use async_trait::async_trait;

use super::DynamoStore;
use super::error::classify;
use super::item::{get_s, s};
use super::jobs::from_json;
use super::names::UNPUBLISHED_INDEX;
use crate::ports::{BackendError, Outbox, OutboxEntry};

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
                    id: get_s(item, "id")?.to_owned(),
                    event: from_json(get_s(item, "body")?)?,
                })
            })
            .collect()
    }

    /// Removing `pending` takes the entry out of the sparse index; the entry stays as history.
    async fn mark_published(&self, ids: &[String]) -> Result<(), BackendError> {
        for id in ids {
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
