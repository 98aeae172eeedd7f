//! One batch decided and acknowledged at once, for the tests and tools that drive the worker's
//! steps by hand (the worker loop acknowledges a batch together with its next receive instead).

use crate::app::{BatchOutcome, Limits, decide_batch};
use crate::ports::{Backend, Delivery};

/// Decides `deliveries` under `limits`, then acknowledges the decided ones: a claim commits
/// before its message is acknowledged, so a failed acknowledgement only causes a redelivery,
/// which finds the job decided.
pub async fn process_batch(
    backend: &Backend,
    deliveries: Vec<Delivery>,
    limits: Limits,
) -> BatchOutcome {
    let (outcome, decided) = decide_batch(backend, deliveries, limits).await;
    if !decided.is_empty()
        && let Err(error) = backend.queue.delete(&decided).await
    {
        eprintln!(
            "could not acknowledge {} decided intents: {error}",
            decided.len()
        );
    }
    outcome
}
