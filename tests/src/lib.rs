//! Helpers for seatclaim's end-to-end suites: start the real app on a free port, drive it over
//! HTTP, run the real binaries as child processes, and check the invariants from the outside.

mod app;
mod invariants;
mod process;

pub use app::{AppOptions, TestApp, assert_problem};
pub use invariants::{Tally, check_invariants};
pub use process::{ChildProcess, binary};
