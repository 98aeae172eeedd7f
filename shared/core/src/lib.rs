//! seatclaim's core: the domain that decides, the ports a backend must provide, the codec that
//! spells stored values, and the application layer that orders the steps of each use case.
//!
//! It names no backend: the adapters (`seatclaim-embedded`, `seatclaim-aws`) depend on it, never
//! the other way, and Cargo enforces it. The `testkit` feature adds [`memory`], every port in
//! plain maps, for the deterministic simulation and the tests.

pub mod app;
pub mod codec;
pub mod domain;
pub mod identity;
#[cfg(feature = "testkit")]
pub mod memory;
pub mod ports;
pub mod reports;
pub mod step;

pub use ports::Backend;
