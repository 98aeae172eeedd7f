//! seatclaim's composition: the configuration a process reads, the backend it opens (the one
//! place that picks adapters), the background loops, telemetry and shutdown, shared by the API,
//! the worker and `seatclaimctl`.
//!
//! Features: `embedded` and `aws` (both default) link each backend's crate; `faults` (off by
//! default, turned on by the test crate only) compiles fault injection around either.

#[cfg(not(any(feature = "embedded", feature = "aws")))]
compile_error!(
    "seatclaim needs a backend: enable the `embedded` feature, the `aws` feature, or both"
);

pub mod backend;
pub mod cli;
pub mod config;
pub mod executor;
#[cfg(feature = "faults")]
pub mod faults;
pub mod loops;
pub mod shutdown;
pub mod telemetry;
