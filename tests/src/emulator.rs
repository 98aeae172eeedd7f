//! The AWS emulator the AWS-backend suites run against (moto, started by `tests/emulator/start.sh`).

use std::time::Duration;

use seatclaim_shared::adapters::aws::{self, AwsNames};
use seatclaim_shared::config::AwsSettings;

/// The SDK configuration for the emulator. Refuses to run unless `AWS_ENDPOINT_URL` points at this
/// machine: these suites create and fill resources, and must never touch a real account.
pub async fn emulator_config() -> aws_config::SdkConfig {
    let endpoint = std::env::var("AWS_ENDPOINT_URL").unwrap_or_default();
    let local = ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]
        .iter()
        .any(|p| endpoint.starts_with(p));
    assert!(
        local,
        "the AWS suites need the emulator: run them through `bash tests/run.sh`, or \
         `eval \"$(bash tests/emulator/start.sh)\"` first (AWS_ENDPOINT_URL is {endpoint:?})"
    );
    aws::sdk_config().await
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
    aws::provision(
        config,
        &AwsNames::from_settings(settings),
        visibility_timeout,
        max_receive_count,
    )
    .await
    .expect("the emulator accepts the resources");
}
