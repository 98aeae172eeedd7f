//! The AWS emulators the AWS-backend suites run against, started by `tests/emulator/start.sh`:
//! DynamoDB Local (AWS's own DynamoDB engine) for DynamoDB, moto for SQS and EventBridge. Finding
//! and provisioning them is the AWS crate's (`seatclaim_aws::emulator`, its `emulator` feature);
//! this adds what only the suites need.

use seatclaim_aws::AwsNames;
use seatclaim_aws::emulator::{NOT_CONFIGURED, sdk_config};
use seatclaim_runtime::config::AwsSettings;

pub use seatclaim_aws::emulator::{fresh_settings, open, provision};

/// The SDK configuration for the emulators (`seatclaim_aws::emulator`). Fails the test when none
/// is configured: the suites that call it are the AWS backend's, and skipping them would pass a
/// run that tested nothing.
pub async fn emulator_config() -> aws_config::SdkConfig {
    sdk_config().await.expect(NOT_CONFIGURED)
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
