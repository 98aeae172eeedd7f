//! What the tests of every crate share: a [`JumpClock`] to move past deadlines instead of sleeping,
//! [`process_batch`] to drive the worker's step by hand, seeds that make a random choice again
//! ([`test_seed`], [`seeded_rng`]), [`poll_until`] to wait for a condition instead of sleeping
//! for a guess, and [`running`] to use a backend opened outside a service with its background
//! tasks. The port contract ([`crate::contract`]) is written with them, and the end-to-end
//! suites use the same ones. Compiled only with the core's `testkit` feature.

mod batches;
mod clock;
mod running;
mod seed;
mod wait;

pub use batches::process_batch;
pub use clock::JumpClock;
pub use running::running;
pub use seed::{seeded_rng, test_seed};
pub use wait::poll_until;
