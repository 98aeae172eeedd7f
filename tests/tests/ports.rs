//! The port contract (`tests/src/contract/`), one module per store: the embedded backend on a
//! real SQLite file, the AWS backend on the local emulators, and the simulator's memory store.
//! One test binary for the three, so the contract is linked once.

mod aws;
mod embedded;
mod memory;
