//! A backend opened outside a service (by a test, a benchmark or a tool), its background tasks
//! running as a service's loops (`loops::BackendTasks` in the runtime) would run them.

use tokio_util::sync::CancellationToken;

use crate::ports::{Backend, Opened};

/// The ports of `opened`, its background tasks started. Nothing stops them but the end of the
/// backend: each holds its store weakly (the AWS line counts' flusher and settlements server),
/// so they end once the last clone of the backend is dropped, or with the caller's runtime.
#[must_use]
pub fn running(opened: Opened) -> Backend {
    for task in opened.tasks {
        tokio::spawn(task.run(CancellationToken::new()));
    }
    opened.backend
}
