//! The port contract on the memory store with its inventory decided by the core's optimistic
//! step (`seatclaim_core::step::optimistic`), every read and commit a call of its own, as the AWS
//! backend decides: the algorithm DynamoDB runs is held to the contract without an emulator.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::contract::Fixture;
use seatclaim_core::memory::{self, MemoryPlans, Optimistic};
use seatclaim_core::ports::Redelivery;
use seatclaim_core::testkit::JumpClock;

async fn optimistic() -> Fixture {
    let clock = Arc::new(JumpClock::default());
    let settings = Redelivery {
        visibility_timeout: Duration::from_secs(1),
        max_receive_count: 3,
    };
    let memory = memory::open(clock.clone(), settings);
    let plans = MemoryPlans::new(Arc::clone(&memory.store));
    let mut backend = memory.backend;
    backend.inventory = Arc::new(Optimistic::new(plans, memory.store));
    Fixture {
        backend,
        clock,
        visibility_timeout: settings.visibility_timeout,
        max_receive_count: settings.max_receive_count,
        storage: None,
    }
}

seatclaim_core::port_contract!(optimistic());
