//! The local AWS emulators that tests run this backend against, started by
//! `tests/emulator/start.sh`: DynamoDB Local (AWS's own DynamoDB engine) for DynamoDB, moto for
//! SQS and EventBridge. Here so that this crate's own tests (the port contract) and the
//! end-to-end suites find, name and provision them one way. Compiled only with the `emulator`
//! feature, which no shipped binary turns on.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::ports::{Backend, BackendError, Clock, Opened};

use crate::{AwsNames, AwsSettings};

/// What to do when no emulator is configured, for tests that skip or fail on it.
pub const NOT_CONFIGURED: &str = "no AWS emulator is configured (AWS_ENDPOINT_URL and \
     AWS_ENDPOINT_URL_DYNAMODB are unset): run `bash tests/run.sh`, or \
     `eval \"$(bash tests/emulator/start.sh)\"` first";

/// The endpoints an emulator answers on: moto for every service, DynamoDB Local for DynamoDB.
const ENDPOINTS: [&str; 2] = ["AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"];

/// The SDK configuration for the emulators, or `None` when neither endpoint is set (this machine
/// has no emulator configured, and a test may skip). Panics when either points anywhere but this
/// machine, or only one is set: tests create and fill resources, and must never touch a real
/// account.
pub async fn sdk_config() -> Option<aws_config::SdkConfig> {
    let endpoints = ENDPOINTS.map(|variable| std::env::var(variable).unwrap_or_default());
    if endpoints.iter().all(String::is_empty) {
        return None;
    }
    for (variable, endpoint) in ENDPOINTS.iter().zip(&endpoints) {
        assert!(
            is_local(endpoint),
            "the AWS tests need the local emulators, and {variable} is {endpoint:?}: run them \
             through `bash tests/run.sh`, or `eval \"$(bash tests/emulator/start.sh)\"` first"
        );
    }
    Some(crate::sdk_config().await)
}

/// Whether an endpoint is on this machine.
fn is_local(endpoint: &str) -> bool {
    ["http://127.0.0.1:", "http://localhost:", "http://[::1]:"]
        .iter()
        .any(|p| endpoint.starts_with(p))
}

/// Settings for a fresh set of resources: a unique prefix per test, so tests never share state.
#[must_use]
pub fn fresh_settings() -> AwsSettings {
    let id = uuid::Uuid::new_v4().simple().to_string();
    AwsSettings {
        aws_prefix: format!("t{}", &id[..12]),
        ..AwsSettings::default()
    }
}

/// Creates the resources for `settings` on the emulator, failing the test if it refuses them.
pub async fn provision(
    config: &aws_config::SdkConfig,
    settings: &AwsSettings,
    visibility_timeout: Duration,
    max_receive_count: u32,
) {
    crate::provision(
        config,
        &AwsNames::from_settings(settings),
        visibility_timeout,
        max_receive_count,
    )
    .await
    .expect("the emulator accepts the resources");
}

/// Opens the backend on the emulator with `config`, its background tasks running until it is
/// dropped (`seatclaim_core::testkit::running`), as a service's loops run them.
pub async fn open(
    config: &aws_config::SdkConfig,
    settings: &AwsSettings,
    visibility_timeout: Duration,
    clock: Arc<dyn Clock>,
) -> Result<Backend, BackendError> {
    let driver = crate::open_with(config, settings, visibility_timeout, clock).await?;
    Ok(seatclaim_core::testkit::running(Opened::of(&driver)))
}
