//! Which backend the suites run on, read by the app a suite starts and by the waits that pace
//! their polls to it.

use seatclaim_runtime::config::BackendKind;

/// The backend the suites run on: `SEATCLAIM_TEST_BACKEND=aws` runs them against the emulator.
pub fn test_backend() -> BackendKind {
    match std::env::var("SEATCLAIM_TEST_BACKEND").as_deref() {
        Ok("aws") => BackendKind::Aws,
        Ok("embedded") | Err(_) => BackendKind::Embedded,
        Ok(other) => panic!("SEATCLAIM_TEST_BACKEND must be embedded or aws, not {other:?}"),
    }
}
