//! DynamoDB items and writes: attribute codecs and the transaction helper every transition uses.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem, Update};

use crate::dynamo::error::{applied, build_error, classify};
use seatclaim_core::ports::BackendError;

/// One DynamoDB item.
pub(crate) type Item = HashMap<String, AttributeValue>;

/// A string attribute.
pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// A number attribute.
pub(crate) fn n(value: i64) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

fn missing(name: &str) -> BackendError {
    BackendError::permanent(format!("item lacks a readable {name:?} attribute"))
}

/// A required string attribute.
pub(crate) fn get_s<'a>(item: &'a Item, name: &str) -> Result<&'a str, BackendError> {
    opt_s(item, name).ok_or_else(|| missing(name))
}

/// An optional string attribute.
pub(crate) fn opt_s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

/// A required number attribute.
pub(crate) fn get_n(item: &Item, name: &str) -> Result<i64, BackendError> {
    opt_n(item, name)?.ok_or_else(|| missing(name))
}

/// An optional number attribute; present but unreadable is an error.
pub(crate) fn opt_n(item: &Item, name: &str) -> Result<Option<i64>, BackendError> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .map(|text| text.parse::<i64>().map_err(|_| missing(name)))
        .transpose()
}

/// An update within a transaction, under `condition` if any. `#`-names and `:`-values are
/// passed as pairs.
pub(crate) fn update(
    table: &str,
    key: Item,
    expression: &str,
    condition: Option<&str>,
    names: &[(&str, &str)],
    values: Vec<(&str, AttributeValue)>,
) -> Result<TransactWriteItem, BackendError> {
    let mut update = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression(expression)
        .set_condition_expression(condition.map(str::to_owned));
    for (placeholder, name) in names {
        update = update.expression_attribute_names(*placeholder, *name);
    }
    for (placeholder, value) in values {
        update = update.expression_attribute_values(placeholder, value);
    }
    Ok(TransactWriteItem::builder()
        .update(update.build().map_err(build_error)?)
        .build())
}

/// A put within a transaction, on condition that the item is new (`key` is its partition key).
pub(crate) fn put_new(
    table: &str,
    item: Item,
    key: &str,
) -> Result<TransactWriteItem, BackendError> {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression("attribute_not_exists(#key)")
        .expression_attribute_names("#key", key)
        .build()
        .map_err(build_error)?;
    Ok(TransactWriteItem::builder().put(put).build())
}

/// Every item of a paginated read: `page` reads one page from its start key and returns the
/// page's items and the next start key.
pub(crate) async fn all_pages<F, Fut>(mut page: F) -> Result<Vec<Item>, BackendError>
where
    F: FnMut(Option<Item>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<Item>, Option<Item>), BackendError>>,
{
    let (mut items, mut start) = (Vec::new(), None);
    loop {
        let (found, next) = page(start).await?;
        items.extend(found);
        start = next;
        if start.is_none() {
            return Ok(items);
        }
    }
}

/// The items `query` returns: its first page, or `every_page`, all of them; `what` names the
/// query in an error.
pub(crate) async fn query_items(
    query: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder,
    what: &str,
    every_page: bool,
) -> Result<Vec<Item>, BackendError> {
    all_pages(|start| {
        let query = query.clone();
        async move {
            let page = query
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| classify(what, e))?;
            let next = every_page.then(|| page.last_evaluated_key().cloned());
            Ok((page.items().to_vec(), next.flatten()))
        }
    })
    .await
}

/// How many items `query` matches, page after page (`Select: COUNT`: only the count comes
/// back); `what` names the query in an error.
pub(crate) async fn count_all(
    query: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder,
    what: &str,
) -> Result<u64, BackendError> {
    let (mut counted, mut start) = (0, None);
    loop {
        let page = query
            .clone()
            .select(aws_sdk_dynamodb::types::Select::Count)
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| classify(what, e))?;
        counted += u64::try_from(page.count()).unwrap_or(0);
        start = page.last_evaluated_key().cloned();
        if start.is_none() {
            return Ok(counted);
        }
    }
}

/// How a transaction ended.
pub(crate) enum Transacted {
    /// Every write applied.
    Committed,
    /// Nothing applied because these items' conditions failed (by position in the request).
    ConditionFailed(Vec<bool>),
}

/// Runs a transaction. A condition that failed is an outcome (a lost race, a decided job); a
/// cancellation for any other reason (conflict with another transaction, throttling) is transient.
/// A transaction of one write runs as that plain write: atomic all the same, at half the price
/// (a transactional write costs two write units).
pub(crate) async fn transact(
    db: &aws_sdk_dynamodb::Client,
    mut items: Vec<TransactWriteItem>,
) -> Result<Transacted, BackendError> {
    if items.len() == 1
        && let Some(item) = items.pop()
    {
        return write_one(db, item).await;
    }
    let error = match db
        .transact_write_items()
        .set_transact_items(Some(items))
        .send()
        .await
    {
        Ok(_) => return Ok(Transacted::Committed),
        Err(error) => error,
    };
    if let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
        error.as_service_error()
    {
        let codes: Vec<&str> = cancelled
            .cancellation_reasons()
            .iter()
            .map(|r| r.code().unwrap_or("None"))
            .collect();
        if codes.contains(&"ConditionalCheckFailed") {
            return Ok(Transacted::ConditionFailed(
                codes
                    .iter()
                    .map(|c| *c == "ConditionalCheckFailed")
                    .collect(),
            ));
        }
        return Err(BackendError::transient(format!(
            "transaction cancelled: {codes:?}"
        )));
    }
    Err(classify("TransactWriteItems", error))
}

/// One conditional write as an `UpdateItem` or a `PutItem`.
async fn write_one(
    db: &aws_sdk_dynamodb::Client,
    item: TransactWriteItem,
) -> Result<Transacted, BackendError> {
    let done = if let Some(update) = item.update {
        let sent = db
            .update_item()
            .table_name(update.table_name)
            .set_key(Some(update.key))
            .update_expression(update.update_expression)
            .set_condition_expression(update.condition_expression)
            .set_expression_attribute_names(update.expression_attribute_names)
            .set_expression_attribute_values(update.expression_attribute_values)
            .send()
            .await;
        applied("UpdateItem", sent)?
    } else if let Some(put) = item.put {
        let sent = db
            .put_item()
            .table_name(put.table_name)
            .set_item(Some(put.item))
            .set_condition_expression(put.condition_expression)
            .set_expression_attribute_names(put.expression_attribute_names)
            .set_expression_attribute_values(put.expression_attribute_values)
            .send()
            .await;
        applied("PutItem", sent)?
    } else {
        return Err(BackendError::permanent(
            "a write that is neither an update nor a put",
        ));
    };
    Ok(if done {
        Transacted::Committed
    } else {
        Transacted::ConditionFailed(vec![true])
    })
}
