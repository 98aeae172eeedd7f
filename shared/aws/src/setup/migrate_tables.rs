//! The table reads a migration needs beyond provisioning: whether an old table or index exists,
//! and a full scan (a migration reads every old item once).

use aws_sdk_dynamodb::types::TableDescription;

use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, all_pages};
use seatclaim_core::ports::BackendError;

async fn describe(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Result<Option<TableDescription>, BackendError> {
    match db.describe_table().table_name(table).send().await {
        Ok(output) => Ok(output.table().cloned()),
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_not_found_exception()) =>
        {
            Ok(None)
        }
        Err(error) => Err(classify("DescribeTable", error)),
    }
}

/// Whether `table` exists.
pub(crate) async fn table_exists(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Result<bool, BackendError> {
    Ok(describe(db, table).await?.is_some())
}

/// Every item of `table`, page by page.
pub(crate) async fn scan_all(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Result<Vec<Item>, BackendError> {
    all_pages(|start| async {
        let page = db
            .scan()
            .table_name(table)
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| classify("Scan", e))?;
        Ok((page.items().to_vec(), page.last_evaluated_key().cloned()))
    })
    .await
}

/// Whether `table` has the index `index`.
pub(crate) async fn has_index(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
    index: &str,
) -> Result<bool, BackendError> {
    Ok(describe(db, table).await?.is_some_and(|description| {
        description
            .global_secondary_indexes()
            .iter()
            .any(|gsi| gsi.index_name() == Some(index))
    }))
}
