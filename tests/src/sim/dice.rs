//! The one source of randomness of a simulated run: a generator seeded by the run's seed, shared
//! by the scheduler, the faults and the actors. Every choice is drawn from it in an order the
//! run itself fixes, so a seed replays exactly.

use std::ops::Range;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// The seeded generator, shared.
#[derive(Clone)]
pub struct Dice {
    rng: Arc<Mutex<fastrand::Rng>>,
}

impl Dice {
    /// The generator of `seed`.
    #[must_use]
    pub fn new(seed: u64) -> Self {
        Self {
            rng: Arc::new(Mutex::new(fastrand::Rng::with_seed(seed))),
        }
    }

    fn draw<T>(&self, f: impl FnOnce(&mut fastrand::Rng) -> T) -> T {
        f(&mut self.rng.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// True with probability `p`.
    #[must_use]
    pub fn chance(&self, p: f64) -> bool {
        p > 0.0 && self.draw(fastrand::Rng::f64) < p
    }

    /// A number in `range`.
    #[must_use]
    pub fn between(&self, range: Range<u64>) -> u64 {
        self.draw(|rng| rng.u64(range))
    }

    /// An index below `n` (`n` > 0).
    #[must_use]
    pub fn below(&self, n: usize) -> usize {
        self.draw(|rng| rng.usize(..n))
    }

    /// A share between `low` and `high`.
    #[must_use]
    pub fn rate(&self, low: f64, high: f64) -> f64 {
        low + self.draw(fastrand::Rng::f64) * (high - low)
    }

    /// A duration of `range` milliseconds.
    #[must_use]
    pub fn millis(&self, range: Range<u64>) -> Duration {
        Duration::from_millis(self.between(range))
    }

    /// One of `items`, or `None` if there are none.
    #[must_use]
    pub fn pick<'a, T>(&self, items: &'a [T]) -> Option<&'a T> {
        (!items.is_empty()).then(|| &items[self.below(items.len())])
    }

    /// Shuffles `items` in place.
    pub fn shuffle<T>(&self, items: &mut [T]) {
        self.draw(|rng| rng.shuffle(items));
    }
}
