//! The AWS backend's driver: what the composition calls to open, provision, migrate, back up and
//! restore the resources of one prefix, and the background work an open backend needs (its line
//! counts' flusher, and on a worker the settlements' server), which the runtime's loops run.

use std::path::Path;
use std::sync::Arc;

use super::events::event_cache::EventCache;
use super::line::counts;
use super::outbox::event_bus::EventBus;
use super::queue::settlements;
use super::queue::sqs::SqsQueue;
use super::{
    AwsNames, AwsSettings, DynamoStore, Kept, Migration, Process, Settlements, migrate_for,
    provision_for, sdk_config,
};
use seatclaim_core::ports::{
    Backend, BackendError, BackgroundTask, Clock, Driver, EventPublisher, Redelivery,
};
use seatclaim_core::reports::{BackedUp, Restored};

/// What the AWS backend says to `backup` and `restore`: its tables restore from DynamoDB's
/// point-in-time recovery, which the stack turns on.
const BACKUPS: &str = "the AWS backend is backed up by DynamoDB point-in-time recovery \
     (on in the stack); see \"Restoring the AWS backend\" in docs/aws-operations.md";

/// The AWS backend, opened: the store every DynamoDB port is, the intent queue and the bus.
pub struct AwsDriver {
    store: Arc<DynamoStore>,
    queue: Arc<SqsQueue>,
    publisher: Arc<dyn EventPublisher>,
    clock: Arc<dyn Clock>,
}

/// Opens the AWS backend with an already loaded SDK configuration (the emulators' in the
/// tests): resolves the queue URLs and builds a client per service. Nothing runs in the
/// background until the caller runs [`Driver::tasks`].
pub async fn open_with(
    config: &aws_config::SdkConfig,
    settings: &AwsSettings,
    visibility_timeout: std::time::Duration,
    clock: Arc<dyn Clock>,
) -> Result<AwsDriver, BackendError> {
    let names = AwsNames::from_settings(settings);
    let sqs = aws_sdk_sqs::Client::new(config);
    let queue = Arc::new(SqsQueue::connect(sqs, settings, &names, visibility_timeout).await?);
    let store = Arc::new(DynamoStore {
        db: aws_sdk_dynamodb::Client::new(config),
        names: names.clone(),
        queue: Arc::clone(&queue),
        clock: Arc::clone(&clock),
        events: EventCache::new(),
        settings: Kept {
            held_shards: settings.held_shards(),
            retention: settings.retention,
            settlements: settings.settlements,
        },
        process: Process {
            id: uuid::Uuid::new_v4().to_string(),
            ..Process::default()
        },
    });
    queue.open_sales_with(&store);
    let publisher = Arc::new(EventBus::new(
        aws_sdk_eventbridge::Client::new(config),
        names.event_bus,
    ));
    Ok(AwsDriver {
        store,
        queue,
        publisher,
        clock,
    })
}

impl Driver for AwsDriver {
    type Settings = AwsSettings;
    type Ready = AwsNames;
    type Migration = Migration;

    /// Opens the backend with the credentials and endpoints of the standard AWS chain.
    async fn open(
        settings: &AwsSettings,
        queue: Redelivery,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, BackendError> {
        open_with(
            &sdk_config().await,
            settings,
            queue.visibility_timeout,
            clock,
        )
        .await
    }

    fn backend(&self) -> Backend {
        Backend {
            catalog: self.store.clone(),
            admissions: self.store.clone(),
            jobs: self.store.clone(),
            inventory: self.store.clone(),
            outbox: self.store.clone(),
            queue: self.queue.clone(),
            publisher: self.publisher.clone(),
            clock: self.clock.clone(),
        }
    }

    /// The line counts' flusher in every process, and the settlements' server where this
    /// process serves them (the worker). Each holds the store weakly, so it also ends when the
    /// backend is dropped.
    fn tasks(&self) -> Vec<BackgroundTask> {
        let store = Arc::downgrade(&self.store);
        let mut tasks = vec![counts::flusher(store.clone())];
        if self.store.settings.settlements == Settlements::ServedHere {
            tasks.push(settlements::server(store));
        }
        tasks
    }

    async fn provision(
        settings: &AwsSettings,
        queue: Redelivery,
    ) -> Result<AwsNames, BackendError> {
        provision_for(settings, queue.visibility_timeout, queue.max_receive_count).await
    }

    async fn migrate(settings: &AwsSettings, queue: Redelivery) -> Result<Migration, BackendError> {
        migrate_for(settings, queue.visibility_timeout, queue.max_receive_count).await
    }

    fn backup(_: &AwsSettings, _: &Path) -> Result<BackedUp, BackendError> {
        Err(BackendError::permanent(BACKUPS))
    }

    fn restore(_: &AwsSettings, _: &Path) -> Result<Restored, BackendError> {
        Err(BackendError::permanent(BACKUPS))
    }
}
