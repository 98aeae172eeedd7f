//! The port contract (`seatclaim_core::contract`) on the AWS backend: SQS, DynamoDB and
//! EventBridge on the local emulators, each check on resources of its own. Where no emulator is
//! configured (`AWS_ENDPOINT_URL` and `AWS_ENDPOINT_URL_DYNAMODB` unset) every check passes
//! without running and the binary says so once, so `cargo test --workspace` passes on a machine
//! without one; `tests/run.sh` starts the emulators first, so CI runs it.

use std::io::Write;
use std::sync::{Arc, Once};
use std::time::Duration;

use seatclaim_aws::emulator::{NOT_CONFIGURED, fresh_settings, open, provision, sdk_config};
use seatclaim_core::contract::Fixture;
use seatclaim_core::testkit::JumpClock;

async fn on_emulator() -> Option<Fixture> {
    let Some(config) = sdk_config().await else {
        say_skipped();
        return None;
    };
    let settings = fresh_settings();
    let visibility_timeout = Duration::from_secs(1);
    let max_receive_count = 3;
    provision(&config, &settings, visibility_timeout, max_receive_count).await;
    let clock = Arc::new(JumpClock::default());
    let backend = open(&config, &settings, visibility_timeout, clock.clone())
        .await
        .expect("the AWS backend opens on the emulator");
    Some(Fixture {
        backend,
        clock,
        visibility_timeout,
        max_receive_count,
        storage: None,
    })
}

/// Says once per run that the contract was skipped, on the process's own stderr: the test
/// harness hides what a passing test prints, and a skip should not pass unseen.
fn say_skipped() {
    static SAID: Once = Once::new();
    SAID.call_once(|| {
        let _ = writeln!(
            std::io::stderr(),
            "seatclaim-aws: the port contract is skipped: {NOT_CONFIGURED}"
        );
    });
}

seatclaim_core::port_contract!(on_emulator());
