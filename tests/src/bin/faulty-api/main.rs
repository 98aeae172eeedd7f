//! `seatclaim-faulty-api`: the shipped API's process (`seatclaim_api::run`) with the faults that
//! `SEATCLAIM_FAULT_*` name wrapped around its backend, for fault tests that need a real process.
//! Built only as part of the test crate, so what ships never holds fault injection.

use seatclaim_e2e::faults::FaultArgs;

fn main() -> anyhow::Result<()> {
    seatclaim_api::run::<FaultArgs>()
}
