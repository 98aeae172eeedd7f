//! Work that must never take a core from a reservation, run on a thread of its own at the lowest
//! CPU priority (nice 19).
//!
//! A seat map of 10,000 seats takes milliseconds of one core to render and compress, once per
//! snapshot. On a blocking-pool thread at the normal priority the kernel shares the core fairly
//! between it and the async workers, so the reservations that arrive while a storm of readers
//! has the map rebuilt wait behind it. At nice 19 the thread weighs 15 against a normal thread's
//! 1,024: it gets the core when nothing else wants it, and a worker that wakes takes the core
//! from it at once. Only work that holds no lock anyone else waits on belongs here (no database
//! read: a starved reader would keep SQLite's log from starting over).

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Sender};
use std::sync::{Mutex, PoisonError};

use tokio::sync::oneshot;

/// The nice value of the background thread: the lowest priority there is.
const LOWEST: i32 = 19;

type Job = Box<dyn FnOnce() + Send>;

/// One background thread, started at the first job.
#[derive(Default)]
pub struct Background {
    jobs: Mutex<Option<Sender<Job>>>,
}

/// The background thread could not be started, or ended before it answered.
#[derive(Debug, thiserror::Error)]
#[error("the background thread {0}")]
pub struct Unavailable(&'static str);

impl Background {
    /// Runs `work` on the background thread and waits (without blocking) for its result.
    pub async fn run<T, F>(&self, work: F) -> Result<T, Unavailable>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move || {
            // The caller may have stopped waiting; the result is then not needed.
            let _ = answer.send(work());
        });
        self.send(job)?;
        answered
            .await
            .map_err(|_| Unavailable("ended before it answered"))
    }

    fn send(&self, job: Job) -> Result<(), Unavailable> {
        let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        let sender = match jobs.as_ref() {
            Some(sender) => sender,
            None => jobs.insert(start()?),
        };
        sender.send(job).map_err(|_| Unavailable("has ended"))
    }
}

/// Starts the thread, which lowers its own priority and runs jobs until its sender is dropped. A
/// job that panics ends alone (its caller hears that no answer came); the thread goes on.
fn start() -> Result<Sender<Job>, Unavailable> {
    let (sender, jobs) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("seatclaim-background".into())
        .spawn(move || {
            lower_priority();
            for job in jobs {
                let _ = std::panic::catch_unwind(AssertUnwindSafe(job));
            }
        })
        .map_err(|_| Unavailable("could not be started"))?;
    Ok(sender)
}

/// Sets the calling thread's nice value to [`LOWEST`] (on Linux the nice value is a thread's
/// own). Where the kernel refuses, the thread runs at its normal priority, and a warning says so.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    if let Err(error) = rustix::process::setpriority_process(None, LOWEST) {
        tracing::warn!(%error, "the background thread keeps its normal priority");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn work_runs_at_the_lowest_priority_and_the_caller_keeps_its_own() {
        let background = Background::default();
        let nice = background
            .run(|| rustix::process::getpriority_process(None))
            .await
            .expect("answered")
            .expect("its priority");
        assert_eq!(nice, LOWEST);
        assert_eq!(
            rustix::process::getpriority_process(None).expect("ours"),
            0,
            "the caller's thread is untouched"
        );
    }

    #[tokio::test]
    async fn a_job_that_panics_ends_alone_and_the_thread_goes_on() {
        let background = Background::default();
        let panicked = background.run(|| -> u8 { panic!("a job's bug") }).await;
        assert!(panicked.is_err(), "its caller hears no answer came");
        assert_eq!(background.run(|| 7).await.expect("the same thread"), 7);
    }
}
