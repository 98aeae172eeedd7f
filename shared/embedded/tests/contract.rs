//! The port contract (`seatclaim_core::contract`) on the embedded backend: a real SQLite file in
//! a temporary folder, removed when each check ends.

use std::sync::Arc;
use std::time::Duration;

use seatclaim_core::contract::Fixture;
use seatclaim_core::ports::Redelivery;
use seatclaim_core::testkit::JumpClock;

async fn embedded() -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let clock = Arc::new(JumpClock::default());
    let queue = Redelivery {
        visibility_timeout: Duration::from_secs(1),
        max_receive_count: 3,
    };
    let backend = seatclaim_embedded::open(dir.path(), clock.clone(), queue)
        .expect("the embedded backend opens");
    Fixture {
        backend,
        clock,
        visibility_timeout: queue.visibility_timeout,
        max_receive_count: queue.max_receive_count,
        storage: Some(Box::new(dir)),
    }
}

seatclaim_core::port_contract!(embedded());
