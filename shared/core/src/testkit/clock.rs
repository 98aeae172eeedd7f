use std::sync::Mutex;

use crate::ports::Clock;
use jiff::{SignedDuration, Timestamp};

/// Wall-clock time plus an offset the test can push forward: real waits still pass (queues that
/// time visibility on their own clock keep working) and a test can jump past a hold's deadline.
#[derive(Debug, Default)]
pub struct JumpClock {
    offset: Mutex<SignedDuration>,
}

impl JumpClock {
    /// Moves "now" forward by `by`.
    pub fn advance(&self, by: SignedDuration) {
        let mut offset = self.offset.lock().expect("clock lock");
        *offset += by;
    }
}

impl Clock for JumpClock {
    fn now(&self) -> Timestamp {
        let offset = *self.offset.lock().expect("clock lock");
        Timestamp::now() + offset
    }
}
