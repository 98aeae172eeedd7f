//! Jittered, capped exponential backoff, so retries from many intents or workers spread out
//! instead of hammering a struggling backend in step.

use std::time::Duration;

const BASE: Duration = Duration::from_millis(500);
const CAP: Duration = Duration::from_secs(30);

/// The delay before attempt `attempt + 1`, after `attempt` (1-based) failed: between half and all
/// of `BASE * 2^(attempt-1)`, capped at `CAP`.
#[must_use]
pub fn delay_after(attempt: u32) -> Duration {
    let exponent = attempt.saturating_sub(1).min(16);
    let ceiling = BASE.saturating_mul(1 << exponent).min(CAP);
    ceiling.mul_f64(0.5 + fastrand::f64() / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_delay_grows_with_each_attempt_and_stops_at_the_cap() {
        for _ in 0..100 {
            let first = delay_after(1);
            assert!(first >= BASE / 2 && first <= BASE, "{first:?}");
            let third = delay_after(3);
            assert!(third >= BASE * 2 && third <= BASE * 4, "{third:?}");
            let late = delay_after(40);
            assert!(late >= CAP / 2 && late <= CAP, "{late:?}");
        }
    }
}
