//! The port contract on the AWS backend: SQS, DynamoDB and EventBridge on the local emulator.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::contract::Fixture;
use seatclaim_e2e::JumpClock;
use seatclaim_e2e::emulator::{emulator_config, fresh_settings, provision};

async fn on_emulator() -> Fixture {
    let config = emulator_config().await;
    let settings = fresh_settings();
    let visibility_timeout = Duration::from_secs(1);
    let max_receive_count = 3;
    provision(&config, &settings, visibility_timeout, max_receive_count).await;
    let clock = Arc::new(JumpClock::default());
    let backend = seatclaim_aws::open_with(&config, &settings, visibility_timeout, clock.clone())
        .await
        .expect("the AWS backend opens on the emulator");
    Fixture {
        backend,
        clock,
        visibility_timeout,
        max_receive_count,
        storage: None,
    }
}

seatclaim_core::port_contract!(on_emulator());
