//! The per-buyer request rate: a token bucket per buyer (the `governor` crate's GCRA), so one
//! buyer's bot cannot take the admission path from everyone else. Limiting by client address
//! is the edge's job (the stack's WAF rule), not the API's.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use seatclaim_core::domain::BuyerId;

/// How often buyers idle long enough to be back at a full bucket are forgotten.
const FORGET_EVERY: Duration = Duration::from_secs(60);
/// The most buyers whose buckets one process keeps, so that made-up buyer ids cannot grow the
/// limiter without bound (about 64 bytes each).
const MOST_BUYERS: usize = 200_000;

/// Reservation POSTs per buyer: `per_second` on average, `burst` at once.
pub struct BuyerRate {
    limiter: Arc<DefaultKeyedRateLimiter<BuyerId>>,
    most_buyers: usize,
}

impl BuyerRate {
    /// A limiter of `per_second` requests a second with bursts of `burst` (each at least 1);
    /// it forgets idle buyers in the background.
    #[must_use]
    pub fn new(per_second: u32, burst: u32) -> Self {
        Self::keeping(per_second, burst, MOST_BUYERS)
    }

    /// The limiter of [`BuyerRate::new`], keeping at most `most_buyers` buyers' buckets.
    fn keeping(per_second: u32, burst: u32, most_buyers: usize) -> Self {
        let rate = NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let limiter = Arc::new(RateLimiter::keyed(
            Quota::per_second(rate).allow_burst(burst),
        ));
        tokio::spawn(forget_idle(Arc::downgrade(&limiter)));
        Self {
            limiter,
            most_buyers,
        }
    }

    /// `Ok` if `buyer` may make a request now; otherwise how many whole seconds to wait (the
    /// `Retry-After`, at least 1). With the most buyers kept, those back at a full bucket are
    /// forgotten at once; if every one is still counting, a request waits a second as one past
    /// its rate does (holding that many buyers busy takes a request from each every few
    /// seconds).
    pub fn check(&self, buyer: &BuyerId) -> Result<(), u64> {
        if self.limiter.len() >= self.most_buyers {
            self.limiter.retain_recent();
            if self.limiter.len() >= self.most_buyers {
                return Err(1);
            }
        }
        self.limiter.check_key(buyer).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.limiter.clock().now());
            (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
        })
    }
}

impl BuyerRate {
    /// Spends `requests` more of `buyer`'s bucket at once (a wrong access code's cost), as far
    /// as the bucket holds them: the buyer's next requests wait that much longer.
    pub fn spend(&self, buyer: &BuyerId, requests: u32) {
        for _ in 0..requests {
            if self.limiter.check_key(buyer).is_err() {
                return;
            }
        }
    }
}

async fn forget_idle(limiter: std::sync::Weak<DefaultKeyedRateLimiter<BuyerId>>) {
    let mut ticks = tokio::time::interval(FORGET_EVERY);
    loop {
        ticks.tick().await;
        let Some(limiter) = limiter.upgrade() else {
            return;
        };
        limiter.retain_recent();
        limiter.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_limiter_keeps_at_most_its_most_buyers() {
        let rate = BuyerRate::keeping(5, 10, 3);
        let buyer = |n: u32| BuyerId::parse(&format!("b{n}")).expect("an id");
        for n in 0..3 {
            assert_eq!(rate.check(&buyer(n)), Ok(()));
        }
        assert_eq!(rate.check(&buyer(3)), Err(1), "a fourth buyer waits");
        assert_eq!(rate.limiter.len(), 3);
        assert_eq!(
            rate.check(&buyer(0)),
            Err(1),
            "so does a known one while it is full"
        );
    }
}
