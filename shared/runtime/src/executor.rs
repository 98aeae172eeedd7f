//! The tokio runtime the services run on, the same for the API and the worker.

/// Threads for blocking calls (SQLite's reads, on the embedded backend; its writes have a thread
/// of their own). A few readers can work at once, so more threads only wait on their locks, each
/// with its own stack and allocator heap; tokio's default allows 512, and the API ran 86 under
/// the benchmark's load.
pub const BLOCKING_THREADS: usize = 8;

/// A multi-threaded runtime with every driver, one worker thread per core and at most
/// [`BLOCKING_THREADS`] blocking threads.
///
/// # Errors
/// When the operating system refuses the threads or the I/O driver.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
}

/// Runs `service` to its end on a runtime from [`build`]: what a service's `main` does.
///
/// # Errors
/// When the runtime cannot start (see [`build`]); the service's own result is the `Ok` value.
pub fn run<F: Future>(service: F) -> std::io::Result<F::Output> {
    Ok(build()?.block_on(service))
}
