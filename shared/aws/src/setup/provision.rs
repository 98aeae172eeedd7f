//! Creating the AWS resources for a prefix, idempotently: what `seatclaimctl init` runs against an
//! emulator or a fresh account. The deploy templates create the same resources with the same names.

use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, TableStatus, TimeToLiveSpecification, TimeToLiveStatus,
};
use aws_sdk_sqs::types::QueueAttributeName;

use crate::AwsNames;
use crate::dynamo::error::{build_error, classify};
use crate::setup::names::{
    FREE_SEATS_INDEX, HELD_JOBS_INDEX, SEATS_BY_BLOCK_INDEX, UNPUBLISHED_INDEX,
};
use seatclaim_core::ports::BackendError;

/// Messages are kept for the longest time SQS allows (14 days): intents through a long outage,
/// dead letters for operators to replay. The deploy template sets the same.
const RETENTION_SECONDS: u32 = 1_209_600;
/// How long a received settlement stays hidden from other workers (the settlements queue's
/// attribute, `queue/settlements.rs`).
pub(crate) const SETTLEMENT_VISIBILITY_SECONDS: u32 = 20;
/// How long SQS keeps a settlement (its shortest retention): by then it is stale anyway.
pub(crate) const SETTLEMENT_RETENTION_SECONDS: u32 = 60;

/// An attribute of a key: its name and type.
pub type KeyAttribute<'a> = (&'a str, ScalarAttributeType);

/// One table the backend expects: its key and its global secondary indexes (name, hash key, range
/// key; every index projects all attributes). The deploy templates are checked against these.
#[derive(Debug, Clone)]
pub struct TableSpec<'a> {
    /// The table's name.
    pub name: &'a str,
    /// The partition key.
    pub hash: KeyAttribute<'a>,
    /// The sort key, if any.
    pub range: Option<KeyAttribute<'a>>,
    /// The indexes.
    pub indexes: Vec<(&'static str, KeyAttribute<'a>, KeyAttribute<'a>)>,
    /// The attribute DynamoDB's TTL deletes items by (epoch seconds), if any.
    pub ttl: Option<&'static str>,
}

/// Every table the AWS backend uses, with its keys and indexes.
#[must_use]
pub fn table_specs(names: &AwsNames) -> Vec<TableSpec<'_>> {
    use ScalarAttributeType::{N, S};
    vec![
        TableSpec {
            name: &names.events_table,
            hash: ("event_id", S),
            range: None,
            indexes: vec![],
            ttl: None,
        },
        TableSpec {
            name: &names.seats_table,
            hash: ("seat_key", S),
            range: None,
            indexes: vec![
                (FREE_SEATS_INDEX, ("free_key", S), ("free_rank", N)),
                (SEATS_BY_BLOCK_INDEX, ("block", S), ("position", N)),
            ],
            ttl: None,
        },
        TableSpec {
            name: &names.jobs_table,
            hash: ("job_id", S),
            range: None,
            indexes: vec![(HELD_JOBS_INDEX, ("held_shard", S), ("hold_until", N))],
            // Only the aliases of version 2 keys expire; jobs carry no `expires_at`.
            ttl: Some("expires_at"),
        },
        TableSpec {
            name: &names.outbox_table,
            hash: ("job_id", S),
            range: Some(("id", S)),
            indexes: vec![(UNPUBLISHED_INDEX, ("pending", S), ("id", S))],
            ttl: Some("expires_at"),
        },
    ]
}

/// Creates (or finds) the queues with the redrive policy, the tables with their indexes, and the
/// event bus. `max_receive_count` is the main queue's redrive limit.
pub async fn provision(
    config: &aws_config::SdkConfig,
    names: &AwsNames,
    visibility_timeout: Duration,
    max_receive_count: u32,
) -> Result<(), BackendError> {
    create_queues(
        &aws_sdk_sqs::Client::new(config),
        names,
        visibility_timeout,
        max_receive_count,
    )
    .await?;
    create_settlements_queue(&aws_sdk_sqs::Client::new(config), names).await?;
    let db = aws_sdk_dynamodb::Client::new(config);
    for table in table_specs(names) {
        create_table(&db, table).await?;
    }
    create_bus(&aws_sdk_eventbridge::Client::new(config), &names.event_bus).await
}

async fn create_queues(
    sqs: &aws_sdk_sqs::Client,
    names: &AwsNames,
    visibility_timeout: Duration,
    max_receive_count: u32,
) -> Result<(), BackendError> {
    let arn = create_dlq(sqs, names).await?;
    let redrive =
        format!(r#"{{"deadLetterTargetArn":"{arn}","maxReceiveCount":"{max_receive_count}"}}"#);
    let attributes = [
        (QueueAttributeName::RedrivePolicy, redrive),
        (
            QueueAttributeName::VisibilityTimeout,
            visibility_timeout.as_secs().to_string(),
        ),
        (
            QueueAttributeName::MessageRetentionPeriod,
            RETENTION_SECONDS.to_string(),
        ),
    ];
    let created = sqs
        .create_queue()
        .queue_name(&names.queue)
        .set_attributes(Some(attributes.clone().into_iter().collect()))
        .send()
        .await;
    match created {
        Ok(_) => Ok(()),
        // It exists with other attributes: bring them in line (init is idempotent).
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_queue_name_exists()) =>
        {
            let url = queue_url(sqs, &names.queue).await?;
            sqs.set_queue_attributes()
                .queue_url(url)
                .set_attributes(Some(attributes.into_iter().collect()))
                .send()
                .await
                .map_err(|e| classify("SetQueueAttributes", e))?;
            Ok(())
        }
        Err(error) => Err(classify("CreateQueue", error)),
    }
}

/// Creates (or finds) the queue of settlements the API sends to the workers: no dead-letter
/// queue, since a settlement nobody answered in time is stale (`queue/settlements.rs`).
async fn create_settlements_queue(
    sqs: &aws_sdk_sqs::Client,
    names: &AwsNames,
) -> Result<(), BackendError> {
    sqs.create_queue()
        .queue_name(&names.settlements_queue)
        .attributes(
            QueueAttributeName::VisibilityTimeout,
            SETTLEMENT_VISIBILITY_SECONDS.to_string(),
        )
        .attributes(
            QueueAttributeName::MessageRetentionPeriod,
            SETTLEMENT_RETENTION_SECONDS.to_string(),
        )
        .send()
        .await
        .map_err(|e| classify("CreateQueue settlements", e))?;
    Ok(())
}

/// Creates (or finds) the dead-letter queue and returns its ARN, for the main queue's redrive.
async fn create_dlq(sqs: &aws_sdk_sqs::Client, names: &AwsNames) -> Result<String, BackendError> {
    let dlq = sqs
        .create_queue()
        .queue_name(&names.dlq)
        .attributes(
            QueueAttributeName::MessageRetentionPeriod,
            RETENTION_SECONDS.to_string(),
        )
        .send()
        .await
        .map_err(|e| classify("CreateQueue dlq", e))?;
    sqs.get_queue_attributes()
        .queue_url(dlq.queue_url().unwrap_or_default())
        .attribute_names(QueueAttributeName::QueueArn)
        .send()
        .await
        .map_err(|e| classify("GetQueueAttributes", e))?
        .attributes()
        .and_then(|a| a.get(&QueueAttributeName::QueueArn))
        .cloned()
        .ok_or_else(|| BackendError::permanent("the DLQ has no ARN"))
}

fn key_element(name: &str, key_type: KeyType) -> Result<KeySchemaElement, BackendError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .map_err(build_error)
}

async fn create_table(
    db: &aws_sdk_dynamodb::Client,
    spec: TableSpec<'_>,
) -> Result<(), BackendError> {
    let mut attributes = vec![spec.hash.clone()];
    attributes.extend(spec.range.clone());
    for (_, hash, range) in &spec.indexes {
        attributes.extend([hash.clone(), range.clone()]);
    }
    attributes.sort_by(|a, b| a.0.cmp(b.0));
    attributes.dedup_by(|a, b| a.0 == b.0);
    let mut request = db
        .create_table()
        .table_name(spec.name)
        .billing_mode(BillingMode::PayPerRequest);
    for (name, kind) in attributes {
        request = request.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(kind)
                .build()
                .map_err(build_error)?,
        );
    }
    request = request.key_schema(key_element(spec.hash.0, KeyType::Hash)?);
    if let Some((range, _)) = spec.range {
        request = request.key_schema(key_element(range, KeyType::Range)?);
    }
    for (index, (hash, _), (range, _)) in spec.indexes {
        request = request.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(index)
                .key_schema(key_element(hash, KeyType::Hash)?)
                .key_schema(key_element(range, KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .map_err(build_error)?,
        );
    }
    match request.send().await {
        Ok(_) => {}
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) => {}
        Err(error) => return Err(classify("CreateTable", error)),
    }
    wait_until_active(db, spec.name).await?;
    match spec.ttl {
        Some(attribute) => enable_ttl(db, spec.name, attribute).await,
        None => Ok(()),
    }
}

/// Turns on DynamoDB's TTL by `attribute`; a table that has it on already is left alone.
async fn enable_ttl(
    db: &aws_sdk_dynamodb::Client,
    table: &str,
    attribute: &str,
) -> Result<(), BackendError> {
    let described = db
        .describe_time_to_live()
        .table_name(table)
        .send()
        .await
        .map_err(|e| classify("DescribeTimeToLive", e))?;
    let status = described
        .time_to_live_description()
        .and_then(|d| d.time_to_live_status());
    if matches!(
        status,
        Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
    ) {
        return Ok(());
    }
    let spec = TimeToLiveSpecification::builder()
        .attribute_name(attribute)
        .enabled(true)
        .build()
        .map_err(build_error)?;
    db.update_time_to_live()
        .table_name(table)
        .time_to_live_specification(spec)
        .send()
        .await
        .map_err(|e| classify("UpdateTimeToLive", e))?;
    Ok(())
}

async fn wait_until_active(db: &aws_sdk_dynamodb::Client, table: &str) -> Result<(), BackendError> {
    for _ in 0..120 {
        let described = db
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| classify("DescribeTable", e))?;
        if described.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Err(BackendError::transient(format!(
        "table {table} did not become active"
    )))
}

async fn create_bus(events: &aws_sdk_eventbridge::Client, bus: &str) -> Result<(), BackendError> {
    match events.create_event_bus().name(bus).send().await {
        Ok(_) => Ok(()),
        Err(error)
            if error
                .as_service_error()
                .is_some_and(|e| e.is_resource_already_exists_exception()) =>
        {
            Ok(())
        }
        Err(error) => Err(classify("CreateEventBus", error)),
    }
}

/// Looks a queue's URL up by its name.
pub(crate) async fn queue_url(
    sqs: &aws_sdk_sqs::Client,
    name: &str,
) -> Result<String, BackendError> {
    let output = sqs
        .get_queue_url()
        .queue_name(name)
        .send()
        .await
        .map_err(|e| classify("GetQueueUrl", e))?;
    output
        .queue_url()
        .map(str::to_owned)
        .ok_or_else(|| BackendError::permanent(format!("queue {name} has no URL")))
}
