//! Helpers for seatclaim's end-to-end suites: start the real app on a free port, drive it over
//! HTTP, run the real binaries as child processes, check the invariants from the outside, and
//! hold every backend to the same port contract.

#![allow(
    clippy::unwrap_used,
    reason = "test support: a failed unwrap is a failed test"
)]

mod app;
mod clock;
pub mod contract;
pub mod emulator;
mod invariants;
mod process;
pub mod request_log;

pub use app::{AppOptions, TestApp, assert_problem, test_backend};
pub use clock::JumpClock;
pub use contract::Fixture;
pub use invariants::{Tally, check_invariants};
pub use process::{ChildProcess, binary};
