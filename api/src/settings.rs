use std::net::SocketAddr;
use std::time::Duration;

use clap::Args;

/// The API process's own settings (the backend's are shared with the worker).
#[derive(Debug, Clone, Args)]
pub struct ApiSettings {
    /// Address to listen on; port 0 picks a free one (the bound address is logged).
    #[arg(long, env = "SEATCLAIM_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,

    /// Run the claim worker inside the API process (the one-command local setup). Turn off when
    /// `seatclaim-worker` runs as its own process.
    #[arg(long, env = "SEATCLAIM_EMBEDDED_WORKER", default_value_t = true, action = clap::ArgAction::Set)]
    pub embedded_worker: bool,

    /// Seconds to let in-flight requests finish after a stop signal before closing them.
    #[arg(long, env = "SEATCLAIM_SHUTDOWN_GRACE_SECS", default_value_t = 20)]
    pub shutdown_grace_secs: u64,
}

impl ApiSettings {
    /// The shutdown grace period.
    #[must_use]
    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_secs(self.shutdown_grace_secs)
    }
}
