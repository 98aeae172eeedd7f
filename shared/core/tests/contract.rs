//! The port contract on the memory store, the simulator's backend: plain maps behind a lock, on
//! the fixture's clock. The contract is the core's own (`seatclaim_core::contract`), so the store
//! that stands in for the real backends is held to it by the crate that builds it.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::contract::Fixture;
use seatclaim_core::memory;
use seatclaim_core::ports::Redelivery;
use seatclaim_core::testkit::JumpClock;

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

seatclaim_core::port_contract!(memory());
