//! Every end-to-end suite, in one test binary: the app, its binaries and the AWS SDKs are linked
//! once instead of once per suite. A suite is a module (a file, its own modules in the folder of
//! its name), some gathered in folders by subject (`aws/`, `faults/`, `http/`, `operations/`);
//! its header says the backends it runs on (`//! Backends: both` suites run again on the
//! emulators, `tests/run.sh` derives the list), and `cargo test --test e2e -- http::contract::`
//! runs one. Tests that read a process-wide metric exactly run in a child process of their own
//! (`seatclaim_e2e::run_in_own_process`).

mod architecture;
mod auth;
mod aws;
mod browser;
mod contention;
mod deploy;
mod docs;
mod faults;
mod http;
mod loadgen;
mod operations;
mod seat_limit;
mod simulation;
mod worker_batches;
mod workers;
