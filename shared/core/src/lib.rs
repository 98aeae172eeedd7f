//! seatclaim's core: the domain that decides, the ports a backend must provide, the codec that
//! spells stored values, and the application layer that orders the steps of each use case.
//!
//! It names no backend: the adapters (`seatclaim-embedded`, `seatclaim-aws`) depend on it, never
//! the other way, and Cargo enforces it. The `testkit` feature adds what tests need of the core:
//! [`memory`], every port in plain maps, for the deterministic simulation and the tests;
//! [`contract`], the port contract every backend passes, which each backend crate runs from its
//! own tests; and [`testkit`], the clock, seeds and waits they are written with.

pub mod app;
pub mod codec;
#[cfg(feature = "testkit")]
pub mod contract;
pub mod domain;
pub mod identity;
#[cfg(feature = "testkit")]
pub mod memory;
pub mod ports;
pub mod reports;
pub mod step;
#[cfg(feature = "testkit")]
pub mod testkit;

pub use ports::Backend;
