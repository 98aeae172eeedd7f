//! A backend's own background tasks (`ports::Driver::tasks`: on AWS, the line counts' flusher
//! and a worker's settlements server), run beside the loops in every process that opens the
//! backend, and stopped with them: a backend starts nothing of its own.

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::warn;

use seatclaim_core::ports::BackgroundTask;

/// The running tasks of one opened backend.
pub struct BackendTasks {
    stop: CancellationToken,
    running: Vec<(&'static str, JoinHandle<()>)>,
}

impl BackendTasks {
    /// Starts each of `tasks` on a task of its own.
    #[must_use]
    pub fn start(tasks: Vec<BackgroundTask>) -> Self {
        let stop = CancellationToken::new();
        let running = tasks
            .into_iter()
            .map(|task| (task.name(), tokio::spawn(task.run(stop.clone()))))
            .collect();
        Self { stop, running }
    }

    /// Stops the tasks and waits for each to finish what it holds (a poll in hand, a last
    /// flush). A process calls it after its loops have stopped, so what they did last is
    /// served and counted.
    pub async fn stop(self) {
        self.stop.cancel();
        for (name, task) in self.running {
            if let Err(error) = task.await {
                warn!(%error, name, "a backend task ended abnormally");
            }
        }
    }
}
