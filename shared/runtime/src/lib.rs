//! seatclaim's composition: the configuration a process reads, the backend it opens (the one
//! place that picks adapters), the background loops, telemetry and shutdown, shared by the API,
//! the worker and `seatclaimctl`.
//!
//! Features: `embedded` and `aws` (both default) link each backend's crate. Fault injection is
//! not here: it lives in the test crate, which wraps the backend through [`cli::BackendHook`], so
//! no build of a shipped binary can carry it, whatever else the workspace holds.

#[cfg(not(any(feature = "embedded", feature = "aws")))]
compile_error!(
    "seatclaim needs a backend: enable the `embedded` feature, the `aws` feature, or both"
);

pub mod backend;
pub mod background;
pub mod cli;
pub mod config;
mod drivers;
pub mod executor;
pub mod listen;
pub mod loops;
pub mod pages;
pub mod shutdown;
pub mod telemetry;
