//! The port contract on the memory backend, the simulator's: plain maps behind a lock, on the
//! fixture's clock.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::memory;
use seatclaim_core::ports::Redelivery;
use seatclaim_e2e::{Fixture, JumpClock};

async fn memory() -> Fixture {
    let clock = Arc::new(JumpClock::default());
    let settings = Redelivery {
        visibility_timeout: Duration::from_secs(1),
        max_receive_count: 3,
    };
    Fixture {
        backend: memory::open(clock.clone(), settings).backend,
        clock,
        visibility_timeout: settings.visibility_timeout,
        max_receive_count: settings.max_receive_count,
        storage: None,
    }
}

seatclaim_e2e::port_contract!(memory());
