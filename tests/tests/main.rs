//! Every end-to-end suite, in one test binary: the app, its binaries and the AWS SDKs are linked
//! once instead of once per suite. A suite is a module (a file here, its own modules in the folder
//! of its name); its header says the backends it runs on (`//! Backends: both` suites run again on
//! the emulators, `tests/run.sh` derives the list), and `cargo test --test e2e -- <suite>::` runs
//! one. Tests that read a process-wide metric exactly run in a child process of their own
//! (`seatclaim_e2e::run_in_own_process`).

mod architecture;
mod auth;
mod aws_migration;
mod aws_rejections;
mod aws_relay;
mod aws_requests;
mod backup;
mod browser;
mod contention;
mod crash;
mod ctl;
mod deploy_templates;
mod expiry;
mod fault_duplicates;
mod faults;
mod http_contract;
mod limits;
mod loadgen;
mod migrations;
mod observability;
mod openapi;
mod ports;
mod retention;
mod seat_limit;
mod seat_map_cache;
mod shutdown;
mod simulation;
mod worker_batches;
mod workers;
