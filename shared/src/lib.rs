//! seatclaim's shared library: the domain, the ports a backend must provide, the adapters that
//! provide them, and the configuration, telemetry and shutdown plumbing both binaries use.
//!
//! Features: `embedded` and `aws` (both default) compile each backend's adapters; `faults`
//! (off by default, turned on by the test crate only) compiles fault injection.

#[cfg(not(any(feature = "embedded", feature = "aws")))]
compile_error!(
    "seatclaim needs a backend: enable the `embedded` feature, the `aws` feature, or both"
);

pub mod adapters;
pub mod app;
pub mod backend;
pub mod codec;
pub mod config;
pub mod domain;
pub mod identity;
pub mod ports;
pub mod reports;
pub mod runtime;
pub mod shutdown;
pub mod telemetry;

pub use ports::Backend;
