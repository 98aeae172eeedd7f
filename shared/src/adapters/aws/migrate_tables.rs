//! The table operations a migration needs beyond provisioning: whether an old table exists, a
//! full scan (a migration reads every old item once), and deleting an index.

use aws_sdk_dynamodb::types::{
    DeleteGlobalSecondaryIndexAction, GlobalSecondaryIndexUpdate, IndexStatus, TableDescription,
};

use super::error::{build_error, classify};
use super::item::{Item, all_pages};
use crate::ports::BackendError;

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
pub(super) async fn table_exists(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
) -> Result<bool, BackendError> {
    Ok(describe(db, table).await?.is_some())
}

/// Every item of `table`, page by page.
pub(super) async fn scan_all(
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

/// Deletes the index `index` of `table` if the table has it (and is not deleting it already);
/// whether it did. DynamoDB removes the index in the background; the table stays in use.
pub(super) async fn drop_index(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
    index: &str,
) -> Result<bool, BackendError> {
    let has_it = describe(db, table).await?.is_some_and(|description| {
        description.global_secondary_indexes().iter().any(|gsi| {
            gsi.index_name() == Some(index) && gsi.index_status() != Some(&IndexStatus::Deleting)
        })
    });
    if !has_it {
        return Ok(false);
    }
    let delete = DeleteGlobalSecondaryIndexAction::builder()
        .index_name(index)
        .build()
        .map_err(build_error)?;
    db.update_table()
        .table_name(table)
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder().delete(delete).build(),
        )
        .send()
        .await
        .map_err(|e| classify("UpdateTable delete index", e))?;
    Ok(true)
}
