//! The table operations a migration needs beyond provisioning: whether a table exists, a full
//! scan (the one place the code scans: a migration reads every old item once), and adding or
//! dropping a global secondary index on a live table.

use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, CreateGlobalSecondaryIndexAction, DeleteGlobalSecondaryIndexAction,
    GlobalSecondaryIndexUpdate, IndexStatus, Projection, ProjectionType, TableDescription,
};

use super::error::{build_error, classify};
use super::item::Item;
use super::provision::{TableSpec, key_element};
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
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let page = db
            .scan()
            .table_name(table)
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| classify("Scan", e))?;
        items.extend(page.items().iter().cloned());
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            return Ok(items);
        }
    }
}

fn index_names(table: &TableDescription) -> Vec<&str> {
    table
        .global_secondary_indexes()
        .iter()
        .filter_map(|index| index.index_name())
        .collect()
}

/// Adds the index `name` of `spec` to the live table unless it has it, and waits until the
/// index is ACTIVE (filled from the table's items).
pub(super) async fn ensure_index(
    db: &aws_sdk_dynamodb::Client,
    spec: &TableSpec<'_>,
    name: &str,
) -> Result<(), BackendError> {
    let table = describe(db, spec.name)
        .await?
        .ok_or_else(|| BackendError::permanent(format!("table {} does not exist", spec.name)))?;
    if !index_names(&table).contains(&name) {
        let Some((_, hash, range)) = spec.indexes.iter().find(|(index, ..)| *index == name) else {
            return Err(BackendError::permanent(format!(
                "no index {name} in the table spec"
            )));
        };
        let create = CreateGlobalSecondaryIndexAction::builder()
            .index_name(name)
            .key_schema(key_element(hash.0, aws_sdk_dynamodb::types::KeyType::Hash)?)
            .key_schema(key_element(
                range.0,
                aws_sdk_dynamodb::types::KeyType::Range,
            )?)
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::All)
                    .build(),
            )
            .build()
            .map_err(build_error)?;
        let mut request = db
            .update_table()
            .table_name(spec.name)
            .global_secondary_index_updates(
                GlobalSecondaryIndexUpdate::builder().create(create).build(),
            );
        for (attribute, kind) in [hash, range] {
            request = request.attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name(*attribute)
                    .attribute_type(kind.clone())
                    .build()
                    .map_err(build_error)?,
            );
        }
        request
            .send()
            .await
            .map_err(|e| classify("UpdateTable", e))?;
    }
    wait_for_index(db, spec.name, name).await
}

async fn wait_for_index(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
    name: &str,
) -> Result<(), BackendError> {
    for _ in 0..600 {
        let status = describe(db, table).await?.and_then(|t| {
            t.global_secondary_indexes()
                .iter()
                .find(|index| index.index_name() == Some(name))
                .and_then(|index| index.index_status().cloned())
        });
        if status.is_none_or(|status| status == IndexStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    Err(BackendError::transient(format!(
        "index {name} of {table} did not become active"
    )))
}

/// Drops the index `name` from the live table if it has it.
pub(super) async fn drop_index(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
    name: &str,
) -> Result<(), BackendError> {
    let Some(described) = describe(db, table).await? else {
        return Ok(());
    };
    if !index_names(&described).contains(&name) {
        return Ok(());
    }
    let delete = DeleteGlobalSecondaryIndexAction::builder()
        .index_name(name)
        .build()
        .map_err(build_error)?;
    db.update_table()
        .table_name(table)
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder().delete(delete).build(),
        )
        .send()
        .await
        .map_err(|e| classify("UpdateTable", e))?;
    Ok(())
}
