//! The port contract (`seatclaim_core::contract`) on the AWS backend, on the local emulators.
//! The memory store and the embedded backend run it from their own crates.

mod aws;
