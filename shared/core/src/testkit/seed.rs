//! Seeds for randomised tests: every random choice a test makes comes from one seed it prints, so
//! a failing run's choices can be made again.

use std::env::VarError;

/// The seed of a randomised test: `SEATCLAIM_TEST_SEED` if set, else a random one. Printed either
/// way (`cargo test` shows it when the test fails), with the line that reruns the same choices.
pub fn test_seed() -> u64 {
    let seed = match std::env::var("SEATCLAIM_TEST_SEED") {
        Ok(text) => text.trim().parse().unwrap_or_else(|_| {
            panic!("SEATCLAIM_TEST_SEED must be an unsigned 64-bit integer, not {text:?}")
        }),
        Err(VarError::NotPresent) => fastrand::u64(..),
        Err(VarError::NotUnicode(text)) => {
            panic!("SEATCLAIM_TEST_SEED must be an unsigned 64-bit integer, not {text:?}")
        }
    };
    eprintln!("seed = {seed}; rerun with SEATCLAIM_TEST_SEED={seed}");
    seed
}

/// A random number generator seeded (and printed) by [`test_seed`]: the one source of randomness
/// for a randomised test.
pub fn seeded_rng() -> fastrand::Rng {
    fastrand::Rng::with_seed(test_seed())
}
