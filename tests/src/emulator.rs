//! The AWS emulators the AWS-backend suites run against, started by `tests/emulator/start.sh`:
//! DynamoDB Local (AWS's own DynamoDB engine) for DynamoDB, moto for SQS and EventBridge.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_aws::AwsNames;
use seatclaim_core::Backend;
use seatclaim_core::ports::{BackendError, Clock, Opened};
use seatclaim_runtime::config::AwsSettings;

/// The SDK configuration for the emulators. Refuses to run unless `AWS_ENDPOINT_URL` (moto) and
/// `AWS_ENDPOINT_URL_DYNAMODB` (DynamoDB Local) both point at this machine: these suites create
/// and fill resources, and must never touch a real account.
pub async fn emulator_config() -> aws_config::SdkConfig {
    for variable in ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"] {
        let endpoint = std::env::var(variable).unwrap_or_default();
        assert!(
            is_local(&endpoint),
            "the AWS suites need the emulators: run them through `bash tests/run.sh`, or \
             `eval \"$(bash tests/emulator/start.sh)\"` first ({variable} is {endpoint:?})"
        );
    }
    seatclaim_aws::sdk_config().await
}

/// Whether an endpoint is on this machine.
fn is_local(endpoint: &str) -> bool {
    ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]
        .iter()
        .any(|p| endpoint.starts_with(p))
}

/// Settings for a fresh set of resources: a unique prefix per test, so tests never share state.
pub fn fresh_settings() -> AwsSettings {
    let id = uuid::Uuid::new_v4().simple().to_string();
    AwsSettings {
        aws_prefix: format!("t{}", &id[..12]),
        ..AwsSettings::default()
    }
}

/// Creates the resources for `settings` on the emulator.
pub async fn provision(
    config: &aws_config::SdkConfig,
    settings: &AwsSettings,
    visibility_timeout: Duration,
    max_receive_count: u32,
) {
    seatclaim_aws::provision(
        config,
        &AwsNames::from_settings(settings),
        visibility_timeout,
        max_receive_count,
    )
    .await
    .expect("the emulator accepts the resources");
}

/// Opens the AWS backend on the emulator with `config`, its background tasks running until it
/// is dropped (as a service's loops run them).
pub async fn open(
    config: &aws_config::SdkConfig,
    settings: &AwsSettings,
    visibility_timeout: Duration,
    clock: Arc<dyn Clock>,
) -> Result<Backend, BackendError> {
    let driver = seatclaim_aws::open_with(config, settings, visibility_timeout, clock).await?;
    Ok(crate::running(Opened::of(&driver)))
}

/// A downstream consumer of reservation events: an EventBridge rule on the bus delivering to an
/// SQS queue of its own, as a notification or analytics service would subscribe.
pub struct EventConsumer {
    sqs: aws_sdk_sqs::Client,
    url: String,
    seen: tokio::sync::Mutex<Vec<serde_json::Value>>,
}

impl EventConsumer {
    /// Creates the queue and the rule that routes every seatclaim event to it.
    pub async fn subscribe(config: &aws_config::SdkConfig, settings: &AwsSettings) -> Self {
        let names = AwsNames::from_settings(settings);
        let sqs = aws_sdk_sqs::Client::new(config);
        let queue = format!("{}-consumer", settings.aws_prefix);
        let url = sqs
            .create_queue()
            .queue_name(&queue)
            .send()
            .await
            .expect("consumer queue")
            .queue_url()
            .expect("a URL")
            .to_owned();
        let arn = sqs
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
            .send()
            .await
            .expect("queue attributes")
            .attributes()
            .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
            .cloned()
            .expect("a queue ARN");
        let events = aws_sdk_eventbridge::Client::new(config);
        let rule = format!("{}-all-reservations", settings.aws_prefix);
        events
            .put_rule()
            .name(&rule)
            .event_bus_name(&names.event_bus)
            .event_pattern(format!(
                r#"{{"source": ["{}"]}}"#,
                seatclaim_core::domain::EVENT_SOURCE
            ))
            .send()
            .await
            .expect("the rule is created");
        let target = aws_sdk_eventbridge::types::Target::builder()
            .id("consumer")
            .arn(arn)
            .build()
            .expect("a target");
        events
            .put_targets()
            .rule(&rule)
            .event_bus_name(&names.event_bus)
            .targets(target)
            .send()
            .await
            .expect("the target is set");
        Self {
            sqs,
            url,
            seen: tokio::sync::Mutex::new(Vec::new()),
        }
    }

    /// Every event delivered so far (each message is read once and remembered).
    pub async fn drain(&self) -> Vec<serde_json::Value> {
        let mut seen = self.seen.lock().await;
        loop {
            let output = self
                .sqs
                .receive_message()
                .queue_url(&self.url)
                .max_number_of_messages(10)
                .send()
                .await
                .expect("receive");
            if output.messages().is_empty() {
                return seen.clone();
            }
            for message in output.messages() {
                seen.push(
                    serde_json::from_str(message.body().unwrap_or_default())
                        .expect("an event envelope"),
                );
                self.sqs
                    .delete_message()
                    .queue_url(&self.url)
                    .receipt_handle(message.receipt_handle().unwrap_or_default())
                    .send()
                    .await
                    .expect("delete");
            }
        }
    }
}
