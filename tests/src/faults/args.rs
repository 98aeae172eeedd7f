//! The `SEATCLAIM_FAULT_*` settings, parsed with clap as the shipped binaries parse theirs, and
//! the hook that wraps a process's backend in the faults they name: what makes the test crate's
//! `seatclaim-faulty-api` and `seatclaim-faulty-worker` the shipped processes with faults.

use std::path::PathBuf;

use clap::Args;
use seatclaim_core::ports::Backend;
use seatclaim_runtime::cli::BackendHook;

use super::FaultSettings;

/// Which faults the test crate's binaries inject, from `SEATCLAIM_FAULT_*` (or the flags of the
/// same names). All are off by default.
#[derive(Debug, Clone, Args)]
pub struct FaultArgs {
    /// Faults apply only while this file exists: the test "fixes the cause" by deleting it.
    #[arg(long, env = "SEATCLAIM_FAULT_WHILE")]
    pub fault_while: Option<PathBuf>,
    /// Share (0 to 1) of inventory writes that fail with a transient error, half of them before
    /// the write and half after it committed (a timeout the caller cannot tell from a failure).
    #[arg(
        long,
        env = "SEATCLAIM_FAULT_STORE_FAILURE_RATE",
        default_value_t = 0.0
    )]
    pub store_failure_rate: f64,
    /// Extra copies of every admitted intent, sent after random delays of up to a second.
    #[arg(
        long,
        env = "SEATCLAIM_FAULT_DUPLICATE_DELIVERIES",
        default_value_t = 0
    )]
    pub duplicate_deliveries: u32,
    /// The event bus refuses every publication.
    #[arg(long, env = "SEATCLAIM_FAULT_BUS_DOWN", default_value_t = false, action = clap::ArgAction::Set)]
    pub bus_down: bool,
    /// Claims of this buyer's intents always fail (transiently): an intent that keeps failing.
    #[arg(long, env = "SEATCLAIM_FAULT_FAILING_BUYER")]
    pub failing_buyer: Option<String>,
    /// Seeds the injected randomness, so a failing fault run replays (random when unset).
    #[arg(long, env = "SEATCLAIM_FAULT_SEED")]
    pub fault_seed: Option<u64>,
}

impl FaultArgs {
    /// The settings these arguments describe.
    #[must_use]
    pub fn settings(&self) -> FaultSettings {
        FaultSettings {
            fault_while: self.fault_while.clone(),
            store_failure_rate: self.store_failure_rate,
            duplicate_deliveries: self.duplicate_deliveries,
            bus_down: self.bus_down,
            failing_buyer: self.failing_buyer.clone(),
            seed: self.fault_seed,
        }
    }
}

impl BackendHook for FaultArgs {
    fn wrap(&self, backend: Backend) -> Backend {
        self.settings().inject(backend)
    }
}
