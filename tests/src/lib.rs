//! Helpers for seatclaim's end-to-end suites: start the real app (on a free port, or in-process),
//! drive it over HTTP, run the real binaries as child processes, and check the invariants from
//! the outside. Tests wait on conditions with [`eventually`], move a [`JumpClock`] instead of
//! sleeping past deadlines, and take every random choice from a printed [`test_seed`]: the core's
//! test kit (`seatclaim_core::testkit`), which the port contract is written with too.

#![allow(
    clippy::unwrap_used,
    reason = "test support: a failed unwrap is a failed test"
)]

mod app;
mod client;
pub mod emulator;
pub mod faults;
mod invariants;
pub mod oidc_issuer;
mod own_process;
mod process;
pub mod request_log;
pub mod sim;
pub mod stripe;
mod suite_backend;
pub mod tokens;
mod wait;

pub use app::{AppOptions, TestApp, assert_problem, hs256};
pub use client::{Call, Reply, Transport, TransportKind, test_transport};
pub use invariants::{Tally, check_invariants};
pub use own_process::run_in_own_process;
pub use process::{ChildProcess, binary, cargo};
pub use seatclaim_core::testkit::{JumpClock, process_batch, running, seeded_rng, test_seed};
pub use suite_backend::test_backend;
pub use wait::{eventually, poll_interval};
