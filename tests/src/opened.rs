//! Backends a test opens outside a service, with their background tasks running as the runtime's
//! loops run them in one (`loops::BackendTasks`).

use seatclaim_core::Backend;
use seatclaim_core::ports::Opened;
use tokio_util::sync::CancellationToken;

/// The ports of `opened`, its background tasks started. Nothing stops them but the end of the
/// backend: each holds its store weakly (the AWS line counts' flusher and settlements server),
/// so they end once the test drops the backend, or with the test's runtime.
pub fn running(opened: Opened) -> Backend {
    for task in opened.tasks {
        tokio::spawn(task.run(CancellationToken::new()));
    }
    opened.backend
}
