//! seatclaim's shared library: the domain, the ports a backend must provide, the adapters that
//! provide them, and the configuration, telemetry and shutdown plumbing both binaries use.

pub mod adapters;
pub mod backend;
pub mod config;
pub mod domain;
pub mod ports;
pub mod shutdown;
pub mod telemetry;

pub use backend::Backend;
