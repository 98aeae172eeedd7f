use jiff::Timestamp;

/// The time source for every decision that depends on "now" (hold deadlines, expiry), so that the
/// contract suite can move time without sleeping.
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The wall clock, for production.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }
}
