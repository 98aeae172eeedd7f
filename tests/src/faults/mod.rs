//! Fault injection for the fault tests: wrappers around the real adapters that fail the way
//! production fails (throttled or timed-out writes, duplicated and reordered delivery, an event
//! bus that is down, an intent that always fails). It lives in the test crate only, so no crate a
//! shipped binary links has it: the in-process apps wrap their backend with
//! [`FaultSettings::inject`], and the test crate's own binaries (`seatclaim-faulty-api`,
//! `seatclaim-faulty-worker`) run the shipped processes with [`FaultArgs`] as their
//! [`BackendHook`](seatclaim_runtime::cli::BackendHook), read from `SEATCLAIM_FAULT_*`. A process with faults on says so in its log.

mod args;
mod wrappers;

pub use args::FaultArgs;

use std::path::PathBuf;

use seatclaim_core::ports::Backend;

/// Which faults to inject. All are off by default.
#[derive(Debug, Clone, Default)]
pub struct FaultSettings {
    /// Faults apply only while this file exists: the test "fixes the cause" by deleting it.
    pub fault_while: Option<PathBuf>,
    /// Share (0 to 1) of inventory writes that fail with a transient error, half of them before
    /// the write and half after it committed (a timeout the caller cannot tell from a failure).
    pub store_failure_rate: f64,
    /// Extra copies of every admitted intent, sent after random delays of up to a second, so
    /// messages arrive more than once and out of order.
    pub duplicate_deliveries: u32,
    /// The event bus refuses every publication.
    pub bus_down: bool,
    /// Claims of this buyer's intents always fail (transiently): an intent that keeps failing.
    pub failing_buyer: Option<String>,
    /// Seeds every injected random choice (which writes fail, how long duplicates wait), so a
    /// failing fault test replays; random when unset.
    pub seed: Option<u64>,
}

impl FaultSettings {
    /// Whether any fault is configured.
    #[must_use]
    pub fn any(&self) -> bool {
        self.store_failure_rate > 0.0
            || self.duplicate_deliveries > 0
            || self.bus_down
            || self.failing_buyer.is_some()
    }

    fn active(&self) -> bool {
        self.fault_while.as_ref().is_none_or(|path| path.exists())
    }

    /// Wraps the ports of `backend` that the configured faults touch.
    #[must_use]
    pub fn inject(self, backend: Backend) -> Backend {
        if !self.any() {
            return backend;
        }
        let seed = self.seed.unwrap_or_else(|| fastrand::u64(..));
        tracing::warn!(faults = ?self, seed, "FAULT INJECTION IS ON: this process fails on purpose");
        wrappers::around(backend, self, seed)
    }
}
