//! The per-buyer request rate: a token bucket per buyer (the `governor` crate's GCRA), so one
//! buyer's bot cannot take the admission path from everyone else. Limiting by client address
//! is the edge's job (the stack's WAF rule), not the API's.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use seatclaim_shared::domain::BuyerId;

/// How often buyers idle long enough to be back at a full bucket are forgotten.
const FORGET_EVERY: Duration = Duration::from_secs(60);

/// Reservation POSTs per buyer: `per_second` on average, `burst` at once.
pub struct BuyerRate {
    limiter: Arc<DefaultKeyedRateLimiter<BuyerId>>,
}

impl BuyerRate {
    /// A limiter of `per_second` requests a second with bursts of `burst` (each at least 1);
    /// it forgets idle buyers in the background.
    #[must_use]
    pub fn new(per_second: u32, burst: u32) -> Self {
        let rate = NonZeroU32::new(per_second).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(burst).unwrap_or(NonZeroU32::MIN);
        let limiter = Arc::new(RateLimiter::keyed(
            Quota::per_second(rate).allow_burst(burst),
        ));
        tokio::spawn(forget_idle(Arc::downgrade(&limiter)));
        Self { limiter }
    }

    /// `Ok` if `buyer` may make a request now; otherwise how many whole seconds to wait (the
    /// `Retry-After`, at least 1).
    pub fn check(&self, buyer: &BuyerId) -> Result<(), u64> {
        self.limiter.check_key(buyer).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.limiter.clock().now());
            (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
        })
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
